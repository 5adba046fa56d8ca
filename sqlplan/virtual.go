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
	// VirtualBinlog is SelectPlan.Virtual for `t$binlog`: a primary-key
	// table's changes, an update's two images in one row.
	VirtualBinlog = "binlog"
	// VirtualLakeSnapshots is SelectPlan.Virtual for `t$lake$snapshots`:
	// one row per lake snapshot the lake keeps (LakeSnapshotsTable).
	VirtualLakeSnapshots = "lake$snapshots"
)

// LakeSnapshotsTable returns the virtual table `t$lake$snapshots` of
// base, a lake-enabled table: one row per snapshot the lake keeps, with
// snapshot_id BIGINT, committed_at TIMESTAMP_LTZ(3), files BIGINT (the
// data files it lists), rows BIGINT, bytes BIGINT, tiered_offsets STRING
// ("partition/bucket:offset" per bucket, comma-separated; "bucket:offset"
// without partitions) and readable BOOLEAN (the snapshot readers plan
// from). It has no keys.
func LakeSnapshotsTable(base metadata.TableInfo) metadata.TableInfo {
	out := base
	out.Path.Table = base.Path.Table + "$" + VirtualLakeSnapshots
	out.Schema = metadata.Schema{Columns: []metadata.Column{
		{Name: "snapshot_id", Type: metadata.BigIntType(), NotNull: true, ID: -1},
		{Name: "committed_at", Type: metadata.TimestampLTZType(3), NotNull: true, ID: -2},
		{Name: "files", Type: metadata.BigIntType(), NotNull: true, ID: -3},
		{Name: "rows", Type: metadata.BigIntType(), NotNull: true, ID: -4},
		{Name: "bytes", Type: metadata.BigIntType(), NotNull: true, ID: -5},
		{Name: "tiered_offsets", Type: metadata.StringType(), NotNull: true, ID: -6},
		{Name: "readable", Type: metadata.BooleanType(), NotNull: true, ID: -7},
	}}
	out.PartitionKeys, out.BucketKeys, out.Indexes, out.ForeignKeys, out.PastSchemas = nil, nil, nil, nil, nil
	out.Options, out.Config = nil, metadata.TableConfig{}
	return out
}

// Names of the ROW columns of `t$binlog`, after its metadata columns.
const (
	BeforeColumn = "before"
	AfterColumn  = "after"
)

// BinlogTable returns the virtual table `t$binlog` of base, a primary-key
// table: _change_type STRING NOT NULL ('insert', 'update', 'delete'),
// _log_offset BIGINT NOT NULL, _commit_timestamp TIMESTAMP_LTZ(3) NOT
// NULL, then before and after, nullable ROW columns with base's columns
// as fields (before is NULL for an insert, after for a delete). It has no
// primary, partition or bucket key: none of its columns is one. The
// columns have the ids -1 to -5, which no stored column has.
func BinlogTable(base metadata.TableInfo) metadata.TableInfo {
	out := base
	out.Path.Table = base.Path.Table + "$" + VirtualBinlog
	fields := make([]metadata.Field, len(base.Schema.Columns))
	for i, c := range base.Schema.Columns {
		fields[i] = metadata.Field{Name: c.Name, Type: c.Type}
	}
	row := metadata.RowType(fields...)
	out.Schema = metadata.Schema{Columns: []metadata.Column{
		{Name: ChangeTypeColumn, Type: metadata.StringType(), NotNull: true, ID: -1},
		{Name: LogOffsetColumn, Type: metadata.BigIntType(), NotNull: true, ID: -2},
		{Name: CommitTimestampColumn, Type: metadata.TimestampLTZType(3), NotNull: true, ID: -3},
		{Name: BeforeColumn, Type: row, ID: -4},
		{Name: AfterColumn, Type: row, ID: -5},
	}}
	out.PartitionKeys, out.BucketKeys, out.Indexes, out.ForeignKeys = nil, nil, nil, nil
	return out
}

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
	if suffix != VirtualChangelog && suffix != VirtualLake && suffix != VirtualBinlog && suffix != VirtualLakeSnapshots {
		return errorf(metadata.ErrNotFound, "table %s does not exist: $%s is no virtual table (known: $%s, $%s, $%s, $%s)",
			path, suffix, VirtualChangelog, VirtualBinlog, VirtualLake, VirtualLakeSnapshots)
	}
	base, err := resolveTable(ctx, cat, metadata.TablePath{Database: path.Database, Table: baseName}, currentDB)
	if err != nil {
		return err
	}
	if suffix == VirtualLakeSnapshots {
		if !base.Config.DatalakeEnabled {
			return errorf(metadata.ErrUnsupported, "%s: table %s is not lake-enabled (set 'table.datalake.enabled' = 'true')", path, base.Path)
		}
		plan.Virtual, plan.Base, plan.Table = VirtualLakeSnapshots, base, LakeSnapshotsTable(base)
		return nil
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
	if suffix == VirtualBinlog {
		if !base.HasPrimaryKey() {
			return errorf(metadata.ErrUnsupported, "%s: $%s is only supported for primary-key tables, and %s is a log table (read %s$%s)",
				path, VirtualBinlog, base.Path, base.Path.Table, VirtualChangelog)
		}
		if base.Config.ChangelogImage == "WAL" {
			return errorf(metadata.ErrUnsupported, "%s: table %s writes the 'WAL' changelog image ('table.changelog.image'), whose updates have "+
				"no update_before image to pair with: read %s$%s", path, base.Path, base.Path.Table, VirtualChangelog)
		}
		plan.Virtual, plan.Base, plan.Table = VirtualBinlog, base, BinlogTable(base)
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
