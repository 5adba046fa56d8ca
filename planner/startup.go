package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// StartupMode is where a read of a changelog starts, Fluss's
// scan.startup.mode.
type StartupMode string

// The startup modes of Fluss's Flink source.
const (
	// StartupFull is the default. A read of t$changelog starts at the
	// earliest offset still in the log, as StartupEarliest does.
	StartupFull StartupMode = "full"
	// StartupEarliest starts at the earliest offset still in the log.
	StartupEarliest StartupMode = "earliest"
	// StartupLatest starts at the high watermark.
	StartupLatest StartupMode = "latest"
	// StartupTimestamp starts at the first offset committed at or after
	// Startup.Timestamp.
	StartupTimestamp StartupMode = "timestamp"
	// StartupOffsets resumes a subscription from offsets an earlier one
	// handed out (fluss's own mode; the Go API carries the offsets).
	StartupOffsets StartupMode = "offsets"
)

// Startup is a startup mode with its timestamp (ms since the epoch; for
// StartupTimestamp only). A Startup is a plain value.
type Startup struct {
	Mode      StartupMode
	Timestamp int64
}

// String renders the startup as EXPLAIN does: "latest", "timestamp 1700000000000".
func (s Startup) String() string {
	if s.Mode == StartupTimestamp {
		return fmt.Sprintf("%s %d", s.Mode, s.Timestamp)
	}
	return string(s.Mode)
}

// WithLocation is the session's time zone, in which a 'yyyy-MM-dd
// HH:mm:ss' value of scan.startup.timestamp is read; without it, UTC.
func WithLocation(loc *time.Location) Option {
	return func(o *plannerOptions) { o.loc = loc }
}

// ParseStartup reads scan.startup.mode (full when absent; any case) and
// scan.startup.timestamp (epoch milliseconds, or 'yyyy-MM-dd HH:mm:ss' in
// loc; nil: UTC) from a scan's options. The timestamp mode without a
// timestamp is Fluss's error; a timestamp with another mode is refused
// rather than ignored. Errors wrap ErrInvalidOption.
func ParseStartup(opts map[string]string, loc *time.Location) (Startup, error) {
	s := Startup{Mode: StartupFull}
	if v, ok := opts[OptScanStartupMode]; ok {
		switch m := StartupMode(strings.ToLower(strings.TrimSpace(v))); m {
		case StartupFull, StartupEarliest, StartupLatest, StartupTimestamp:
			s.Mode = m
		default:
			return Startup{}, fmt.Errorf("%w: '%s' = '%s': want 'full', 'earliest', 'latest' or 'timestamp'",
				metadata.ErrInvalidOption, OptScanStartupMode, v)
		}
	}
	v, hasTS := opts[OptScanStartupTimestamp]
	switch {
	case s.Mode == StartupTimestamp && (!hasTS || strings.TrimSpace(v) == ""):
		return Startup{}, fmt.Errorf("%w: '%s' is required int 'TIMESTAMP' startup mode but missing.",
			metadata.ErrInvalidOption, OptScanStartupTimestamp)
	case s.Mode != StartupTimestamp && hasTS:
		return Startup{}, fmt.Errorf("%w: '%s' is set but '%s' is '%s'; it is read only in 'timestamp' startup mode",
			metadata.ErrInvalidOption, OptScanStartupTimestamp, OptScanStartupMode, s.Mode)
	case hasTS:
		ts, err := parseTimestampOption(OptScanStartupTimestamp, strings.TrimSpace(v), loc)
		if err != nil {
			return Startup{}, err
		}
		s.Timestamp = ts
	}
	return s, nil
}
