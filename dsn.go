package fluss

import (
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// Config is a parsed DSN. Build one with ParseDSN; the zero value is not
// valid.
type Config struct {
	// Dir is the data directory, cleaned and absolute; empty when InMemory.
	Dir string
	// InMemory is true for ":memory:".
	InMemory bool
	// Sync makes every write durable before it returns (DSN sync=on, the
	// default).
	Sync bool
	// DefaultBucketNumber is bucket.num for tables that do not set it.
	DefaultBucketNumber int
	// Tiering is "auto" or "off".
	Tiering string
	// KvSnapshotInterval is the period of KV snapshots; 0 disables them.
	KvSnapshotInterval time.Duration
	// AutoPartitionInterval is how often auto-partitioned tables get
	// their partitions created ahead and dropped behind (DSN
	// auto-partition.check.interval, Fluss's default 10 minutes); 0: only
	// when the database opens and on CALL sys.auto_partition.
	AutoPartitionInterval time.Duration
	// MaxRecordsPerSplit cuts log-only ranges longer than this; 0: never.
	MaxRecordsPerSplit int64
	// Location is the time zone TIMESTAMP_LTZ values are returned in, and
	// the one a time.Time argument is moved into before a TIMESTAMP, DATE or
	// TIME takes its wall clock.
	Location *time.Location
	// SegmentBytes is the size at which a log segment rolls.
	SegmentBytes int64
	// MaxOpenSegments bounds the log segment files the engine holds open
	// (DSN log.max-open-files); 0 is the engine's default, 1024 or a
	// quarter of the process's open-file limit when that is lower.
	MaxOpenSegments int
	// Threads bounds the split readers of one query.
	Threads int
	// MemoryLimit bounds the approximate bytes one sort, aggregation or
	// DISTINCT of a query, or the rows an INSERT ... SELECT reads, may
	// hold (DSN memory.limit, default 1gb); a statement that needs more
	// fails with an error saying so.
	MemoryLimit int64
}

// DSN option keys.
const (
	dsnSync               = "sync"
	dsnDefaultBucketNum   = "default.bucket.number"
	dsnTiering            = "tiering"
	dsnKvSnapshotInterval = "kv.snapshot.interval"
	dsnMaxRecordsPerSplit = "scan.max-records-per-split"
	dsnLoc                = "loc"
	dsnSegmentBytes       = "log.segment.file-size"
	dsnMaxOpenSegments    = "log.max-open-files"
	dsnThreads            = "threads"
	dsnMemoryLimit        = "memory.limit"
	dsnAutoPartition      = "auto-partition.check.interval"
)

var dsnKeys = []string{dsnSync, dsnDefaultBucketNum, dsnTiering, dsnKvSnapshotInterval,
	dsnMaxRecordsPerSplit, dsnLoc, dsnSegmentBytes, dsnMaxOpenSegments, dsnThreads, dsnMemoryLimit, dsnAutoPartition}

// MemoryDSN is the DSN of an engine that lives only in memory.
const MemoryDSN = ":memory:"

// ParseDSN parses a DSN: a directory path, a file: URI or ":memory:",
// optionally followed by ?key=value options (DESIGN §6). An unknown key or
// a bad value is an error naming it.
func ParseDSN(dsn string) (Config, error) {
	cfg := Config{
		Sync:                  true,
		DefaultBucketNumber:   1,
		Tiering:               "auto",
		KvSnapshotInterval:    10 * time.Minute,
		AutoPartitionInterval: 10 * time.Minute,
		Location:              time.UTC,
		SegmentBytes:          64 << 20,
		Threads:               runtime.GOMAXPROCS(0),
		MemoryLimit:           1 << 30,
	}
	if strings.TrimSpace(dsn) == "" {
		return cfg, dsnError("empty DSN: give a directory path, a file: URI or %s", MemoryDSN)
	}
	pathPart, query, _ := strings.Cut(dsn, "?")
	if strings.HasPrefix(pathPart, "file:") {
		u, err := url.Parse(pathPart)
		if err != nil {
			return cfg, dsnError("bad file: URI %q: %v", pathPart, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return cfg, dsnError("file: URI %q names host %q; only local paths are supported", pathPart, u.Host)
		}
		pathPart = u.Path
		if pathPart == "" {
			pathPart = u.Opaque
		}
		if p, err := url.PathUnescape(pathPart); err == nil {
			pathPart = p
		}
	}
	switch {
	case pathPart == MemoryDSN:
		cfg.InMemory = true
	case pathPart == "":
		return cfg, dsnError("DSN %q has no path", dsn)
	default:
		abs, err := filepath.Abs(pathPart)
		if err != nil {
			return cfg, dsnError("bad path %q: %v", pathPart, err)
		}
		cfg.Dir = abs
	}
	if query == "" {
		return cfg, nil
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return cfg, dsnError("bad options %q: %v", query, err)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vs := values[k]
		if len(vs) != 1 {
			return cfg, dsnError("option %q is given %d times", k, len(vs))
		}
		if err := cfg.set(k, vs[0]); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func (c *Config) set(key, v string) error {
	bad := func(want string) error {
		return dsnError("option %s=%q: want %s", key, v, want)
	}
	switch key {
	case dsnSync:
		switch strings.ToLower(v) {
		case "on", "true", "1":
			c.Sync = true
		case "off", "false", "0":
			c.Sync = false
		default:
			return bad("on or off")
		}
	case dsnDefaultBucketNum:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > metadata.MaxBuckets {
			return bad(fmt.Sprintf("an integer in [1, %d]", metadata.MaxBuckets))
		}
		c.DefaultBucketNumber = n
	case dsnTiering:
		switch strings.ToLower(v) {
		case "auto", "off":
			c.Tiering = strings.ToLower(v)
		default:
			return bad("auto or off")
		}
	case dsnKvSnapshotInterval:
		d, err := metadata.ParseDuration(v)
		if err != nil || d < 0 {
			return bad("a duration such as 10m, 90s or '10 min'")
		}
		c.KvSnapshotInterval = d
	case dsnAutoPartition:
		d, err := metadata.ParseDuration(v)
		if err != nil || d < 0 {
			return bad("a duration such as 10m, 90s or '10 min'")
		}
		c.AutoPartitionInterval = d
	case dsnMaxRecordsPerSplit:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return bad("a positive integer")
		}
		c.MaxRecordsPerSplit = n
	case dsnLoc:
		if v == "" {
			return bad("a time zone name such as UTC, Local or Europe/Berlin")
		}
		loc, err := time.LoadLocation(v)
		if err != nil {
			return bad("a time zone name such as UTC, Local or Europe/Berlin")
		}
		c.Location = loc
	case dsnSegmentBytes:
		n, err := metadata.ParseByteSize(v)
		if err != nil || n < 1<<10 || n > 1<<40 {
			return bad("a size between 1kb and 1tb, such as 64mb")
		}
		c.SegmentBytes = n
	case dsnMaxOpenSegments:
		n, err := strconv.Atoi(v)
		if err != nil || n < storage.MinOpenSegments || n > 1<<20 {
			return bad(fmt.Sprintf("an integer in [%d, %d]", storage.MinOpenSegments, 1<<20))
		}
		c.MaxOpenSegments = n
	case dsnThreads:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			return bad("an integer in [1, 1024]")
		}
		c.Threads = n
	case dsnMemoryLimit:
		n, err := metadata.ParseByteSize(v)
		if err != nil || n < 1<<20 || n > 1<<50 {
			return bad("a size of at least 1mb, such as 512mb or 4gb")
		}
		c.MemoryLimit = n
	default:
		return dsnError("unknown option %q (known: %s)", key, strings.Join(dsnKeys, ", "))
	}
	return nil
}

func dsnError(format string, args ...any) error {
	return &Error{Code: CodeInvalidDSN, Msg: "bad DSN: " + fmt.Sprintf(format, args...), Pos: -1, err: metadata.ErrInvalidOption}
}

// engineOptions are the DSN options the engine is opened with: every
// handle on one directory in one process shares that engine, so they
// must agree (sameEngineOptions). The others (loc, threads, memory.limit,
// scan.max-records-per-split) belong to each connector and may differ.
var engineOptions = []struct {
	key   string
	value func(Config) string
}{
	{dsnSync, func(c Config) string {
		if c.Sync {
			return "on"
		}
		return "off"
	}},
	{dsnDefaultBucketNum, func(c Config) string { return strconv.Itoa(c.DefaultBucketNumber) }},
	{dsnTiering, func(c Config) string { return c.Tiering }},
	{dsnKvSnapshotInterval, func(c Config) string { return c.KvSnapshotInterval.String() }},
	{dsnAutoPartition, func(c Config) string { return c.AutoPartitionInterval.String() }},
	{dsnSegmentBytes, func(c Config) string { return formatBytes(c.SegmentBytes) }},
	{dsnMaxOpenSegments, func(c Config) string {
		if c.MaxOpenSegments == 0 {
			return "default"
		}
		return strconv.Itoa(c.MaxOpenSegments)
	}},
}

// sameEngineOptions reports, as an error naming each option and both
// values, where want asks for an engine other than the one open (opened
// with open). An option a DSN leaves out asks for its default.
func sameEngineOptions(open, want Config) error {
	var diffs []string
	for _, o := range engineOptions {
		if a, b := o.value(open), o.value(want); a != b {
			diffs = append(diffs, fmt.Sprintf("%s=%s, but the engine has %s=%s", o.key, b, o.key, a))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return dsnError("the engine on %s is already open in this process with other engine options: %s; "+
		"give every handle on a directory the same engine options (%s), or close the others first",
		want.Dir, strings.Join(diffs, "; "), strings.Join(engineOptionKeys(), ", "))
}

func engineOptionKeys() []string {
	keys := make([]string, len(engineOptions))
	for i, o := range engineOptions {
		keys[i] = o.key
	}
	return keys
}

// formatBytes prints a size the way the DSN takes it: with the largest
// unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
