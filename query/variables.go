package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Variables are a connection's session variables, MySQL's words for its
// state: SET assigns them, SHOW VARIABLES, information_schema.
// session_variables and @@name read them. The connection owns them and
// every statement's session points at them, so a SET lasts until the
// connection closes (also across database/sql's pool, as in MySQL). Not
// safe for concurrent use: a connection runs one statement at a time.
type Variables struct {
	// SQLMode is sql_mode as set, upper case, modes comma-separated.
	// Only the modes that describe what fluss does anyway are accepted
	// (sqlModes): the value is kept for clients that read it back.
	SQLMode string
	// TimeZone is time_zone as set ("SYSTEM", "+05:30", "UTC",
	// "Europe/Berlin"); Location is the zone it names, the connection's
	// loc: TIMESTAMP_LTZ values are returned in it and time.Time
	// arguments are moved into it.
	TimeZone string
	Location *time.Location
	// ForeignKeyChecks (foreign_key_checks): when on, a foreign key's
	// parent table must exist with the referenced columns when the key
	// is declared, and a table another table's foreign key references
	// cannot be dropped. Keys are never enforced on rows either way.
	ForeignKeyChecks bool
	// Charset and Collation are what SET NAMES set
	// (character_set_client, _connection and _results;
	// collation_connection). Only UTF-8 character sets are accepted:
	// strings are UTF-8 and compare byte-wise whatever the collation.
	Charset, Collation string
}

// defaultSQLMode is MySQL 8's default sql_mode.
const defaultSQLMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// NewVariables returns the variables a connection starts with; loc is
// the DSN's loc.
func NewVariables(loc *time.Location) *Variables {
	if loc == nil {
		loc = time.UTC
	}
	tz := loc.String()
	if loc == time.Local {
		tz = "SYSTEM"
	}
	return &Variables{SQLMode: defaultSQLMode, TimeZone: tz, Location: loc, ForeignKeyChecks: true,
		Charset: "utf8mb4", Collation: "utf8mb4_bin"}
}

// sqlModes are the sql_mode values accepted: strictness fluss has
// whatever the mode (a value that does not fit its column is refused, a
// zero date is no date) and modes with nothing to act on. Modes that
// would change how statements parse or compute (ANSI_QUOTES,
// PIPES_AS_CONCAT, NO_BACKSLASH_ESCAPES, ...) are refused.
var sqlModes = []string{"ONLY_FULL_GROUP_BY", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE",
	"NO_ZERO_DATE", "ERROR_FOR_DIVISION_BY_ZERO", "NO_ENGINE_SUBSTITUTION", "NO_DIR_IN_CREATE", "TRADITIONAL"}

// utf8Charsets are the character sets SET NAMES accepts.
var utf8Charsets = []string{"utf8mb4", "utf8", "utf8mb3"}

// variable is one system variable: its value as SHOW VARIABLES shows it
// and as @@name reads it.
type variable struct {
	name  string
	show  string
	value any
}

// list returns every variable, sorted by name.
func (v *Variables) list() []variable {
	onOff := func(b bool) (string, int64) {
		if b {
			return "ON", 1
		}
		return "OFF", 0
	}
	fkShow, fkSel := onOff(v.ForeignKeyChecks)
	str := func(name, val string) variable { return variable{name, val, val} }
	system := "UTC"
	if name, _ := time.Now().Zone(); name != "" {
		system = name
	}
	out := []variable{
		{"autocommit", "ON", int64(1)},
		{"auto_increment_increment", "1", int64(1)},
		{"auto_increment_offset", "1", int64(1)},
		str("character_set_client", v.Charset),
		str("character_set_connection", v.Charset),
		str("character_set_database", "utf8mb4"),
		str("character_set_results", v.Charset),
		str("character_set_server", "utf8mb4"),
		str("collation_connection", v.Collation),
		str("collation_database", "utf8mb4_bin"),
		str("collation_server", "utf8mb4_bin"),
		{"foreign_key_checks", fkShow, fkSel},
		str("sql_mode", v.SQLMode),
		str("system_time_zone", system),
		str("time_zone", v.TimeZone),
		str("transaction_isolation", "REPEATABLE-READ"),
		{"transaction_read_only", "OFF", int64(0)},
		str("tx_isolation", "REPEATABLE-READ"),
		str("version", sqlplan.Version),
		str("version_comment", "fluss"),
	}
	return out
}

// Lookup returns the value of @@name (name without @@, in any case,
// with an optional session. or local. scope); an unknown name is an
// error naming it, as MySQL's.
func (v *Variables) Lookup(name string) (any, error) {
	lower := strings.ToLower(name)
	for _, scope := range []string{"session.", "local."} {
		lower = strings.TrimPrefix(lower, scope)
	}
	if strings.HasPrefix(lower, "global.") {
		return nil, fmt.Errorf("@@%s: fluss's variables belong to the connection (@@session.): %w", name, metadata.ErrUnsupported)
	}
	for _, x := range v.list() {
		if x.name == lower {
			return x.value, nil
		}
	}
	return nil, unknownVariable(name)
}

func unknownVariable(name string) error {
	return fmt.Errorf("Unknown system variable '%s': %w", name, metadata.ErrNotFound)
}

// Apply runs a SET: every assignment is checked first, then all take
// effect, so a SET with one bad assignment changes nothing.
func (v *Variables) Apply(s *sqlplan.Set) error {
	next := *v
	for _, a := range s.Assignments {
		if err := next.assign(a); err != nil {
			return err
		}
	}
	*v = next
	return nil
}

