package logformat

import (
	"flag"
	"os"
	"testing"
)

// TestMain turns off the fuzzer's minimization of inputs that find new
// coverage, unless -fuzzminimizetime is given. Go minimizes each such
// input for up to 60 s by default, trying every cut of it, which is
// quadratic in its length; a batch is a kilobyte or more, so every
// minimization ran to the limit and a minimizing worker fuzzes nothing
// (FuzzDecodeBatch stalled at a few dozen executions a minute). A batch
// with bytes cut out is rarely still a batch, so minimizing gains little.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.fuzzminimizetime" })
	if !explicit {
		if err := flag.Set("test.fuzzminimizetime", "0"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
