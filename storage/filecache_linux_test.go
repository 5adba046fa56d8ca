package storage

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// fdChildDir names the directory of TestOpenFilesBounded's child: the
// test binary run again with this variable set, under a lowered limit on
// open files.
const fdChildDir = "FLUSS_TEST_FD_DIR"

// fdLimit is the child's RLIMIT_NOFILE.
const fdLimit = 256

var fdPartitions = flag.Int("fd.partitions", 3000, "partitions of one bucket each TestOpenFilesBounded writes under 256 descriptors (10000 for the full size)")

// Every bucket's active segment held a descriptor for as long as the
// engine was open, so 10,000 partitions held 10,020 files and under a
// lower limit the engine could neither create nor open them. The segment
// files are now a bounded cache: with the default (a quarter of the
// limit) -fd.partitions partitions are written, read, reopened and written
// again under fdLimit descriptors.
func TestOpenFilesBounded(t *testing.T) {
	if dir := os.Getenv(fdChildDir); dir != "" {
		fdChild(t, dir)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenFilesBounded$", "-test.count=1", "-test.v", fmt.Sprintf("-fd.partitions=%d", *fdPartitions))
	cmd.Env = append(os.Environ(), fdChildDir+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child under RLIMIT_NOFILE=%d:\n%s", fdLimit, out)
	t.Logf("child:\n%s", out)
}

func fdChild(t *testing.T, dir string) {
	lim := syscall.Rlimit{Cur: fdLimit, Max: fdLimit}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	base := openDescriptors(t)
	// Each round's appends are read back by the next.
	check := func(e *Engine, rounds int) {
		t.Helper()
		parts, err := e.ListPartitions(ctx, path("ev"))
		require.NoError(t, err)
		require.Len(t, parts, *fdPartitions)
		info, err := e.TableInfo(ctx, path("ev"))
		require.NoError(t, err)
		for _, p := range parts {
			tb := metadata.TableBucket{TableID: info.TableID, PartitionID: p.ID, Bucket: 0}
			r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
			require.NoError(t, err)
			var n int64
			for r.Next() {
				n += r.Batch().Record.NumRows()
			}
			require.NoError(t, r.Err())
			require.NoError(t, r.Close())
			require.Equal(t, int64(rounds), n, "rows of partition %s", p.Name)
		}
	}
	write := func(e *Engine) {
		t.Helper()
		rows := make([][]any, *fdPartitions)
		for i := range rows {
			rows[i] = []any{int64(i), fmt.Sprintf("p%04d", i)}
		}
		appendRows(t, e, "ev", rows)
	}
	bounded := func(e *Engine, when string) {
		t.Helper()
		limit := e.opts.MaxOpenSegments
		require.Equal(t, fdLimit/4, limit, "the default follows the descriptor limit")
		require.LessOrEqual(t, e.opts.segmentFiles.openFiles(), limit, when)
		// The KV store, the commit journal and the lock hold a few more.
		require.Less(t, openDescriptors(t)-base, limit+64, "descriptors %s", when)
	}

	// Without fsync the test takes seconds, not half a minute; the
	// descriptors are the same.
	nosync := func(o *Options) { o.Sync = false }
	start := time.Now()
	func() {
		e, _ := testEngine(t, dir, nosync)
		defer e.Close()
		createTable(t, e, "ev", []metadata.Column{
			col("id", metadata.BigIntType()),
			col("p", metadata.StringType()),
		}, []string{"p"}, nil)
		write(e)
		bounded(e, "after creating the partitions")
		check(e, 1)
		bounded(e, "after reading them")
	}()
	e, _ := testEngine(t, dir, nosync)
	bounded(e, "after reopening")
	check(e, 1)
	write(e)
	check(e, 2)
	bounded(e, "after writing again")
	t.Logf("%d partitions under RLIMIT_NOFILE=%d in %s, %d descriptors above the start", *fdPartitions, fdLimit, time.Since(start).Round(time.Millisecond), openDescriptors(t)-base)
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("/proc", "self", "fd"))
	require.NoError(t, err)
	return len(ents)
}