// assign applies one assignment to v.
func (v *Variables) assign(a sqlplan.VarAssignment) error {
	val := a.Value
	isDefault := !a.Quoted && strings.EqualFold(val, "DEFAULT")
	def := NewVariables(nil)
	cantSet := func() error {
		return fmt.Errorf("Variable '%s' can't be set to the value of '%s': %w", a.Name, val, metadata.ErrInvalidValue)
	}
	switch a.Name {
	case "names", "character set", "character_set_client", "character_set_connection", "character_set_results":
		cs := strings.ToLower(val)
		if isDefault {
			cs = def.Charset
		}
		if !slices.Contains(utf8Charsets, cs) {
			return fmt.Errorf("character set %q is not supported: fluss's strings are UTF-8 (utf8mb4): %w", val, metadata.ErrUnsupported)
		}
		v.Charset = cs
		if a.Name == "names" || a.Name == "character set" {
			v.Collation = cs + "_bin"
			if cs == "utf8mb4" {
				v.Collation = def.Collation
			}
		}
		if a.Collate != "" {
			return v.setCollation(a.Collate)
		}
		return nil
	case "collation_connection":
		if isDefault {
			v.Collation = def.Collation
			return nil
		}
		return v.setCollation(val)
	case "foreign_key_checks":
		b, ok := boolValue(val)
		if isDefault {
			b, ok = true, true
		}
		if !ok {
			return cantSet()
		}
		v.ForeignKeyChecks = b
		return nil
	case "autocommit":
		b, ok := boolValue(val)
		if isDefault {
			b, ok = true, true
		}
		switch {
		case !ok:
			return cantSet()
		case !b:
			return fmt.Errorf("SET autocommit = 0 is not supported: every statement outside a transaction commits; begin one with BeginTx: %w", metadata.ErrUnsupported)
		}
		return nil
	case "sql_mode":
		if isDefault {
			v.SQLMode = def.SQLMode
			return nil
		}
		var modes []string
		for _, m := range strings.Split(val, ",") {
			m = strings.ToUpper(strings.TrimSpace(m))
			if m == "" {
				continue
			}
			if !slices.Contains(sqlModes, m) {
				return fmt.Errorf("sql_mode %s is not supported (fluss behaves as under %s whatever sql_mode says; accepted: %s): %w",
					m, defaultSQLMode, strings.Join(sqlModes, ", "), metadata.ErrUnsupported)
			}
			modes = append(modes, m)
		}
		v.SQLMode = strings.Join(modes, ",")
		return nil
	case "time_zone":
		if isDefault {
			val = "SYSTEM"
		}
		loc, err := ParseTimeZone(val)
		if err != nil {
			return err
		}
		v.TimeZone, v.Location = val, loc
		return nil
	case "auto_increment_increment", "auto_increment_offset":
		if n, err := strconv.Atoi(val); (err != nil || n != 1) && !isDefault {
			return fmt.Errorf("%s = %s is not supported: auto-increment values step by 1: %w", a.Name, val, metadata.ErrUnsupported)
		}
		return nil
	case "transaction_isolation", "tx_isolation", "transaction_read_only", "tx_read_only":
		return fmt.Errorf("SET %s is not supported: choose the isolation level and read-only mode in BeginTx: %w", a.Name, metadata.ErrUnsupported)
	}
	for _, x := range v.list() {
		if x.name == a.Name {
			return fmt.Errorf("Variable '%s' is a read only variable: %w", a.Name, metadata.ErrUnsupported)
		}
	}
	return unknownVariable(a.Name)
}

// setCollation sets collation_connection to a collation of the
// connection's character set.
func (v *Variables) setCollation(c string) error {
	lc := strings.ToLower(c)
	cs, _, _ := strings.Cut(lc, "_")
	if !slices.Contains(utf8Charsets, cs) {
		return fmt.Errorf("collation %q is not supported: fluss's strings are UTF-8 and compare byte-wise (utf8mb4_bin): %w", c, metadata.ErrUnsupported)
	}
	v.Collation = lc
	return nil
}

// boolValue reads 0, 1, ON, OFF, TRUE or FALSE.
func boolValue(s string) (bool, bool) {
	switch strings.ToUpper(s) {
	case "1", "ON", "TRUE":
		return true, true
	case "0", "OFF", "FALSE":
		return false, true
	}
	return false, false
}

// ParseTimeZone reads a time_zone value as MySQL takes it: SYSTEM (the
// process's zone), an offset from -13:59 to +14:00 ('+05:30'), or a
// named zone (UTC, Europe/Berlin).
func ParseTimeZone(s string) (*time.Location, error) {
	bad := func(why string) error {
		return fmt.Errorf("Unknown or incorrect time zone: '%s' (%s): %w", s, why, metadata.ErrInvalidValue)
	}
	switch {
	case strings.EqualFold(s, "SYSTEM"):
		return time.Local, nil
	case s == "":
		return nil, bad("empty")
	case s[0] == '+' || s[0] == '-':
		h, m, ok := strings.Cut(s[1:], ":")
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil || len(m) != 2 || len(h) < 1 || len(h) > 2 || mm > 59 {
			return nil, bad("an offset is written +hh:mm")
		}
		secs := hh*3600 + mm*60
		if s[0] == '-' {
			secs = -secs
		}
		if secs < -(13*3600+59*60) || secs > 14*3600 {
			return nil, bad("an offset is between -13:59 and +14:00")
		}
		return time.FixedZone(s, secs), nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil || strings.EqualFold(s, "Local") {
		return nil, bad("not a zone name of the time zone database")
	}
	return loc, nil
}
