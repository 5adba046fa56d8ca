package fluss

import (
	"errors"
	"testing"

	"github.com/flusslite/fluss/metadata"
)

// FuzzParseDSN: any DSN parses or fails with an *Error wrapping
// ErrInvalidOption; it never panics and a parsed DSN is consistent.
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{
		":memory:", "/tmp/x?sync=off", "file:/a/b?default.bucket.number=4&loc=UTC",
		"file://localhost/a", "x?tiering=off&kv.snapshot.interval=10 min", "?", "file:", "%zz",
		":memory:?log.segment.file-size=64mb&threads=2&scan.max-records-per-split=5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		cfg, err := ParseDSN(dsn)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || !errors.Is(err, metadata.ErrInvalidOption) {
				t.Fatalf("ParseDSN(%q): %T %v", dsn, err, err)
			}
			return
		}
		if cfg.InMemory == (cfg.Dir != "") {
			t.Fatalf("ParseDSN(%q): InMemory=%v with Dir=%q", dsn, cfg.InMemory, cfg.Dir)
		}
		if cfg.DefaultBucketNumber < 1 || cfg.DefaultBucketNumber > metadata.MaxBuckets || cfg.Location == nil || cfg.Threads < 1 {
			t.Fatalf("ParseDSN(%q): out-of-range config %+v", dsn, cfg)
		}
	})
}
