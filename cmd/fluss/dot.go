package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/flusslite/fluss"
	"github.com/flusslite/fluss/metadata"
)

// dotCommand is one of the shell's own commands.
type dotCommand struct {
	name  string
	args  string // usage of the arguments
	help  string
	nargs [2]int // least and most arguments
	run   func(s *shell, ctx context.Context, args []string) error
}

var dotCommands []dotCommand

func init() {
	// Set here rather than in the declaration: .help reads the table it
	// is part of.
	dotCommands = []dotCommand{
		{"explain", "on|off", "show the plan of every SELECT before its result", [2]int{0, 1}, (*shell).dotExplain},
		{"exit", "", "leave the shell", [2]int{0, 0}, (*shell).dotQuit},
		{"help", "", "show this help", [2]int{0, 0}, (*shell).dotHelp},
		{"import", "FILE TABLE", "load a CSV or Parquet file into TABLE, creating it from the file when it does not exist", [2]int{2, 2}, (*shell).dotImport},
		{"mode", "table|csv|json|line", "set how results are printed", [2]int{0, 1}, (*shell).dotMode},
		{"open", "DSN", "close this database and open DSN", [2]int{1, 1}, (*shell).dotOpen},
		{"partitions", "TABLE", "list the partitions of TABLE", [2]int{1, 1}, (*shell).dotPartitions},
		{"quit", "", "leave the shell", [2]int{0, 0}, (*shell).dotQuit},
		{"read", "FILE", "run the statements and commands in FILE", [2]int{1, 1}, (*shell).dotRead},
		{"schema", "[TABLE]", "show the CREATE TABLE of TABLE, or of every table", [2]int{0, 1}, (*shell).dotSchema},
		{"snapshot", "TABLE", "take a KV snapshot of every bucket of primary-key TABLE now", [2]int{1, 1}, (*shell).dotSnapshot},
		{"tables", "", "list the tables of the current database", [2]int{0, 0}, (*shell).dotTables},
		{"tier", "TABLE", "tier lake-enabled TABLE into the lake now", [2]int{1, 1}, (*shell).dotTier},
		{"timer", "on|off", "print rows and elapsed time after each statement", [2]int{0, 1}, (*shell).dotTimer},
	}
}

// dot runs a dot command line such as ".import data.csv t".
func (s *shell) dot(ctx context.Context, line string) error {
	defer s.out.Flush()
	words, err := splitArgs(line[1:])
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return fmt.Errorf("empty command: enter .help for the commands")
	}
	name := strings.ToLower(words[0])
	for _, c := range dotCommands {
		if c.name != name {
			continue
		}
		args := words[1:]
		if len(args) < c.nargs[0] || len(args) > c.nargs[1] {
			return fmt.Errorf("usage: .%s %s", c.name, c.args)
		}
		return c.run(s, ctx, args)
	}
	return fmt.Errorf("unknown command .%s: enter .help for the commands", words[0])
}

// splitArgs splits a command line into words; a word may be quoted with
// ' or " to hold spaces.
func splitArgs(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c in command", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func (s *shell) dotHelp(_ context.Context, _ []string) error {
	fmt.Fprintln(s.out, "SQL statements end with \";\" and may span lines. Commands:")
	for _, c := range dotCommands {
		use := "." + c.name
		if c.args != "" {
			use += " " + c.args
		}
		fmt.Fprintf(s.out, "  %-28s %s\n", use, c.help)
	}
	return nil
}

func (s *shell) dotQuit(context.Context, []string) error { return errQuit }

func (s *shell) dotMode(_ context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(s.out, s.mode)
		return nil
	}
	m := strings.ToLower(args[0])
	for _, known := range modes {
		if m == known {
			s.mode = m
			return nil
		}
	}
	return fmt.Errorf("unknown mode %q: use one of %s", args[0], strings.Join(modes, ", "))
}

// onOff reads the argument of a switch command, or prints its state.
func (s *shell) onOff(name string, v *bool, args []string) error {
	if len(args) == 0 {
		state := "off"
		if *v {
			state = "on"
		}
		fmt.Fprintf(s.out, "%s is %s\n", name, state)
		return nil
	}
	switch strings.ToLower(args[0]) {
	case "on":
		*v = true
	case "off":
		*v = false
	default:
		return fmt.Errorf("usage: .%s on|off", name)
	}
	return nil
}

func (s *shell) dotTimer(_ context.Context, args []string) error {
	return s.onOff("timer", &s.timer, args)
}

