package metadata

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"168h", 7 * 24 * time.Hour},
		{"7 d", 7 * 24 * time.Hour},
		{"7d", 7 * 24 * time.Hour},
		{"2 days", 48 * time.Hour},
		{"10 min", 10 * time.Minute},
		{"10min", 10 * time.Minute},
		{"1 h", time.Hour},
		{"30 s", 30 * time.Second},
		{"500 ms", 500 * time.Millisecond},
		{"500", 500 * time.Millisecond},
		{"0ms", 0},
		{" 3 MIN ", 3 * time.Minute},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"", "abc", "7 weeks", "-1s", "-5", "d", "99999999999999999999 d", "9999999999 d"} {
		_, err := ParseDuration(bad)
		require.ErrorIs(t, err, ErrInvalidOption, bad)
	}
}

func TestParseTableConfigDefaults(t *testing.T) {
	cfg, err := ParseTableConfig(nil)
	require.NoError(t, err)
	require.Equal(t, TableConfig{
		LogFormat:          LogFormatArrow,
		Compression:        "NONE",
		Freshness:          3 * time.Minute,
		LakeRetention:      10,
		LakeTargetFileSize: 128 << 20,
		LogTTL:             7 * 24 * time.Hour,
		ChangelogImage:     "FULL",
		AutoPartition:      AutoPartition{TimeUnit: "DAY", NumPrecreate: 2, NumRetention: 7},
	}, cfg)
	require.Nil(t, cfg.StatisticsColumns)
}

func TestParseTableConfig(t *testing.T) {
	cfg, err := ParseTableConfig(map[string]string{
		OptLogFormat:                 "indexed",
		OptLogCompression:            "lz4_frame",
		OptDatalakeEnabled:           "TRUE",
		OptDatalakeFreshness:         "30 s",
		OptDatalakeRetention:         "4",
		OptLogTTL:                    "0",
		OptMergeEngine:               "FIRST_ROW",
		OptStatisticsColumns:         " a, b ,",
		OptChangelogImage:            "wal",
		OptAutoIncrementFields:       "id",
		OptKvSnapshotInterval:        "5 min",
		OptAutoPartitionEnabled:      "true",
		OptAutoPartitionTimeUnit:     "hour",
		OptAutoPartitionNumPrecreate: "0",
		OptAutoPartitionNumRetention: "3",
		OptAutoPartitionTimeZone:     "UTC",
		OptBucketNum:                 "4",
	})
	require.NoError(t, err)
	require.Equal(t, LogFormatIndexed, cfg.LogFormat)
	require.Equal(t, "LZ4_FRAME", cfg.Compression)
	require.True(t, cfg.DatalakeEnabled)
	require.Equal(t, "parquet", cfg.DatalakeFormat)
	require.Equal(t, 30*time.Second, cfg.Freshness)
	require.Equal(t, 4, cfg.LakeRetention)
	require.Equal(t, time.Duration(0), cfg.LogTTL)
	require.Equal(t, MergeFirstRow, cfg.MergeEngine)
	require.Equal(t, []string{"a", "b"}, cfg.StatisticsColumns)
	require.Equal(t, "WAL", cfg.ChangelogImage)
	require.Equal(t, []string{"id"}, cfg.AutoIncrement)
	require.Equal(t, 5*time.Minute, cfg.KvSnapshotInterval)
	require.Equal(t, AutoPartition{Enabled: true, TimeUnit: "HOUR", PrecreateSet: true, NumRetention: 3, TimeZone: "UTC"}, cfg.AutoPartition)

	cfg, err = ParseTableConfig(map[string]string{OptStatisticsColumns: ""})
	require.NoError(t, err)
	require.NotNil(t, cfg.StatisticsColumns)
	require.Empty(t, cfg.StatisticsColumns)
	cfg, err = ParseTableConfig(map[string]string{OptStatisticsColumns: "*"})
	require.NoError(t, err)
	require.Nil(t, cfg.StatisticsColumns)
}

func TestParseTableConfigErrors(t *testing.T) {
	cases := []struct {
		opts map[string]string
		is   error
		msg  string
	}{
		{map[string]string{"table.nope": "1"}, ErrInvalidOption, `unknown table option "table.nope" (known: bucket.num, bucket.key,`},
		{map[string]string{OptLogFormat: "csv"}, ErrInvalidOption, `table.log.format = "csv": must be ARROW or INDEXED`},
		{map[string]string{OptLogCompression: "gzip"}, ErrInvalidOption, "NONE, ZSTD or LZ4_FRAME"},
		{map[string]string{OptDatalakeEnabled: "yes"}, ErrInvalidOption, `table.datalake.enabled = "yes"`},
		{map[string]string{OptDatalakeFormat: "paimon"}, ErrInvalidOption, "the only lake format is parquet"},
		{map[string]string{OptDatalakeFreshness: "0"}, ErrInvalidOption, "positive duration"},
		{map[string]string{OptDatalakeRetention: "0"}, ErrInvalidOption, "at least 1"},
		{map[string]string{OptDatalakeTargetFileSize: "12"}, ErrInvalidOption, "at least 1 kb"},
		{map[string]string{OptDatalakeTargetFileSize: "big"}, ErrInvalidOption, "table.datalake.compaction.target-file-size"},
		{map[string]string{OptDatalakeRetention: "ten"}, ErrInvalidOption, "table.datalake.snapshot.retention"},
		{map[string]string{OptLogTTL: "forever"}, ErrInvalidOption, `table.log.ttl = "forever"`},
		{map[string]string{OptMergeEngine: "last_row"}, ErrInvalidOption, "first_row, versioned or aggregation"},
		{map[string]string{"fields.v.agg": "rbm32"}, ErrUnsupported, "bitmap aggregate function rbm32 is not supported"},
		{map[string]string{"fields.v.agg": "avg"}, ErrInvalidOption, `unknown aggregate function "avg"`},
		{map[string]string{OptDeleteBehavior: "sometimes"}, ErrInvalidOption, "allow, ignore or disable"},
		{map[string]string{OptChangelogImage: "HALF"}, ErrInvalidOption, "FULL or WAL"},
		{map[string]string{OptAutoIncrementFields: "a,b"}, ErrInvalidOption, "exactly one column"},
		{map[string]string{OptAutoPartitionTimeUnit: "WEEK"}, ErrInvalidOption, "HOUR, DAY"},
		{map[string]string{OptAutoPartitionNumRetention: "x"}, ErrInvalidOption, "negative: never drop"},
		{map[string]string{OptAutoPartitionTimeFormat: "yyyy-ww"}, ErrInvalidOption, "is not one of yyyy, MM, dd, HH, Q"},
		{map[string]string{OptAutoPartitionTimeZone: "Mars/Olympus"}, ErrInvalidOption, "time zone"},
		{map[string]string{OptVersionColumn: ""}, ErrInvalidOption, "must name a column"},
	}
	for _, c := range cases {
		_, err := ParseTableConfig(c.opts)
		require.ErrorIs(t, err, c.is, "%v", c.opts)
		require.ErrorContains(t, err, c.msg, "%v", c.opts)
	}
}
