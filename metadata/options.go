package metadata

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Table option keys understood by fluss (DESIGN §2). Any other key in a
// WITH clause is an error.
const (
	OptBucketNum                 = "bucket.num"
	OptBucketKey                 = "bucket.key"
	OptLogFormat                 = "table.log.format"
	OptLogCompression            = "table.log.arrow.compression.type"
	OptDatalakeEnabled           = "table.datalake.enabled"
	OptDatalakeFormat            = "table.datalake.format"
	OptDatalakeFreshness         = "table.datalake.freshness"
	OptDatalakeRetention         = "table.datalake.snapshot.retention"
	OptDatalakeTargetFileSize    = "table.datalake.compaction.target-file-size"
	OptLogTTL                    = "table.log.ttl"
	OptMergeEngine               = "table.merge-engine"
	OptVersionColumn             = "table.merge-engine.versioned.ver-column"
	OptStatisticsColumns         = "table.statistics.columns"
	OptChangelogImage            = "table.changelog.image"
	OptAutoPartitionEnabled      = "table.auto-partition.enabled"
	OptAutoPartitionKey          = "table.auto-partition.key"
	OptAutoPartitionTimeUnit     = "table.auto-partition.time-unit"
	OptAutoPartitionNumPrecreate = "table.auto-partition.num-precreate"
	OptAutoPartitionNumRetention = "table.auto-partition.num-retention"
	OptAutoPartitionTimeZone     = "table.auto-partition.time-zone"
	OptAutoPartitionTimeFormat   = "table.auto-partition.time-format"
	OptDeleteBehavior            = "table.delete.behavior"
	OptAutoIncrementFields       = "auto-increment.fields"
	OptKvSnapshotInterval        = "kv.snapshot.interval"
)

// knownOptions lists every key ParseTableConfig accepts, in the order an
// error message shows them.
var knownOptions = []string{
	OptBucketNum, OptBucketKey, OptLogFormat, OptLogCompression,
	OptDatalakeEnabled, OptDatalakeFormat, OptDatalakeFreshness, OptDatalakeRetention, OptDatalakeTargetFileSize, OptLogTTL,
	OptMergeEngine, OptVersionColumn, OptStatisticsColumns, OptChangelogImage,
	OptAutoPartitionEnabled, OptAutoPartitionKey, OptAutoPartitionTimeUnit,
	OptAutoPartitionNumPrecreate, OptAutoPartitionNumRetention, OptAutoPartitionTimeZone,
	OptAutoPartitionTimeFormat, OptDeleteBehavior, OptAutoIncrementFields, OptKvSnapshotInterval,
}

// alterableOptions are the options ALTER TABLE ... SET may change: they
// steer background work (tiering, retention, statistics of new batches)
// and never how existing data is laid out.
var alterableOptions = []string{
	OptDatalakeEnabled, OptDatalakeFormat, OptDatalakeFreshness, OptDatalakeRetention, OptDatalakeTargetFileSize, OptLogTTL,
	OptStatisticsColumns, OptAutoPartitionEnabled, OptAutoPartitionNumPrecreate, OptAutoPartitionNumRetention,
	OptKvSnapshotInterval,
}

// KnownOptions returns the table option keys fluss understands.
func KnownOptions() []string { return slices.Clone(knownOptions) }

// Defaults of the table options, as in Fluss, except the log's Arrow
// compression: an embedded store reads its log far more often than it
// ships it over a network, so record batches are left uncompressed unless
// the table asks for ZSTD or LZ4_FRAME.
const (
	DefaultLogTTL        = 7 * 24 * time.Hour
	DefaultFreshness     = 3 * time.Minute
	DefaultLakeRetention = 10
	// DefaultLakeTargetFileSize is the compaction target of a log
	// table's lake files.
	DefaultLakeTargetFileSize = 128 << 20
	DefaultCompression        = "NONE"
	DefaultDatalakeFormat     = "parquet"
	DefaultChangelogImage     = "FULL"
	DefaultAutoPartitionNum   = 2 // num-precreate
	DefaultRetentionNum       = 7 // num-retention
)

// MaxBuckets is the most buckets a table or partition may have.
const MaxBuckets = 4096

// LogFormat is the record format of a table's log.
type LogFormat string

const (
	LogFormatArrow   LogFormat = "ARROW"
	LogFormatIndexed LogFormat = "INDEXED"
)

