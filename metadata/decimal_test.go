package metadata

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecimalString(t *testing.T) {
	cases := []struct {
		d    DecimalValue
		want string
	}{
		{NewDecimal(-123400, 4), "-12.3400"},
		{NewDecimal(5, 3), "0.005"},
		{NewDecimal(-5, 3), "-0.005"},
		{NewDecimal(0, 2), "0.00"},
		{NewDecimal(42, 0), "42"},
		{NewDecimal(math.MinInt64, 0), "-9223372036854775808"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.d.String())
	}
}

func TestParseDecimal(t *testing.T) {
	cases := []struct {
		s     string
		p, s2 int
		want  string
	}{
		{"12.345", 10, 2, "12.35"},
		{"-12.345", 10, 2, "-12.35"},
		{"+1", 3, 0, "1"},
		{"1.", 3, 1, "1.0"},
		{".5", 3, 0, "1"},
		{"-.5", 3, 0, "-1"},
		{"0.49", 3, 0, "0"},
		{"1E2", 5, 1, "100.0"},
		{"125e-2", 5, 2, "1.25"},
		{"  7  ", 2, 0, "7"},
		{"0.000000000000000000000000000000000000001", 38, 38, "0.00000000000000000000000000000000000000"},
		{"99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999"},
		{"-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999"},
		{"1e-1000", 5, 2, "0.00"},
	}
	for _, c := range cases {
		d, err := ParseDecimal(c.s, c.p, c.s2)
		require.NoError(t, err, c.s)
		require.Equal(t, c.want, d.String(), c.s)
		require.Equal(t, int32(c.s2), d.Scale)
	}
	for _, bad := range []struct {
		s     string
		p, s2 int
	}{
		{"100000000000000000000000000000000000000", 38, 0},
		{"999.995", 5, 2},
		{"abc", 5, 2},
		{"1e", 5, 2},
		{"1e5000", 38, 0},
		{"", 5, 2},
		{"1.2.3", 5, 2},
		{"--1", 5, 2},
	} {
		_, err := ParseDecimal(bad.s, bad.p, bad.s2)
		require.ErrorIs(t, err, ErrInvalidValue, bad.s)
	}
	_, err := ParseDecimal("1", 39, 0)
	require.ErrorIs(t, err, ErrInvalidType)
	_, err = ParseDecimal("1", 5, 6)
	require.ErrorIs(t, err, ErrInvalidType)
}

func TestDecimalRescaleCmpFloat(t *testing.T) {
	d := NewDecimal(1250, 3) // 1.250
	r, ok := d.Rescale(2)
	require.True(t, ok)
	require.Equal(t, "1.25", r.String())
	_, ok = d.Rescale(1) // 1.25 -> would drop the 5
	require.False(t, ok)
	r, ok = d.Rescale(10)
	require.True(t, ok)
	require.Equal(t, "1.2500000000", r.String())
	big, err := ParseDecimal("99999999999999999999999999999999999999", 38, 0)
	require.NoError(t, err)
	_, ok = big.Rescale(1) // 39 digits
	require.False(t, ok)
	_, ok = d.Rescale(-1)
	require.False(t, ok)

	require.Equal(t, 0, NewDecimal(125, 2).Cmp(NewDecimal(1250, 3)))
	require.Equal(t, -1, NewDecimal(-1, 0).Cmp(NewDecimal(1, 5)))
	require.Equal(t, 1, big.Cmp(NewDecimal(1, 10)))
	require.Equal(t, 1.25, NewDecimal(125, 2).Float64())
	require.Equal(t, -0.1, NewDecimal(-1, 1).Float64())
}
