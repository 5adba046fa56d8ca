package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// screen collects what a program writes to its terminal.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int // bytes already matched by expect
	more chan struct{}
	done chan struct{}
}

func newScreen(r io.Reader) *screen {
	s := &screen{more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
			if err != nil {
				return // EIO once the program has exited
			}
		}
	}()
	return s
}

// expectDeadline is how long a program on a loaded machine may take to
// answer: generous, since expect returns as soon as the text shows.
const expectDeadline = 90 * time.Second

// expect waits until want appears on the screen after what earlier
// expects matched, and moves past it.
func (s *screen) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(expectDeadline)
	for {
		s.mu.Lock()
		all := s.buf.String()
		i := strings.Index(all[s.seen:], want)
		if i >= 0 {
			s.seen += i + len(want)
		}
		s.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-s.more:
		case <-deadline:
			t.Fatalf("%q did not appear on the screen; after the last match it shows:\n%q", want, all[s.seen:])
		}
	}
}

// TestInteractive drives the shell on a real pseudo-terminal: it types
// statements (one over two lines, with the continuation prompt), reads
// the table from the screen, recalls the two-line statement as one with
// the up arrow, sees an error's caret, quits and finds the history file.
func TestInteractive(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	cmd := exec.Command(bin, filepath.Join(home, "db"))
	cmd.Env = append(os.Environ(), "HOME="+home, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	require.NoError(t, err)
	defer tty.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	scr := newScreen(tty)
	typeKeys := func(keys string) {
		_, err := tty.Write([]byte(keys))
		require.NoError(t, err)
	}

	scr.expect(t, "fluss> ")
	typeKeys("CREATE TABLE t (id BIGINT, name STRING);\r")
	scr.expect(t, "fluss> ")
	typeKeys("INSERT INTO t VALUES (1, 'ann'), (2, NULL);\r")
	scr.expect(t, "fluss> ")
	typeKeys("SELECT id,\r")
	scr.expect(t, continuePrompt)
	typeKeys("  name FROM t ORDER BY id;\r")
	table := "| id | name |\r\n+----+------+\r\n|  1 | ann  |\r\n|  2 | NULL |\r\n+----+------+\r\n"
	scr.expect(t, table)
	scr.expect(t, "fluss> ")

	typeKeys("\x1b[A") // up arrow: the last statement, its two lines as one
	scr.expect(t, "SELECT id,   name FROM t ORDER BY id;")
	typeKeys("\r")
	scr.expect(t, table)
	scr.expect(t, "fluss> ")

	typeKeys("SELECT nme FROM t;\r")
	scr.expect(t, "Error: fluss: column nme does not exist in table fluss.t at line 1, column 8\r\nSELECT nme FROM t\r\n       ^\r\n")
	scr.expect(t, "fluss> ")

	typeKeys(".quit\r")
	select {
	case err := <-exited:
		require.NoError(t, err)
	case <-time.After(expectDeadline):
		t.Fatal("the shell did not exit after .quit")
	}
	hist, err := os.ReadFile(filepath.Join(home, ".fluss_history"))
	require.NoError(t, err)
	require.Contains(t, string(hist), "SELECT id,   name FROM t ORDER BY id;\n")
	require.Contains(t, string(hist), ".quit\n")

	// Closing the terminal ends the reader.
	tty.Close()
	select {
	case <-scr.done:
	case <-time.After(expectDeadline):
		t.Fatal("the screen reader did not end")
	}
}