// MergeEngine decides how a primary-key table merges an upsert into the
// stored row.
type MergeEngine string

const (
	MergeLastRow   MergeEngine = ""
	MergeFirstRow  MergeEngine = "first_row"
	MergeVersioned MergeEngine = "versioned"
	// MergeAggregation combines each column of an upsert with the
	// stored row's by its aggregate function (Config.Aggs).
	MergeAggregation MergeEngine = "aggregation"
)

// TableConfig is the parsed, validated form of a table's options. It is a
// plain value, safe to copy; the slices must not be modified.
type TableConfig struct {
	LogFormat       LogFormat
	Compression     string // NONE, ZSTD or LZ4_FRAME
	DatalakeEnabled bool
	DatalakeFormat  string        // "parquet" when the lake is enabled or the option set, else ""
	Freshness       time.Duration // tiering cadence
	// LakeRetention is how many of the newest lake snapshots are kept
	// (with the readable one and any a read view pins); older ones are
	// expired and the files only they list removed.
	LakeRetention int
	// LakeTargetFileSize is the size a log table's lake files are
	// compacted towards: files below it are merged, four of a size class
	// at a time, by the rounds that tier their bucket.
	LakeTargetFileSize int64
	LogTTL             time.Duration // 0: never expire
	MergeEngine        MergeEngine
	VersionColumn      string
	// StatisticsColumns are the columns whose min, max and null count each
	// record batch carries. Nil means the default (every column whose type
	// supports statistics); an empty non-nil slice disables statistics.
	StatisticsColumns  []string
	ChangelogImage     string // FULL or WAL
	AutoIncrement      []string
	KvSnapshotInterval time.Duration // 0: the engine default
	AutoPartition      AutoPartition
	// Aggs are the aggregation merge engine's functions by column name
	// ('fields.<col>.agg'; a column not named takes DefaultAgg), and
	// ListaggDelimiters listagg's delimiters by column name.
	Aggs              map[string]AggFunc
	ListaggDelimiters map[string]string
	// DeleteBehavior is table.delete.behavior: DeleteAllow, DeleteIgnore
	// or DeleteDisable; "" until the table's validation sets the merge
	// engine's default.
	DeleteBehavior string
}

// The values of table.delete.behavior.
const (
	DeleteAllow   = "allow"
	DeleteIgnore  = "ignore"
	DeleteDisable = "disable"
)

// AggOf is the aggregate function of column name (DefaultAgg when none
// was given).
func (c *TableConfig) AggOf(name string) AggFunc {
	for k, f := range c.Aggs {
		if strings.EqualFold(k, name) {
			return f
		}
	}
	return DefaultAgg
}

// DelimiterOf is listagg's delimiter of column name.
func (c *TableConfig) DelimiterOf(name string) string {
	for k, d := range c.ListaggDelimiters {
		if strings.EqualFold(k, name) {
			return d
		}
	}
	return DefaultListaggDelimiter
}

// AutoPartition holds the table.auto-partition.* options.
type AutoPartition struct {
	Enabled      bool
	Key          string
	TimeUnit     string // HOUR, DAY, MONTH, QUARTER, YEAR
	NumPrecreate int
	// PrecreateSet records that num-precreate was given (Fluss refuses a
	// positive one on a table of several partition keys).
	PrecreateSet bool
	NumRetention int    // negative: never drop
	TimeZone     string // "": the process's local zone, as Fluss uses the server's
	// TimeFormat is the partition names' format as a Java date pattern
	// (yyyy, MM, dd, HH and Q for the quarter); "" is the unit's own:
	// yyyyMMddHH, yyyyMMdd, yyyyMM, yyyyQ or yyyy.
	TimeFormat string
}

