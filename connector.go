package fluss

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

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
	// stmts caches parsed statements by their SQL text.
	stmts *stmtCache
	// logger and hook observe every statement; see WithLogger and
	// WithQueryHook.
	logger *slog.Logger
	hook   func(context.Context, QueryInfo)
}

// ConnectorOption configures a Connector.
type ConnectorOption func(*Connector)

// WithLogger logs each statement at debug level (its text, argument count,
// duration, rows and error) to l. If this connector is the one that opens
// the engine, the engine logs to l too.
func WithLogger(l *slog.Logger) ConnectorOption {
	return func(c *Connector) { c.logger = l }
}

// WithQueryHook calls hook after every statement: after Exec returns, and
// after the Rows of a Query (or the reader of QueryArrow) is closed, so
// that Rows and Duration cover the whole read. The hook runs on the
// caller's goroutine and should return quickly; it receives the
// statement's context, which makes tracing wrappers easy to write.
func WithQueryHook(hook func(ctx context.Context, info QueryInfo)) ConnectorOption {
	return func(c *Connector) { c.hook = hook }
}

// QueryInfo describes one finished statement for a query hook.
type QueryInfo struct {
	// SQL is the statement's text.
	SQL string
	// Args is the number of arguments bound.
	Args int
	// Duration runs from the start of the statement until Exec returned
	// or its Rows closed.
	Duration time.Duration
	// Rows is the rows affected by a write, or the rows a query yielded.
	Rows int64
	// Err is the error that ended the statement, nil if none.
	Err error
}

// observe reports a finished statement to the logger and the hook.
func (c *Connector) observe(ctx context.Context, info QueryInfo) {
	if c.logger != nil {
		c.logger.DebugContext(ctx, "fluss statement", "sql", info.SQL, "args", info.Args,
			"duration", info.Duration, "rows", info.Rows, "err", info.Err)
	}
	if c.hook != nil {
		c.hook(ctx, info)
	}
}

// observed reports whether anything observes statements.
func (c *Connector) observed() bool { return c.logger != nil || c.hook != nil }

var (
	_ driver.Connector = (*Connector)(nil)
	_ io.Closer        = (*Connector)(nil)
)

// NewConnector parses dsn (see ParseDSN) and opens its engine, or shares
// the engine already open on the same directory in this process.
func NewConnector(dsn string, opts ...ConnectorOption) (*Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	c := &Connector{cfg: cfg, stmts: newStmtCache(stmtCacheSize)}
	for _, o := range opts {
		o(c)
	}
	se, err := acquireEngine(cfg, c.logger)
	if err != nil {
		return nil, wrapErr(err)
	}
	c.shared = se
	return c, nil
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
	cfg     Config // of the connector that opened it; see sameEngineOptions
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

// acquireEngine opens the engine of cfg, or takes another reference to
// the one already open; a new engine logs to logger (nil: nowhere).
func acquireEngine(cfg Config, logger *slog.Logger) (*sharedEngine, error) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if !cfg.InMemory {
		if se, ok := registry.engines[cfg.Dir]; ok {
			if err := sameEngineOptions(se.cfg, cfg); err != nil {
				return nil, err
			}
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
	opts.MaxOpenSegments = cfg.MaxOpenSegments
	opts.KvSnapshotInterval = cfg.KvSnapshotInterval
	opts.AutoPartitionInterval = cfg.AutoPartitionInterval
	opts.Logger = logger
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
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
	se := &sharedEngine{key: cfg.Dir, cfg: cfg, engine: eng, lake: lk, tiering: svc, refs: 1}
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
