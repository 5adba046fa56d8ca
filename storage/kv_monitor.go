package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// kvMonitor is what the engine learns about the health of its Pebble
// store: the invariants Pebble reports through its logger's Fatalf and
// the errors of its background work (flushes, compactions). Pebble calls
// into it from its own goroutines, where a panic would end the whole
// process, so nothing here panics: a fault is recorded, logged and handed
// to onFault, which makes the engine refuse writes, and the engine's own
// calls into Pebble check for it. Safe for concurrent use.
type kvMonitor struct {
	logger  *slog.Logger
	onFault func(error)

	mu struct {
		sync.Mutex
		// fault is the first fatal report or background error; the store
		// is not flushed or written after it.
		fault error
		// faulted is closed when fault is set, waking whoever waits on
		// a flush.
		faulted chan struct{}
		// backoff is how long the next file creation waits: Pebble
		// retries a failed flush at once and forever, which on a full
		// disk is a busy loop creating and removing files.
		backoff time.Duration
	}
	// replay is the state of Open's replay (replayCommit), which runs
	// alone.
	replay struct {
		flushed <-chan struct{} // the flush started last; nil when none
		bytes   int             // written since it started
	}
}

func newKvMonitor(logger *slog.Logger, onFault func(error)) *kvMonitor {
	m := &kvMonitor{logger: logger, onFault: onFault}
	m.mu.faulted = make(chan struct{})
	return m
}

// Longest a file creation of the KV store waits after background work
// failed; short enough that Close, which waits for the flush in progress,
// stays quick.
const kvMaxBackoff = 500 * time.Millisecond

func (m *kvMonitor) record(err error) {
	m.mu.Lock()
	m.mu.backoff = min(max(2*m.mu.backoff, 10*time.Millisecond), kvMaxBackoff)
	first := m.mu.fault == nil
	if first {
		m.mu.fault = err
		close(m.mu.faulted)
	}
	m.mu.Unlock()
	if first {
		m.logger.Error("KV store failed; refusing writes until the engine is reopened", "component", "pebble", "err", err)
		m.onFault(err)
	}
}

// fault returns the recorded fault, nil while the store is healthy.
func (m *kvMonitor) fault() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.fault
}

// faultedCh is closed when a fault is recorded.
func (m *kvMonitor) faultedCh() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.faulted
}

func (m *kvMonitor) pause() {
	m.mu.Lock()
	d := m.mu.backoff
	m.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}

func (m *kvMonitor) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			m.record(fmt.Errorf("KV store: %w", err))
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil {
				m.mu.Lock()
				m.mu.backoff = 0
				m.mu.Unlock()
			}
		},
	}
}

// pebbleLogger routes Pebble's messages to the engine's slog logger.
type pebbleLogger struct {
	l   *slog.Logger
	mon *kvMonitor
}

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf reports a state Pebble does not want to continue from, such as
// a MANIFEST it could not write on a full disk. Pebble calls it from its
// background goroutines, where a panic would kill the embedding process,
// and the call sites that matter here return their error after it: it
// records the fault instead, the engine refuses writes, and the KV state,
// which the log can rebuild, is not flushed again; the next Open replays
// the log into the last state Pebble made durable.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.mon.record(fmt.Errorf("KV store: %s", fmt.Sprintf(format, args...)))
}

func (p pebbleLogger) Eventf(ctx context.Context, format string, args ...any) {}

func (p pebbleLogger) IsTracingEnabled(ctx context.Context) bool { return false }

// kvFS is the KV store's file system: after a failure of background work
// each file creation first waits a little, growing to kvMaxBackoff, so a
// flush that keeps failing retries a few times a second rather than in a
// busy loop.
type kvFS struct {
	vfs.FS
	mon *kvMonitor
}

func (f kvFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f.mon.pause()
	return f.FS.Create(name, category)
}

// errKvPanic is what a panic inside a call into Pebble becomes.
var errKvPanic = errors.New("pebble panicked")

// guardKv runs fn, a call into Pebble, turning a panic into an error:
// Pebble panics on some states a full disk leaves behind (a cache entry
// with outstanding references at Close).
func guardKv(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %w: %v", what, errKvPanic, r)
		}
	}()
	return fn()
}

// waitFlush waits for flushed, the channel of an asynchronous flush,
// for at most timeout, returning early with the fault when one is
// recorded.
func (m *kvMonitor) waitFlush(flushed <-chan struct{}, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-flushed:
		return nil
	case <-m.faultedCh():
		return m.fault()
	case <-timer.C:
		return fmt.Errorf("KV store: a flush did not complete within %s", timeout)
	}
}