// ParseDuration reads a duration option: a Go duration ("90s", "1h30m"),
// Fluss's "<number> <unit>" form ("7 d", "10 min", "1 h", "30 s",
// "500 ms"; the space is optional; units ns, us, ms, s, min, h, d and
// their long names), or a bare number of milliseconds as Fluss reads it
// ("0" is zero). Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if d, err := time.ParseDuration(in); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("%w: duration %q is negative", ErrInvalidOption, s)
		}
		return d, nil
	}
	i := 0
	for i < len(in) && in[i] >= '0' && in[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: %q is not a duration (e.g. 90s, 10 min, 7 d)", ErrInvalidOption, s)
	}
	n, err := strconv.ParseInt(in[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: duration %q is too large", ErrInvalidOption, s)
	}
	var unit time.Duration
	switch strings.ToLower(strings.TrimSpace(in[i:])) {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		unit = time.Millisecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		unit = time.Nanosecond
	case "us", "µs", "micro", "micros", "microsecond", "microseconds":
		unit = time.Microsecond
	case "s", "sec", "secs", "second", "seconds":
		unit = time.Second
	case "m", "min", "mins", "minute", "minutes":
		unit = time.Minute
	case "h", "hour", "hours":
		unit = time.Hour
	case "d", "day", "days":
		unit = 24 * time.Hour
	default:
		return 0, fmt.Errorf("%w: %q has an unknown duration unit (use ms, s, min, h or d)", ErrInvalidOption, s)
	}
	if n > int64(1<<63-1)/int64(unit) {
		return 0, fmt.Errorf("%w: duration %q is too large", ErrInvalidOption, s)
	}
	return time.Duration(n) * unit, nil
}

