package fluss

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
	"github.com/flusslite/fluss/tiering"
)

// Connector owns a reference to an engine. It is safe for concurrent use;
// database/sql closes it when the *sql.DB is closed, which releases the
// engine once its last user is gone.
type Connector struct {
	cfg    Config
	shared *sharedEngine
	once   sync.Once
	err    error
}

var (
	_ driver.Connector = (*Connector)(nil)
	_ io.Closer        = (*Connector)(nil)
)

// NewConnector parses dsn (see ParseDSN) and opens its engine, or shares
// the engine already open on the same directory in this process.
func NewConnector(dsn string) (*Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	se, err := acquireEngine(cfg)
	if err != nil {
		return nil, wrapErr(err)
	}
	return &Connector{cfg: cfg, shared: se}, nil
}

// Config returns the parsed DSN.
func (c *Connector) Config() Config { return c.cfg }

// Connect returns a new connection on the shared engine.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.shared.isClosed() {
		return nil, wrapErr(metadata.ErrClosed)
	}
	return newConn(c), nil
}

// Driver returns the fluss driver.
func (c *Connector) Driver() driver.Driver { return &Driver{} }

// Close releases the connector's engine reference; the engine closes when
// no connector uses it any more. Idempotent.
func (c *Connector) Close() error {
	c.once.Do(func() { c.err = wrapErr(releaseEngine(c.shared)) })
	return c.err
}

// sharedEngine is one engine, its lake and tiering service, and the
// number of connectors using them.
type sharedEngine struct {
	key     string // directory, or "" for an in-memory engine
	engine  *storage.Engine
	lake    *lake.Lake
	tiering *tiering.Service
	refs    int // guarded by registry.mu
	closed  bool
}

// close stops tiering, then closes the lake and the engine.
func (s *sharedEngine) close() error {
	return errors.Join(s.tiering.Close(), s.lake.Close(), s.engine.Close())
}

func (s *sharedEngine) isClosed() bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return s.closed
}

// registry maps directories to their open engines, so one process opens
// each directory once.
var registry struct {
	mu      sync.Mutex
	engines map[string]*sharedEngine // guarded by mu
}

func acquireEngine(cfg Config) (*sharedEngine, error) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if !cfg.InMemory {
		if se, ok := registry.engines[cfg.Dir]; ok {
			se.refs++
			return se, nil
		}
	}
	opts := storage.DefaultOptions()
	opts.Dir = cfg.Dir
	opts.InMemory = cfg.InMemory
	opts.Sync = cfg.Sync
	opts.DefaultBucketNumber = cfg.DefaultBucketNumber
	opts.SegmentBytes = cfg.SegmentBytes
	opts.KvSnapshotInterval = cfg.KvSnapshotInterval
	opts.Logger = slog.New(slog.DiscardHandler)
	eng, err := storage.Open(opts)
	if err != nil {
		return nil, err
	}
	lkOpts := lake.Options{InMemory: cfg.InMemory, Sync: cfg.Sync, Logger: opts.Logger}
	if !cfg.InMemory {
		lkOpts.Dir = filepath.Join(cfg.Dir, "lake")
	}
	lk, err := lake.Open(lkOpts)
	if err != nil {
		eng.Close()
		return nil, err
	}
	svc := tiering.New(eng, lk, tiering.Options{Enabled: cfg.Tiering == "auto", Logger: opts.Logger})
	se := &sharedEngine{key: cfg.Dir, engine: eng, lake: lk, tiering: svc, refs: 1}
	// A tiering round that committed its lake snapshot but stopped before
	// the engine recorded it is finished now.
	if err := svc.Recover(context.Background()); err != nil {
		se.close()
		return nil, err
	}
	svc.Start()
	if !cfg.InMemory {
		if registry.engines == nil {
			registry.engines = make(map[string]*sharedEngine)
		}
		registry.engines[cfg.Dir] = se
	}
	return se, nil
}

func releaseEngine(se *sharedEngine) error {
	registry.mu.Lock()
	se.refs--
	last := se.refs == 0
	if last {
		se.closed = true
		if se.key != "" {
			delete(registry.engines, se.key)
		}
	}
	registry.mu.Unlock()
	if last {
		return se.close()
	}
	return nil
}
