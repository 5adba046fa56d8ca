package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

const (
	prompt         = "fluss> "
	continuePrompt = "   ...> "
)

// historyPath is ~/.fluss_history, or "" when there is no home directory.
func historyPath() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".fluss_history")
}

// interactive reads statements from the terminal with line editing and
// history until .quit or end of input (Ctrl-D). Errors are reported and
// the session goes on. Ctrl-C at the prompt drops the statement being
// typed; while a statement runs it cancels the statement.
func (s *shell) interactive(ctx context.Context, history string) error {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	if history != "" {
		if f, err := os.Open(history); err == nil {
			ln.ReadHistory(f)
			f.Close()
		}
	}
	fmt.Fprintf(s.out, "fluss shell on %s: end statements with \";\", enter .help for the commands.\n", s.dsn)
	s.out.Flush()
	var sc script
	var entry []string
	for {
		p := prompt
		if sc.pending != "" {
			p = continuePrompt
		}
		line, err := ln.Prompt(p)
		if errors.Is(err, liner.ErrPromptAborted) {
			sc.pending, entry = "", nil
			continue
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(s.out)
			break
		}
		if err != nil {
			return err
		}
		entry = append(entry, line)
		err = s.execInteractive(ctx, &sc, line)
		if sc.pending == "" {
			// A statement typed over several lines is recalled as one.
			if h := strings.TrimSpace(strings.Join(entry, " ")); h != "" {
				ln.AppendHistory(h)
			}
			entry = nil
		}
		if errors.Is(err, errQuit) {
			break
		}
		if err != nil {
			s.report(err)
		}
	}
	s.out.Flush()
	if history == "" {
		return nil
	}
	return saveHistory(ln, history)
}

// saveHistory writes the session's history (liner keeps the last
// liner.HistoryLimit entries) to path, readable by its owner only: it
// holds whatever statements were typed.
func saveHistory(ln *liner.State, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("saving history: %w", err)
	}
	_, err = ln.WriteHistory(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("saving history: %w", err)
	}
	return nil
}

// execInteractive runs one typed line; Ctrl-C while it runs cancels it
// rather than ending the shell.
func (s *shell) execInteractive(ctx context.Context, sc *script, line string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	err := s.execLine(ctx, sc, line)
	if err != nil {
		// What follows a failed statement on the same line is dropped
		// with it.
		sc.pending = ""
	}
	return err
}