func (s *shell) dotExplain(_ context.Context, args []string) error {
	return s.onOff("explain", &s.explain, args)
}

func (s *shell) dotOpen(ctx context.Context, args []string) error {
	return s.open(ctx, args[0])
}

// maxReadDepth is how deeply .read may nest, as in sqlite3's shell: deep
// enough for scripts that include others, shallow enough that a script
// reading itself ends with an error naming it instead of exhausting the
// process's file descriptors.
const maxReadDepth = 25

func (s *shell) dotRead(ctx context.Context, args []string) error {
	if s.readDepth >= maxReadDepth {
		return fmt.Errorf(".read %s: scripts nested more than %d deep; does a script read itself?", args[0], maxReadDepth)
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	s.readDepth++
	defer func() { s.readDepth-- }()
	return s.runScript(ctx, f)
}

func (s *shell) dotTables(ctx context.Context, _ []string) error {
	tables, err := s.tableNames(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		fmt.Fprintln(s.out, t)
	}
	return nil
}

func (s *shell) tableNames(ctx context.Context) ([]string, error) {
	rows, err := s.conn.QueryContext(ctx, "SHOW TABLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// queryPrint runs a statement the shell builds and prints its result in
// the current mode.
func (s *shell) queryPrint(ctx context.Context, text string, args ...any) error {
	rows, err := s.conn.QueryContext(ctx, text, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	src, err := sqlSource(rows)
	if err != nil {
		return err
	}
	if _, err := printRows(s.out, s.mode, src); err != nil {
		return err
	}
	return rows.Close()
}

func (s *shell) dotPartitions(ctx context.Context, args []string) error {
	return s.queryPrint(ctx, "SHOW PARTITIONS "+quoteName(args[0]))
}

func (s *shell) dotSnapshot(ctx context.Context, args []string) error {
	return s.queryPrint(ctx, "CALL sys.kv_snapshot(?)", args[0])
}

// dotTier runs one tiering round of a table; on a terminal a spinner
// with the elapsed time runs meanwhile, since a round over a large log
// takes a while and says nothing until it ends.
func (s *shell) dotTier(ctx context.Context, args []string) error {
	stop := s.spin("tiering " + args[0])
	start := time.Now()
	rows, err := s.conn.QueryContext(ctx, "CALL sys.tier(?)", args[0])
	stop()
	if err != nil {
		return err
	}
	defer rows.Close()
	src, err := sqlSource(rows)
	if err != nil {
		return err
	}
	if _, err := printRows(s.out, s.mode, src); err != nil {
		return err
	}
	if s.errTTY {
		s.out.Flush()
		fmt.Fprintf(s.errOut, "tiered %s in %s\n", args[0], elapsed(start))
	}
	return rows.Close()
}

// dotSchema prints CREATE TABLE statements. The driver has no SHOW
// CREATE TABLE yet, so the statement is rebuilt from DESCRIBE: columns,
// types, NOT NULL, defaults, comments, primary key, partition keys and
// bucket key.
// When the driver answers SHOW CREATE TABLE, its text is used instead.
func (s *shell) dotSchema(ctx context.Context, args []string) error {
	tables := args
	if len(tables) == 0 {
		var err error
		if tables, err = s.tableNames(ctx); err != nil {
			return err
		}
	}
	for _, t := range tables {
		text, err := s.createTable(ctx, t)
		if err != nil {
			return err
		}
		fmt.Fprintln(s.out, text+";")
	}
	return nil
}

func (s *shell) createTable(ctx context.Context, table string) (string, error) {
	if text, err := s.showCreate(ctx, table); err == nil {
		return text, nil
	} else if !errors.Is(err, fluss.ErrSyntax) && !errors.Is(err, fluss.ErrUnsupported) {
		return "", err
	}
	rows, err := s.conn.QueryContext(ctx, "DESCRIBE "+quoteName(table))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var cols, pk, part, bucket []string
	for rows.Next() {
		var name, typ, key string
		var null bool
		var dflt, comment *string
		if err := rows.Scan(&name, &typ, &null, &key, &dflt, &comment); err != nil {
			return "", err
		}
		def := "  " + quoteIdent(name) + " " + typ
		if !null {
			def += " NOT NULL"
		}
		if dflt != nil {
			def += " DEFAULT " + *dflt
		}
		if comment != nil {
			def += " COMMENT " + quoteString(*comment)
		}
		cols = append(cols, def)
		for k := range strings.SplitSeq(key, ",") {
			switch k {
			case "PRI":
				pk = append(pk, quoteIdent(name))
			case "PART":
				part = append(part, quoteIdent(name))
			case "BUCKET":
				bucket = append(bucket, name)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(pk) > 0 {
		cols = append(cols, "  PRIMARY KEY ("+strings.Join(pk, ", ")+") NOT ENFORCED")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n%s\n)", quoteName(table), strings.Join(cols, ",\n"))
	if len(part) > 0 {
		fmt.Fprintf(&b, " PARTITIONED BY (%s)", strings.Join(part, ", "))
	}
	// A key table's bucket key defaults to its physical key: say it only
	// when it differs.
	if len(bucket) > 0 && !sameBucketKey(bucket, pk, part) {
		fmt.Fprintf(&b, " WITH ('bucket.key' = %s)", quoteString(strings.Join(bucket, ",")))
	}
	return b.String(), nil
}

// sameBucketKey reports whether bucket is the default bucket key of a
// primary-key table: its key without the partition keys.
func sameBucketKey(bucket, pk, part []string) bool {
	if len(pk) == 0 {
		return false
	}
	var physical []string
	for _, k := range pk {
		isPart := false
		for _, p := range part {
			isPart = isPart || p == k
		}
		if !isPart {
			physical = append(physical, k)
		}
	}
	if len(physical) != len(bucket) {
		return false
	}
	for i := range bucket {
		if physical[i] != quoteIdent(bucket[i]) {
			return false
		}
	}
	return true
}

// showCreate asks the driver for SHOW CREATE TABLE; the statement's text
// is the last column of its one row, as in MySQL.
func (s *shell) showCreate(ctx context.Context, table string) (string, error) {
	rows, err := s.conn.QueryContext(ctx, "SHOW CREATE TABLE "+quoteName(table))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	if !rows.Next() || len(cols) == 0 {
		if err := rows.Err(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("SHOW CREATE TABLE %s returned no row: %w", table, fluss.ErrUnsupported)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSpace(fmt.Sprint(vals[len(vals)-1])), ";"), nil
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reserved are words that name a column only when quoted; the list need
// not be complete, since a needless quote is harmless and quoteIdent
// quotes anything but plain words anyway.
var reserved = map[string]bool{
	"ADD": true, "ALL": true, "ALTER": true, "AND": true, "AS": true, "ASC": true,
	"BETWEEN": true, "BY": true, "CALL": true, "CASE": true, "CHECK": true, "COLUMN": true,
	"COMMENT": true, "CREATE": true, "CROSS": true, "CURRENT_DATE": true, "DATABASE": true,
	"DATE": true, "DEFAULT": true, "DELETE": true, "DESC": true, "DESCRIBE": true,
	"DISTINCT": true, "DIV": true, "DROP": true, "ELSE": true, "END": true, "EXISTS": true,
	"EXPLAIN": true, "FALSE": true, "FROM": true, "FULL": true, "GROUP": true, "HAVING": true,
	"IF": true, "IN": true, "INDEX": true, "INNER": true, "INSERT": true, "INTERVAL": true,
	"INTO": true, "IS": true, "JOIN": true, "KEY": true, "LEFT": true, "LIKE": true,
	"LIMIT": true, "MOD": true, "NOT": true, "NULL": true, "OFFSET": true, "ON": true,
	"OR": true, "ORDER": true, "OUTER": true, "PARTITION": true, "PARTITIONED": true,
	"PRIMARY": true, "RIGHT": true, "SELECT": true, "SET": true, "SHOW": true, "TABLE": true,
	"THEN": true, "TIME": true, "TIMESTAMP": true, "TO": true, "TRUE": true, "UNION": true,
	"UPDATE": true, "USE": true, "USING": true, "VALUES": true, "WHEN": true, "WHERE": true,
	"WITH": true,
}

// quoteIdent quotes a name with backticks unless it is a plain word that
// is not reserved.
func quoteIdent(name string) string {
	if plainIdent.MatchString(name) && !reserved[strings.ToUpper(name)] {
		return name
	}
	return metadata.Backquote(name)
}

// quoteName quotes a table name given as t or db.t; a name the user
// already quoted is used as it is.
func quoteName(name string) string {
	if strings.Contains(name, "`") {
		return name
	}
	if db, t, ok := strings.Cut(name, "."); ok {
		return quoteIdent(db) + "." + quoteIdent(t)
	}
	return quoteIdent(name)
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}
