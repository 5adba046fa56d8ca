package query

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
	"github.com/flusslite/fluss/tiering"
)

// TestStreamStartGolden runs testdata/stream_start: what a subscription
// plans to read first, per startup mode, over an engine with one
// segment per commit:
//
//	sql                input: statements, one a line
//	kv-snapshot table=T
//	                   a KV snapshot of every bucket of T now
//	tier table=T       one tiering round of T
//	drop-expired       drops the log segments older than table.log.ttl,
//	                   as an hour later would
//	plan mode=M [ts=now]
//	                   input: the SELECT; prints the state splits of a
//	                   full start, each bucket's start offset and what the
//	                   plan pins, then lets go of it (ts: a timestamp start
//	                   at a time after every commit so far)
//	subscribe mode=M   input: the SELECT; opens a subscription
//	offsets rows=N     reads N rows of the subscription and prints its
//	                   offsets
//	close              closes the subscription
func TestStreamStartGolden(t *testing.T) {
	opts := storage.DefaultOptions()
	opts.InMemory = true
	opts.KvSnapshotInterval = 0
	opts.SegmentBytes = 1
	eng, err := storage.Open(opts)
	require.NoError(t, err)
	lk, err := lake.Open(lake.Options{InMemory: true})
	require.NoError(t, err)
	tier := tiering.New(eng, lk, tiering.Options{})
	t.Cleanup(func() {
		require.NoError(t, tier.Close())
		require.NoError(t, lk.Close())
		require.NoError(t, eng.Close())
	})
	session := func() *Session {
		return NewSession(Session{Engine: eng, Lake: lk, Tiering: tier, Database: metadata.DefaultDatabase})
	}
	ctx := context.Background()
	var sub *Subscription
	t.Cleanup(func() {
		if sub != nil {
			sub.Close()
		}
	})
	bind := func(t *testing.T, text string) *sqlplan.Select {
		st, err := sqlplan.Parse(strings.TrimSpace(text))
		require.NoError(t, err)
		sel, ok := st.(*sqlplan.Select)
		require.True(t, ok, text)
		return sel
	}
	request := func(t *testing.T, d *datadriven.TestData) StreamRequest {
		var mode string
		d.ScanArgs(t, "mode", &mode)
		req := StreamRequest{Mode: StartupMode(mode)}
		if d.HasArg("ts") {
			// now: a millisecond after every commit so far.
			time.Sleep(2 * time.Millisecond)
			req.Timestamp = time.Now().UnixMilli()
		}
		return req
	}
	datadriven.RunTest(t, "testdata/stream_start", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "sql":
			s := session()
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				st, err := sqlplan.Parse(line)
				require.NoError(t, err, line)
				_, err = s.Run(ctx, st, nil)
				require.NoError(t, err, line)
			}
			return ""
		case "kv-snapshot":
			var table string
			d.ScanArgs(t, "table", &table)
			_, err := eng.TakeKvSnapshots(ctx, metadata.TablePath{Database: metadata.DefaultDatabase, Table: table})
			require.NoError(t, err)
			return ""
		case "tier":
			var table string
			d.ScanArgs(t, "table", &table)
			id, err := tier.Tier(ctx, metadata.TablePath{Database: metadata.DefaultDatabase, Table: table})
			require.NoError(t, err)
			return fmt.Sprintf("lake snapshot %d\n", id)
		case "drop-expired":
			n, err := eng.DropExpired(ctx, time.Now().Add(time.Hour+time.Minute))
			require.NoError(t, err)
			return fmt.Sprintf("dropped %d segments\n", n)
		case "plan":
			s := session()
			sp, err := s.bindSelect(ctx, bind(t, d.Input), nil)
			require.NoError(t, err)
			st, base, opts, err := s.planStream(ctx, sp, request(t, d))
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			defer st.unpin()
			var b strings.Builder
			for _, split := range opts.Snapshot {
				fmt.Fprintf(&b, "state: %s\n", split)
			}
			if len(opts.Snapshot) == 0 {
				b.WriteString("no state\n")
			}
			b.WriteString(startLines(s, base, opts.Start))
			pins := eng.Pins()
			fmt.Fprintf(&b, "pins: read-views=%d kv-snapshots=%d\n", pins.ReadViews, pins.KvSnapshots)
			return b.String()
		case "subscribe":
			require.Nil(t, sub, "one subscription at a time")
			var err error
			sub, err = session().Subscribe(ctx, bind(t, d.Input), nil, request(t, d))
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return ""
		case "offsets":
			var want int
			d.ScanArgs(t, "rows", &want)
			wait, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			rows := 0
			for rows < want {
				b, _, err := sub.Next(wait)
				require.NoError(t, err, "after %d of %d rows", rows, want)
				rows += b.NumRows()
			}
			require.Equal(t, want, rows)
			off, err := sub.Offsets()
			require.NoError(t, err)
			return startLines(session(), *sub.Table(), off)
		case "close":
			require.NoError(t, sub.Close())
			sub = nil
			return ""
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// startLines renders per-bucket offsets in bucket order, by partition
// name.
func startLines(s *Session, table metadata.TableInfo, offsets map[metadata.TableBucket]int64) string {
	names := map[int64]string{metadata.NonPartitioned: "-"}
	if table.IsPartitioned() {
		parts, _ := s.Engine.ListPartitions(context.Background(), table.Path)
		for _, p := range parts {
			names[p.ID] = p.Name
		}
	}
	buckets := slices.SortedFunc(maps.Keys(offsets), func(a, b metadata.TableBucket) int {
		return cmp.Or(cmp.Compare(a.PartitionID, b.PartitionID), cmp.Compare(a.Bucket, b.Bucket))
	})
	var b strings.Builder
	for _, tb := range buckets {
		name, ok := names[tb.PartitionID]
		if !ok {
			name = fmt.Sprintf("dropped(%d)", tb.PartitionID)
		}
		fmt.Fprintf(&b, "start: partition=%s bucket=%d offset=%d\n", name, tb.Bucket, offsets[tb])
	}
	if len(buckets) == 0 {
		b.WriteString("no buckets\n")
	}
	return b.String()
}
