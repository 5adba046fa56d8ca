package query

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

func TestParseTimeZone(t *testing.T) {
	at := time.Date(2026, 1, 3, 2, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		wall string
	}{
		{"+05:30", "08:00"}, {"-13:59", "12:31"}, {"+14:00", "16:30"}, {"+0:00", "02:30"},
		{"UTC", "02:30"}, {"Asia/Tokyo", "11:30"},
	} {
		loc, err := ParseTimeZone(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.wall, at.In(loc).Format("15:04"), c.in)
	}
	loc, err := ParseTimeZone("system")
	require.NoError(t, err)
	require.Equal(t, time.Local, loc)
	for _, bad := range []string{"", "+14:01", "-14:00", "+5", "+05:3", "+05:60", "Mars/Olympus", "Local", "+aa:bb"} {
		_, err := ParseTimeZone(bad)
		require.ErrorIs(t, err, metadata.ErrInvalidValue, bad)
		require.ErrorContains(t, err, "'"+bad+"'")
	}
}

func set(t *testing.T, v *Variables, sql string) error {
	t.Helper()
	st, err := sqlplan.Parse(sql)
	require.NoError(t, err, sql)
	return v.Apply(st.(*sqlplan.Set))
}

// A SET applies all its assignments or none.
func TestVariablesApply(t *testing.T) {
	v := NewVariables(time.UTC)
	require.Equal(t, "UTC", v.TimeZone)
	require.NoError(t, set(t, v, "SET time_zone = 'Europe/Berlin', foreign_key_checks = 0, sql_mode = 'traditional'"))
	require.Equal(t, "Europe/Berlin", v.Location.String())
	require.False(t, v.ForeignKeyChecks)
	require.Equal(t, "TRADITIONAL", v.SQLMode)
	got, err := v.Lookup("SESSION.foreign_key_checks")
	require.NoError(t, err)
	require.Equal(t, int64(0), got)

	before := *v
	require.ErrorIs(t, set(t, v, "SET foreign_key_checks = 1, time_zone = 'nowhere'"), metadata.ErrInvalidValue)
	require.Equal(t, before, *v, "nothing of a failed SET is applied")

	require.NoError(t, set(t, v, "SET NAMES utf8 COLLATE utf8_general_ci"))
	require.Equal(t, "utf8", v.Charset)
	require.Equal(t, "utf8_general_ci", v.Collation)
	require.NoError(t, set(t, v, "SET CHARACTER SET DEFAULT, foreign_key_checks = DEFAULT"))
	require.Equal(t, "utf8mb4", v.Charset)
	require.Equal(t, "utf8mb4_bin", v.Collation)
	require.True(t, v.ForeignKeyChecks)
	require.ErrorIs(t, set(t, v, "SET NAMES utf8mb4 COLLATE latin1_swedish_ci"), metadata.ErrUnsupported)
	require.ErrorIs(t, set(t, v, "SET auto_increment_increment = 2"), metadata.ErrUnsupported)
	require.NoError(t, set(t, v, "SET auto_increment_increment = 1"))

	_, err = v.Lookup("global.version")
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = v.Lookup("nope")
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.ErrorContains(t, err, "Unknown system variable 'nope'")
}
