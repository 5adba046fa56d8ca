package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// Auto-partitioning (Fluss's AutoPartitionManager): for each table with
// table.auto-partition.enabled, the partitions of the current time unit
// and the num-precreate - 1 after it are created ahead, and those whose
// time value sorts before the name of the unit num-retention units back
// are dropped (a negative num-retention never drops). It runs at Open,
// every Options.AutoPartitionInterval and on AutoPartition, by
// Options.Clock. A write that would create a partition retention has
// already dropped is refused (autoPartitionRefuses).

// AutoPartitionResult is what one auto-partitioning pass did to a table.
type AutoPartitionResult struct {
	Created, Dropped []string
}

// AutoPartition runs auto-partitioning for one table now (CALL
// sys.auto_partition): ErrInvalidOption when the table does not have it
// enabled.
func (e *Engine) AutoPartition(ctx context.Context, path metadata.TablePath) (AutoPartitionResult, error) {
	info, err := e.TableInfo(ctx, path)
	if err != nil {
		return AutoPartitionResult{}, err
	}
	if !info.Config.AutoPartition.Enabled {
		return AutoPartitionResult{}, fmt.Errorf("%w: table %s does not have %s = 'true'", metadata.ErrInvalidOption, path, metadata.OptAutoPartitionEnabled)
	}
	return e.autoPartition(ctx, &info, e.opts.Clock())
}

// autoPartitionAll runs auto-partitioning for every table that has it,
// logging what fails.
func (e *Engine) autoPartitionAll(ctx context.Context) {
	cat, err := e.readLock()
	if err != nil {
		return
	}
	var tables []metadata.TableInfo
	for _, t := range cat.byID {
		if t.Info.Config.AutoPartition.Enabled {
			tables = append(tables, t.Info)
		}
	}
	e.mu.RUnlock()
	slices.SortFunc(tables, func(a, b metadata.TableInfo) int { return strings.Compare(a.Path.String(), b.Path.String()) })
	now := e.opts.Clock()
	for i := range tables {
		res, err := e.autoPartition(ctx, &tables[i], now)
		if err != nil {
			e.opts.Logger.Error("auto-partitioning failed", "table", tables[i].Path.String(), "err", err)
			continue
		}
		if len(res.Created)+len(res.Dropped) > 0 {
			e.opts.Logger.Info("auto-partitioned", "table", tables[i].Path.String(), "created", res.Created, "dropped", res.Dropped)
		}
	}
}

// autoBounds returns the names of the partitions to have at now, and the
// name below which partitions are past retention ("" when none are).
func autoBounds(ap *metadata.AutoPartition, now time.Time) (ahead []string, below string, err error) {
	loc, err := ap.Location()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", metadata.OptAutoPartitionTimeZone, err)
	}
	start := ap.UnitStart(now, loc)
	for i := range ap.NumPrecreate {
		ahead = append(ahead, ap.PartitionName(ap.AddUnits(start, i)))
	}
	if ap.NumRetention >= 0 {
		below = ap.PartitionName(ap.AddUnits(start, -ap.NumRetention))
	}
	return ahead, below, nil
}

// autoKey is the place of the table's auto-partition key among its
// partition keys.
func autoKey(info *metadata.TableInfo) int {
	return slices.IndexFunc(info.PartitionKeys, func(k string) bool { return strings.EqualFold(k, info.Config.AutoPartition.Key) })
}

func (e *Engine) autoPartition(ctx context.Context, info *metadata.TableInfo, now time.Time) (AutoPartitionResult, error) {
	var res AutoPartitionResult
	ap := &info.Config.AutoPartition
	ahead, below, err := autoBounds(ap, now)
	if err != nil {
		return res, fmt.Errorf("auto-partition %s: %w", info.Path, err)
	}
	parts, err := e.ListPartitions(ctx, info.Path)
	if err != nil {
		return res, err
	}
	k := autoKey(info)
	have := map[string]bool{}
	for _, p := range parts {
		have[p.Name] = true
		if below == "" || p.Values[k] >= below {
			continue
		}
		spec := map[string]string{}
		for i, key := range info.PartitionKeys {
			spec[key] = p.Values[i]
		}
		if err := e.DropPartition(ctx, info.Path, spec, true); err != nil {
			return res, fmt.Errorf("auto-partition %s: drop %s: %w", info.Path, p.Name, err)
		}
		res.Dropped = append(res.Dropped, p.Name)
	}
	if len(info.PartitionKeys) == 1 {
		for _, name := range ahead {
			if have[name] {
				continue
			}
			if _, err := e.CreatePartition(ctx, info.Path, map[string]string{info.PartitionKeys[0]: name}, true); err != nil {
				return res, fmt.Errorf("auto-partition %s: create %s: %w", info.Path, name, err)
			}
			res.Created = append(res.Created, name)
		}
	}
	return res, nil
}

// autoPartitionRefuses is the error of a write that would create the
// partition of values in a table whose auto-partition retention has
// already dropped it; nil otherwise.
func (e *Engine) autoPartitionRefuses(info *metadata.TableInfo, values []string) error {
	ap := &info.Config.AutoPartition
	if !ap.Enabled || ap.NumRetention < 0 {
		return nil
	}
	_, below, err := autoBounds(ap, e.opts.Clock())
	if err != nil || below == "" {
		return err
	}
	if v := values[autoKey(info)]; v < below {
		return fmt.Errorf("%w: partition %s of %s is past the table's auto-partition retention (%s = %d %s units: partitions before %s are dropped), so a write does not create it again",
			metadata.ErrConstraint, metadata.PartitionName(values), info.Path, metadata.OptAutoPartitionNumRetention, ap.NumRetention, ap.TimeUnit, below)
	}
	return nil
}
