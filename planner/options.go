package planner

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// readOptions are the keys of ScanSpec.Options a scan reads, in the
// order an error lists them.
var readOptions = []string{OptReadOptimized, OptMaxRecordsPerSplit, OptIncrementalStart, OptIncrementalEnd,
	OptScanMode, OptScanStartupMode, OptScanStartupTimestamp, OptScanBoundedMode, OptScanBoundedTimestamp}

// checkNoStartup refuses scan.startup.* in the planners of reads that do
// not start anywhere but where their branch says (a batch read of a table
// reads all of it): honoured by t$changelog alone, the options would
// otherwise be ignored.
func checkNoStartup(opts map[string]string, what string) error {
	for _, k := range []string{OptScanStartupMode, OptScanStartupTimestamp} {
		if _, ok := opts[k]; ok {
			return fmt.Errorf("%w: '%s' applies to t$changelog; %s", metadata.ErrUnsupported, k, what)
		}
	}
	return nil
}

// CheckOptions refuses a read option no planner reads, naming it: a
// misspelt hint would otherwise leave the scan as if it had not been
// given. Values are checked where they are read, by the planners.
func CheckOptions(opts map[string]string) error {
	for k := range opts {
		if !isReadOption(k) {
			known := make([]string, len(readOptions))
			for i, o := range readOptions {
				known[i] = "'" + o + "'"
			}
			return fmt.Errorf("%w: unknown read option '%s'; known: %s", metadata.ErrInvalidOption, k, strings.Join(known, ", "))
		}
	}
	streaming, _, _, err := StreamOptions(opts, nil)
	if err != nil {
		return err
	}
	for _, k := range []string{OptScanBoundedMode, OptScanBoundedTimestamp} {
		if _, ok := opts[k]; ok && !streaming {
			return fmt.Errorf("%w: '%s' applies to a streaming read ('%s' = '%s'); a batch read always stops", metadata.ErrUnsupported, k, OptScanMode, ScanModeStreaming)
		}
	}
	if streaming {
		return fmt.Errorf("%w: a streaming read ('%s' = '%s') is a SELECT of one table, not part of another statement", metadata.ErrUnsupported, OptScanMode, ScanModeStreaming)
	}
	return nil
}

// WithoutStreamOptions returns opts without the keys StreamOptions reads:
// what the planners of the streaming read's state are given.
func WithoutStreamOptions(opts map[string]string) map[string]string {
	out := make(map[string]string, len(opts))
	for k, v := range opts {
		switch k {
		case OptScanMode, OptScanStartupMode, OptScanStartupTimestamp, OptScanBoundedMode, OptScanBoundedTimestamp:
		default:
			out[k] = v
		}
	}
	return out
}

func isReadOption(k string) bool {
	for _, o := range readOptions {
		if k == o {
			return true
		}
	}
	return false
}