// ParseTableConfig parses and checks table options on their own; the
// checks that need the schema (columns named by options) are NewTableInfo's.
// An unknown key is ErrInvalidOption naming it; a bad value names the key
// and the value. bucket.num and bucket.key are accepted and left to
// NewTableInfo.
func ParseTableConfig(opts map[string]string) (TableConfig, error) {
	cfg := TableConfig{
		LogFormat:          LogFormatArrow,
		Compression:        DefaultCompression,
		Freshness:          DefaultFreshness,
		LakeRetention:      DefaultLakeRetention,
		LakeTargetFileSize: DefaultLakeTargetFileSize,
		LogTTL:             DefaultLogTTL,
		ChangelogImage:     DefaultChangelogImage,
		AutoPartition: AutoPartition{
			TimeUnit:     "DAY",
			NumPrecreate: DefaultAutoPartitionNum,
			NumRetention: DefaultRetentionNum,
		},
	}
	// Sorted, so the first error reported does not depend on map order.
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := opts[k]
		bad := func(want string) error {
			return fmt.Errorf("%w: %s = %q: %s", ErrInvalidOption, k, v, want)
		}
		tv := strings.TrimSpace(v)
		var err error
		switch k {
		case OptBucketNum, OptBucketKey:
			// Checked against the schema by NewTableInfo.
		case OptLogFormat:
			switch f := LogFormat(strings.ToUpper(tv)); f {
			case LogFormatArrow, LogFormatIndexed:
				cfg.LogFormat = f
			default:
				return cfg, bad("must be ARROW or INDEXED")
			}
		case OptLogCompression:
			switch c := strings.ToUpper(tv); c {
			case "NONE", "ZSTD", "LZ4_FRAME":
				cfg.Compression = c
			default:
				return cfg, bad("must be NONE, ZSTD or LZ4_FRAME")
			}
		case OptDatalakeEnabled:
			if cfg.DatalakeEnabled, err = parseBool(tv); err != nil {
				return cfg, bad("must be true or false")
			}
		case OptDatalakeFormat:
			if !strings.EqualFold(tv, DefaultDatalakeFormat) {
				return cfg, bad("the only lake format is parquet")
			}
			cfg.DatalakeFormat = DefaultDatalakeFormat
		case OptDatalakeFreshness:
			if cfg.Freshness, err = ParseDuration(tv); err != nil || cfg.Freshness == 0 {
				return cfg, bad("must be a positive duration such as 3 min")
			}
		case OptDatalakeRetention:
			n, err := strconv.Atoi(tv)
			if err != nil || n < 1 {
				return cfg, bad("must be a whole number of snapshots, at least 1")
			}
			cfg.LakeRetention = n
		case OptDatalakeTargetFileSize:
			n, err := ParseByteSize(tv)
			if err != nil || n < 1<<10 {
				return cfg, bad("must be a size of at least 1 kb, such as 128 mb")
			}
			cfg.LakeTargetFileSize = n
		case OptLogTTL:
			if cfg.LogTTL, err = ParseDuration(tv); err != nil {
				return cfg, bad("must be a duration such as 7 d (0 keeps the log forever)")
			}
		case OptKvSnapshotInterval:
			if cfg.KvSnapshotInterval, err = ParseDuration(tv); err != nil {
				return cfg, bad("must be a duration such as 10 min")
			}
		case OptMergeEngine:
			switch strings.ToLower(tv) {
			case "first_row":
				cfg.MergeEngine = MergeFirstRow
			case "versioned":
				cfg.MergeEngine = MergeVersioned
			case "aggregation":
				cfg.MergeEngine = MergeAggregation
			default:
				return cfg, bad("must be first_row, versioned or aggregation")
			}
		case OptVersionColumn:
			if tv == "" {
				return cfg, bad("must name a column")
			}
			cfg.VersionColumn = tv
		case OptStatisticsColumns:
			switch tv {
			case "*":
				cfg.StatisticsColumns = nil
			case "":
				cfg.StatisticsColumns = []string{}
			default:
				cfg.StatisticsColumns = splitList(tv)
			}
		case OptChangelogImage:
			switch c := strings.ToUpper(tv); c {
			case "FULL", "WAL":
				cfg.ChangelogImage = c
			default:
				return cfg, bad("must be FULL or WAL")
			}
		case OptAutoIncrementFields:
			cfg.AutoIncrement = splitList(tv)
			if len(cfg.AutoIncrement) != 1 {
				return cfg, bad("must name exactly one column")
			}
		case OptAutoPartitionEnabled:
			if cfg.AutoPartition.Enabled, err = parseBool(tv); err != nil {
				return cfg, bad("must be true or false")
			}
		case OptAutoPartitionKey:
			cfg.AutoPartition.Key = tv
		case OptAutoPartitionTimeUnit:
			switch u := strings.ToUpper(tv); u {
			case "HOUR", "DAY", "MONTH", "QUARTER", "YEAR":
				cfg.AutoPartition.TimeUnit = u
			default:
				return cfg, bad("must be HOUR, DAY, MONTH, QUARTER or YEAR")
			}
		case OptAutoPartitionNumPrecreate:
			if cfg.AutoPartition.NumPrecreate, err = strconv.Atoi(tv); err != nil || cfg.AutoPartition.NumPrecreate < 0 {
				return cfg, bad("must be a non-negative integer")
			}
			cfg.AutoPartition.PrecreateSet = true
		case OptAutoPartitionNumRetention:
			if cfg.AutoPartition.NumRetention, err = strconv.Atoi(tv); err != nil {
				return cfg, bad("must be an integer (negative: never drop)")
			}
		case OptAutoPartitionTimeZone:
			if _, err := time.LoadLocation(tv); err != nil || tv == "" {
				return cfg, bad("must be a time zone such as UTC or Europe/Paris")
			}
			cfg.AutoPartition.TimeZone = tv
		case OptAutoPartitionTimeFormat:
			if _, err := goTimeLayout(tv); err != nil {
				return cfg, bad(err.Error())
			}
			cfg.AutoPartition.TimeFormat = tv
		case OptDeleteBehavior:
			switch b := strings.ToLower(tv); b {
			case DeleteAllow, DeleteIgnore, DeleteDisable:
				cfg.DeleteBehavior = b
			default:
				return cfg, bad("must be allow, ignore or disable")
			}
		default:
			if col, ok := strings.CutPrefix(k, "fields."); ok {
				if name, ok := strings.CutSuffix(col, ".listagg.delimiter"); ok && name != "" {
					if cfg.ListaggDelimiters == nil {
						cfg.ListaggDelimiters = map[string]string{}
					}
					cfg.ListaggDelimiters[name] = v
					continue
				}
				if name, ok := strings.CutSuffix(col, ".agg"); ok && name != "" {
					f, err := ParseAggFunc(tv)
					if err != nil {
						return cfg, fmt.Errorf("table option %q: %w", k, err)
					}
					if cfg.Aggs == nil {
						cfg.Aggs = map[string]AggFunc{}
					}
					cfg.Aggs[name] = f
					continue
				}
			}
			return cfg, fmt.Errorf("%w: unknown table option %q (known: %s, fields.<column>.agg, fields.<column>.listagg.delimiter)", ErrInvalidOption, k, strings.Join(knownOptions, ", "))
		}
	}
	if cfg.DatalakeEnabled && cfg.DatalakeFormat == "" {
		cfg.DatalakeFormat = DefaultDatalakeFormat
	}
	return cfg, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

// splitList splits a comma-separated list of names, trimming spaces and
// dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ParseByteSize reads a byte size: a plain number or one with a b, kb,
// mb, gb or tb suffix (powers of 1024, any case, a space allowed before
// it).
func ParseByteSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			mult = u.m
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
