package sqlplan

import (
	"context"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Virtual tables are named after a real table with a '$' suffix, which
// table names cannot contain: `t$changelog` reads t's log with change
// metadata. Queries bind against the virtual schema; the plan keeps the
// real table as SelectPlan.Base.
const (
	// VirtualChangelog is SelectPlan.Virtual for `t$changelog`.
	VirtualChangelog = "changelog"
	// VirtualLake is SelectPlan.Virtual for `t$lake`: the readable lake
	// snapshot alone, with the base table's columns.
	VirtualLake = "lake"
)

// Names of the metadata columns that `t$changelog` puts before the
// table's columns, in this order.
const (
	ChangeTypeColumn      = "_change_type"
	LogOffsetColumn       = "_log_offset"
	CommitTimestampColumn = "_commit_timestamp"
	// NumChangelogMetaColumns is the number of those columns: column i
	// of the base table is column i+NumChangelogMetaColumns of
	// `t$changelog`.
	NumChangelogMetaColumns = 3
)

// ChangelogTable returns the virtual table `t$changelog` of base: the
// columns _change_type STRING NOT NULL ('insert' for log tables;
// 'insert', 'update_before', 'update_after', 'delete' for primary-key
// tables), _log_offset BIGINT NOT NULL and
// _commit_timestamp TIMESTAMP_LTZ(3) NOT NULL, then base's columns. The
// changelog is a log: it has no primary key. Partition and bucket keys
// keep their names, so they still name the same columns. The metadata
// columns have the ids -1, -2, -3, which no stored column has.
func ChangelogTable(base metadata.TableInfo) metadata.TableInfo {
	out := base
	out.Path.Table = base.Path.Table + "$" + VirtualChangelog
	cols := make([]metadata.Column, 0, NumChangelogMetaColumns+len(base.Schema.Columns))
	cols = append(cols,
		metadata.Column{Name: ChangeTypeColumn, Type: metadata.StringType(), NotNull: true, ID: -1},
		metadata.Column{Name: LogOffsetColumn, Type: metadata.BigIntType(), NotNull: true, ID: -2},
		metadata.Column{Name: CommitTimestampColumn, Type: metadata.TimestampLTZType(3), NotNull: true, ID: -3},
	)
	cols = append(cols, base.Schema.Columns...)
	out.Schema = metadata.Schema{Columns: cols}
	return out
}

// qualify fills in the database of an unqualified path.
func qualify(path metadata.TablePath, currentDB string) metadata.TablePath {
	if path.Database == "" {
		path.Database = currentDB
		if path.Database == "" {
			path.Database = metadata.DefaultDatabase
		}
	}
	return path
}

// splitVirtual splits `t$suffix` into t and the lower-cased suffix; ok is
// false for a name without '$'.
func splitVirtual(name string) (base, suffix string, ok bool) {
	base, suffix, ok = strings.Cut(name, "$")
	return base, strings.ToLower(suffix), ok
}

// resolveRead resolves the table a query reads, real or virtual, into
// plan.Table (and plan.Virtual and plan.Base for a virtual one).
func resolveRead(ctx context.Context, cat Catalog, path metadata.TablePath, currentDB string, plan *SelectPlan) error {
	path = qualify(path, currentDB)
	baseName, suffix, virtual := splitVirtual(path.Table)
	if !virtual {
		info, err := resolveTable(ctx, cat, path, currentDB)
		plan.Table = info
		return err
	}
	if suffix != VirtualChangelog && suffix != VirtualLake {
		return errorf(metadata.ErrNotFound, "table %s does not exist: $%s is no virtual table (known: $%s, $%s)",
			path, suffix, VirtualChangelog, VirtualLake)
	}
	base, err := resolveTable(ctx, cat, metadata.TablePath{Database: path.Database, Table: baseName}, currentDB)
	if err != nil {
		return err
	}
	if suffix == VirtualLake {
		if !base.Config.DatalakeEnabled {
			return errorf(metadata.ErrUnsupported, "%s: table %s is not lake-enabled (set 'table.datalake.enabled' = 'true')", path, base.Path)
		}
		lakeTable := base
		lakeTable.Path.Table = base.Path.Table + "$" + VirtualLake
		plan.Virtual, plan.Base, plan.Table = VirtualLake, base, lakeTable
		return nil
	}
	plan.Virtual, plan.Base, plan.Table = VirtualChangelog, base, ChangelogTable(base)
	return nil
}

// refuseVirtualWrite refuses INSERT, UPDATE and DELETE on a virtual table;
// verb is the statement's opening words ("INSERT INTO").
func refuseVirtualWrite(verb string, path metadata.TablePath, currentDB string) error {
	if _, _, virtual := splitVirtual(path.Table); virtual {
		return errorf(metadata.ErrUnsupported, "cannot %s virtual table %s: virtual tables are read-only", verb, qualify(path, currentDB))
	}
	return nil
}
