package storage

import (
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// holdFS holds the fsyncs of the commit journal while armed: each one
// reports on entered and waits for release.
type holdFS struct {
	FS
	armed   atomic.Bool
	syncs   atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func newHoldFS() *holdFS {
	return &holdFS{FS: NewMemFS(), entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (f *holdFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, journalFile) {
		return file, err
	}
	return &holdFile{File: file, fs: f}, nil
}

type holdFile struct {
	File
	fs *holdFS
}

func (f *holdFile) Sync() error {
	f.fs.syncs.Add(1)
	if f.fs.armed.Load() {
		f.fs.entered <- struct{}{}
		<-f.fs.release
	}
	return f.File.Sync()
}

// within waits for done, failing the test when it takes longer than a
// deadlock would allow.
func within(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still waiting after 20s", what)
	}
}

// groupMember prepares and routes writes as commitLocked does, for a test
// that applies members itself.
func groupMember(t *testing.T, e *Engine, view *ReadView, writes ...Write) *commitMember {
	t.Helper()
	preps, err := e.prepareWrites(writes)
	require.NoError(t, err)
	cat, err := e.readLock()
	require.NoError(t, err)
	entries := make([]*tableEntry, len(preps))
	for i, p := range preps {
		entries[i], err = cat.table(p.w.Path)
		require.NoError(t, err)
	}
	e.mu.RUnlock()
	buckets, dest, err := e.routeCommit(preps, entries)
	require.NoError(t, err)
	return &commitMember{preps: preps, entries: entries, view: view, buckets: buckets, dest: dest}
}

func upsertWrite(table string, rows ...[]any) Write {
	return Write{Path: path(table), Kind: WriteUpsert, Rows: rows}
}

// TestCommitGroupMembers: the members of a group are merged in order,
// each over what the ones before it left; one that fails (here a
// transaction that writes a key an earlier member wrote) fails alone and
// takes back everything it had merged, also its writes to other keys;
// the others are applied, in one batch per bucket, and record their keys
// for the transactions open.
func TestCommitGroupMembers(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	stale, err := e.WriteView(ctx) // cut before the group: conflicts with it
	require.NoError(t, err)
	defer stale.Close()
	other := txBuffer(t, e)
	bufUpsert(t, other, "kv", []any{"c", 3, int64(33)})
	before, err := e.ListOffsets(ctx, []metadata.TableBucket{{TableID: tableID(t, e, "kv"), PartitionID: metadata.NonPartitioned}}, metadata.OffsetLatest)
	require.NoError(t, err)

	m1 := groupMember(t, e, nil, upsertWrite("kv", []any{"a", 1, int64(11)}, []any{"c", 3, int64(30)}))
	m2 := groupMember(t, e, stale, upsertWrite("kv", []any{"b", 2, int64(21)}, []any{"a", 1, int64(12)}))
	m3 := groupMember(t, e, nil, upsertWrite("kv", []any{"b", 2, int64(22)}))
	e.commitMembers([]*commitMember{m1, m2, m3})

	require.NoError(t, m1.err)
	require.ErrorIs(t, m2.err, metadata.ErrConflict, "m2 writes key 1, which m1 wrote after m2's view")
	require.NoError(t, m3.err)
	require.EqualValues(t, 2, m1.res[0].RowsAffected)
	require.EqualValues(t, 1, m3.res[0].RowsAffected)
	for id, want := range map[int]int64{1: 11, 2: 22, 3: 30} {
		n, found := lookupN(t, e, "kv", id)
		require.True(t, found, "key %d", id)
		require.Equal(t, want, n, "key %d", id)
	}
	// The log holds m1's -U/+U of key 1 and +I of key 3, and m3's +I of
	// key 2 (not a +U over m2's taken-back row): four records.
	after, err := e.ListOffsets(ctx, slicesKeys(before), metadata.OffsetLatest)
	require.NoError(t, err)
	for tb, off := range before {
		require.Equal(t, off+4, after[tb])
	}
	// m1's keys were recorded: a transaction begun before loses on them.
	_, err = other.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
}

func tableID(t *testing.T, e *Engine, name string) int64 {
	t.Helper()
	info, err := e.TableInfo(ctx, path(name))
	require.NoError(t, err)
	return info.TableID
}

func slicesKeys(m map[metadata.TableBucket]int64) []metadata.TableBucket {
	var out []metadata.TableBucket
	for tb := range m {
		out = append(out, tb)
	}
	return out
}

// TestCommitGroupQueuesBehindFsync: commits to one bucket that arrive
// while another waits for its fsync queue up and are applied together by
// the next leader, with one fsync.
func TestCommitGroupQueuesBehindFsync(t *testing.T) {
	hold := newHoldFS()
	e, _ := testEngine(t, "", func(o *Options) { o.FS = hold })
	createPK(t, e, "kv", nil)
	upsert(t, e, "kv", []any{"w", 0, int64(0)}) // the journal's first record readies the file, with a sync of its own
	hold.armed.Store(true)
	first := make(chan struct{})
	go func() {
		defer close(first)
		upsert(t, e, "kv", []any{"a", 1, int64(1)})
	}()
	within(t, hold.entered, "the first commit's fsync")
	var wg sync.WaitGroup
	for i := 2; i <= 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			upsert(t, e, "kv", []any{"x", i, int64(i)})
		}()
	}
	queued := make(chan struct{})
	go func() {
		defer close(queued)
		for {
			e.group.mu.Lock()
			n := len(e.group.queue)
			e.group.mu.Unlock()
			if n == 3 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	within(t, queued, "three commits queued behind the fsync")
	syncs := hold.syncs.Load()
	hold.armed.Store(false)
	close(hold.release)
	within(t, first, "the first commit")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	within(t, done, "the queued commits")
	require.Equal(t, syncs+1, hold.syncs.Load(), "the three queued commits share one fsync")
	for id := 1; id <= 4; id++ {
		_, found := lookupN(t, e, "kv", id)
		require.True(t, found, "key %d", id)
	}
}

// TestViewCutDuringCommitFsync: a view cut while a commit waits for its
// fsync does not wait for it, does not see it, and, when its transaction
// writes a key the commit wrote, loses to it, though no write view was
// open when the commit merged its rows. Both for a commit that joins a
// group and for one too large to, which collects its keys only then.
func TestViewCutDuringCommitFsync(t *testing.T) {
	t.Run("group", func(t *testing.T) { testViewCutDuringCommitFsync(t, 0) })
	t.Run("direct", func(t *testing.T) { testViewCutDuringCommitFsync(t, maxCombinedRows) })
}

func testViewCutDuringCommitFsync(t *testing.T, extra int) {
	hold := newHoldFS()
	e, _ := testEngine(t, "", func(o *Options) { o.FS = hold })
	createPK(t, e, "kv", map[string]string{metadata.OptBucketNum: "2"})
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	hold.armed.Store(true)
	committed := make(chan struct{})
	rows := [][]any{{"a", 1, int64(11)}}
	for i := range extra {
		rows = append(rows, []any{"x", 100 + i, int64(i)})
	}
	go func() {
		defer close(committed)
		upsert(t, e, "kv", rows...)
	}()
	within(t, hold.entered, "the commit's fsync")
	cut := make(chan *WriteBuffer, 1)
	go func() {
		v, err := e.WriteView(ctx)
		if err != nil {
			t.Error(err)
			close(cut)
			return
		}
		cut <- v.NewWriteBuffer()
	}()
	var tx *WriteBuffer
	select {
	case tx = <-cut:
	case <-time.After(20 * time.Second):
		t.Fatal("the view's cut waited for the commit's fsync")
	}
	require.NotNil(t, tx)
	defer tx.v.Close()
	row, found, err := tx.v.Lookup(ctx, path("kv"), []any{nil, 1, nil})
	require.NoError(t, err)
	require.True(t, found)
	require.EqualValues(t, 10, row[2], "the view does not see the commit in flight")
	close(hold.release)
	within(t, committed, "the commit")
	bufUpsert(t, tx, "kv", []any{"a", 1, int64(12)})
	_, err = tx.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
	n, _ := lookupN(t, e, "kv", 1)
	require.EqualValues(t, 11, n)
}
