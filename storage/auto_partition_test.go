package storage

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// autoPartitions lists a table's partitions by name, in order.
func autoPartitions(t *testing.T, e *Engine, table string) []string {
	t.Helper()
	parts, err := e.ListPartitions(ctx, path(table))
	require.NoError(t, err)
	var out []string
	for _, p := range parts {
		out = append(out, p.Name)
	}
	return out
}

// movableClock is a clock tests set.
type movableClock struct{ now atomic.Int64 }

func (c *movableClock) set(t time.Time) { c.now.Store(t.UnixNano()) }
func (c *movableClock) get() time.Time  { return time.Unix(0, c.now.Load()).UTC() }

func autoColumns() []metadata.Column {
	return []metadata.Column{col("dt", metadata.StringType()), col("v", metadata.BigIntType())}
}

// Partitions are created ahead and dropped behind as the clock moves: at
// CREATE TABLE, on CALL sys.auto_partition and at Open (after a long
// pause, at once); a write to a partition retention dropped is refused,
// one ahead of the precreated ones creates it.
func TestAutoPartitionCreatesAheadAndDropsBehind(t *testing.T) {
	dir := t.TempDir()
	clock := &movableClock{}
	clock.set(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	open := func() *Engine {
		e, _ := testEngine(t, dir, func(o *Options) { o.Clock = clock.get })
		return e
	}
	e := open()
	createTable(t, e, "t", autoColumns(), []string{"dt"}, map[string]string{
		metadata.OptAutoPartitionEnabled: "true", metadata.OptAutoPartitionTimeUnit: "day",
		metadata.OptAutoPartitionTimeZone: "UTC", metadata.OptAutoPartitionNumPrecreate: "3",
		metadata.OptAutoPartitionNumRetention: "2",
	})
	require.Equal(t, []string{"20260310", "20260311", "20260312"}, autoPartitions(t, e, "t"))
	appendRows(t, e, "t", [][]any{{"20260310", int64(1)}})

	clock.set(time.Date(2026, 3, 13, 0, 30, 0, 0, time.UTC))
	res, err := e.AutoPartition(ctx, path("t"))
	require.NoError(t, err)
	require.Equal(t, []string{"20260313", "20260314", "20260315"}, res.Created)
	require.Equal(t, []string{"20260310"}, res.Dropped, "before 20260311, two days back")
	require.Equal(t, []string{"20260311", "20260312", "20260313", "20260314", "20260315"}, autoPartitions(t, e, "t"))

	// A write to a dropped day is refused, not a partition made again;
	// a day ahead of the precreated ones is created by the write.
	_, err = e.Append(ctx, path("t"), [][]any{{"20260310", int64(2)}})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "partition 20260310 of fluss.t is past the table's auto-partition retention")
	appendRows(t, e, "t", [][]any{{"20260320", int64(3)}, {"20260311", int64(4)}})
	require.Contains(t, autoPartitions(t, e, "t"), "20260320")

	// A reopen after a month catches up at once.
	require.NoError(t, e.Close())
	clock.set(time.Date(2026, 4, 15, 9, 0, 0, 0, time.UTC))
	e = open()
	require.Equal(t, []string{"20260415", "20260416", "20260417"}, autoPartitions(t, e, "t"))

	// Altered: more days ahead, fewer behind, at once; disabled: the
	// partitions stay as they are.
	_, err = e.AlterTable(ctx, path("t"), map[string]string{metadata.OptAutoPartitionNumPrecreate: "4", metadata.OptAutoPartitionNumRetention: "0"})
	require.NoError(t, err)
	require.Equal(t, []string{"20260415", "20260416", "20260417", "20260418"}, autoPartitions(t, e, "t"))
	_, err = e.AlterTable(ctx, path("t"), map[string]string{metadata.OptAutoPartitionEnabled: "false"})
	require.NoError(t, err)
	clock.set(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, e.Close())
	e = open()
	require.Equal(t, []string{"20260415", "20260416", "20260417", "20260418"}, autoPartitions(t, e, "t"))

	// Not enabled: the procedure says so.
	createTable(t, e, "plain", autoColumns(), []string{"dt"}, nil)
	_, err = e.AutoPartition(ctx, path("plain"))
	require.ErrorIs(t, err, metadata.ErrInvalidOption)
}

