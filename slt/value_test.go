package slt

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		v    any
		typ  byte
		want string
	}{
		{nil, 'I', "NULL"},
		{nil, 'R', "NULL"},
		{nil, 'T', "NULL"},
		{int64(-42), 'I', "-42"},
		{-7.9, 'I', "-7"},
		{7.9, 'I', "7"},
		{math.Inf(1), 'I', "9223372036854775807"},
		{"12.50", 'I', "12"},
		{"-3abc", 'I', "-3"},
		{"abc", 'I', "0"},
		{"9223372036854775807", 'I', "9223372036854775807"},
		{true, 'I', "1"},
		{int64(3), 'R', "3.000"},
		{2.0 / 3, 'R', "0.667"},
		{-0.0004, 'R', "-0.000"},
		{"1.5e2x", 'R', "150.000"},
		{[]byte("12.3456"), 'R', "12.346"},
		{"", 'T', "(empty)"},
		{"a b", 'T', "a b"},
		{"tab\there", 'T', "tab@here"},
		{"é", 'T', "@@"},
		{int64(5), 'T', "5"},
		{1.5, 'T', "1.5"},
	} {
		require.Equal(t, tc.want, Render(tc.v, tc.typ), "%#v as %c", tc.v, tc.typ)
	}
}

func TestSortValues(t *testing.T) {
	rows := func() [][]string { return [][]string{{"2", "b"}, {"10", "a"}, {"2", "a"}} }
	require.Equal(t, []string{"2", "b", "10", "a", "2", "a"}, sortValues(rows(), NoSort))
	// As strings: "10" sorts before "2".
	require.Equal(t, []string{"10", "a", "2", "a", "2", "b"}, sortValues(rows(), RowSort))
	require.Equal(t, []string{"10", "2", "2", "a", "a", "b"}, sortValues(rows(), ValueSort))
}

func TestHash(t *testing.T) {
	// md5 of "1\n2\n", as `printf '1\n2\n' | md5sum` gives it.
	require.Equal(t, "6ddb4095eb719e2a9f0a3f95677d24e0", Hash([]string{"1", "2"}))
}
