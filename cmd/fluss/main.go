// Command fluss is an interactive SQL shell on an embedded fluss
// database, in the manner of sqlite3 and duckdb: it runs statements and
// dot commands typed at a prompt (with line editing and history), given
// with -c, or piped on standard input.
//
//	fluss [flags] [DSN]
//
// DSN is a database directory (with ?key=value options) and defaults to
// fluss-data. With -c or with standard input that is not a terminal the
// shell runs the script and exits; the first error stops it, is written
// to standard error and makes the exit status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// defaultDSN is the database the shell opens when given none.
const defaultDSN = "fluss-data"

func main() {
	env := environment{
		stdin:   os.Stdin,
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		inTTY:   isTerminal(os.Stdin) && isTerminal(os.Stdout),
		errTTY:  isTerminal(os.Stderr),
		history: historyPath(),
	}
	os.Exit(run(context.Background(), os.Args[1:], env))
}

// environment is what the shell reads from and writes to; tests run the
// shell in-process with their own.
type environment struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// inTTY: standard input and output are a terminal, so the session is
	// interactive; errTTY: standard error is one, so progress is drawn.
	inTTY, errTTY bool
	// history is the file interactive sessions keep their history in; ""
	// keeps none.
	history string
}

// run is the shell's main: it returns the exit status.
func run(ctx context.Context, args []string, env environment) int {
	fs := flag.NewFlagSet("fluss", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	command := fs.String("c", "", "run `SQL` (statements and dot commands, one per line) and exit")
	mode := fs.String("mode", modeTable, "output `mode`: "+strings.Join(modes, ", "))
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: fluss [flags] [DSN]\n\nDSN is a database directory (default %s). Flags:\n", defaultDSN)
		fs.PrintDefaults()
	}
	// Flags may come after the DSN too: parse on past each positional
	// argument.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) > 1 {
		fs.Usage()
		return 2
	}
	dsn := defaultDSN
	if len(positional) == 1 {
		dsn = positional[0]
	}
	sh := newShell(env.stdout, env.stderr, env.errTTY)
	if err := sh.dotMode(ctx, []string{*mode}); err != nil {
		sh.report(err)
		return 2
	}
	if err := sh.open(ctx, dsn); err != nil {
		sh.report(fmt.Errorf("opening %s: %w", dsn, err))
		return 1
	}
	var err error
	switch {
	case *command != "":
		err = sh.runScript(ctx, strings.NewReader(*command))
	case env.inTTY:
		err = sh.interactive(ctx, env.history)
	default:
		err = sh.runScript(ctx, env.stdin)
	}
	status := 0
	if err != nil && !errors.Is(err, errQuit) {
		sh.report(err)
		status = 1
	}
	sh.out.Flush()
	if err := sh.close(); err != nil {
		sh.report(err)
		status = 1
	}
	return status
}

// isTerminal reports whether f is a character device: a terminal, for
// the shell's purposes.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