// Each time unit's names, a time format of one's own, a time zone, a
// negative retention that never drops, and the rules of several
// partition keys.
func TestAutoPartitionUnitsFormatsAndKeys(t *testing.T) {
	clock := &movableClock{}
	clock.set(time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC))
	e, _ := testEngine(t, "", func(o *Options) { o.Clock = clock.get })
	for _, c := range []struct {
		unit, zone, format string
		want               []string
	}{
		{"HOUR", "UTC", "", []string{"2026113022", "2026113023", "2026120100"}},
		{"DAY", "UTC", "", []string{"20261130", "20261201", "20261202"}},
		{"DAY", "Asia/Tokyo", "", []string{"20261201", "20261202", "20261203"}},
		{"DAY", "UTC", "yyyy-MM-dd", []string{"2026-11-30", "2026-12-01", "2026-12-02"}},
		{"MONTH", "UTC", "", []string{"202611", "202612", "202701"}},
		{"QUARTER", "UTC", "", []string{"20264", "20271", "20272"}},
		{"YEAR", "UTC", "", []string{"2026", "2027", "2028"}},
	} {
		name := "t_" + c.unit + "_" + map[string]string{"UTC": "utc", "Asia/Tokyo": "tokyo"}[c.zone]
		if c.format != "" {
			name += "_fmt"
		}
		opts := map[string]string{
			metadata.OptAutoPartitionEnabled: "true", metadata.OptAutoPartitionTimeUnit: c.unit,
			metadata.OptAutoPartitionTimeZone: c.zone, metadata.OptAutoPartitionNumPrecreate: "3",
		}
		if c.format != "" {
			opts[metadata.OptAutoPartitionTimeFormat] = c.format
		}
		createTable(t, e, name, autoColumns(), []string{"dt"}, opts)
		require.Equal(t, c.want, autoPartitions(t, e, name), "%s %s %s", c.unit, c.zone, c.format)
	}

	// A negative retention never drops.
	createTable(t, e, "keep", autoColumns(), []string{"dt"}, map[string]string{
		metadata.OptAutoPartitionEnabled: "true", metadata.OptAutoPartitionTimeZone: "UTC",
		metadata.OptAutoPartitionNumRetention: "-1", metadata.OptAutoPartitionNumPrecreate: "1",
	})
	clock.set(time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC))
	_, err := e.AutoPartition(ctx, path("keep"))
	require.NoError(t, err)
	require.Equal(t, []string{"20261130", "20270601"}, autoPartitions(t, e, "keep"))

	// Several partition keys: nothing is created ahead (a positive
	// num-precreate is refused, in Fluss's words), retention drops by
	// the time key.
	multi := []metadata.Column{col("region", metadata.StringType()), col("dt", metadata.StringType()), col("v", metadata.BigIntType())}
	_, err = e.CreateTable(ctx, metadata.TableDescriptor{Path: path("m1"), Schema: metadata.Schema{Columns: multi}, PartitionKeys: []string{"region", "dt"},
		Options: map[string]string{metadata.OptAutoPartitionEnabled: "true", metadata.OptAutoPartitionKey: "dt", metadata.OptAutoPartitionNumPrecreate: "2"}}, false)
	require.ErrorContains(t, err, "For a partitioned table with multiple partition keys, auto pre-create is unsupported and this value must be set to 0, but is 2")
	createTable(t, e, "m", multi, []string{"region", "dt"}, map[string]string{
		metadata.OptAutoPartitionEnabled: "true", metadata.OptAutoPartitionKey: "dt",
		metadata.OptAutoPartitionTimeZone: "UTC", metadata.OptAutoPartitionNumRetention: "1",
	})
	require.Empty(t, autoPartitions(t, e, "m"))
	appendRows(t, e, "m", [][]any{{"eu", "20270531", int64(1)}, {"us", "20270601", int64(2)}, {"eu", "20270601", int64(3)}})
	clock.set(time.Date(2027, 6, 2, 8, 0, 0, 0, time.UTC))
	res, err := e.AutoPartition(ctx, path("m"))
	require.NoError(t, err)
	require.Equal(t, []string{"eu$20270531"}, res.Dropped)
	require.Empty(t, res.Created)
}
