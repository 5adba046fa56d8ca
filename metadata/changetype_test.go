package metadata

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChangeTypeNames(t *testing.T) {
	for _, tc := range []struct {
		c           ChangeType
		short, long string
		retraction  bool
	}{
		{ChangeAppendOnly, "+A", "insert", false},
		{ChangeInsert, "+I", "insert", false},
		{ChangeUpdateBefore, "-U", "update_before", true},
		{ChangeUpdateAfter, "+U", "update_after", false},
		{ChangeDelete, "-D", "delete", true},
	} {
		require.True(t, tc.c.Valid())
		require.Equal(t, tc.short, tc.c.String())
		require.Equal(t, tc.long, tc.c.ChangelogName())
		require.Equal(t, tc.retraction, tc.c.IsRetraction())
	}
	bad := ChangeType(5)
	require.False(t, bad.Valid())
	require.Equal(t, "ChangeType(5)", bad.String())
	require.Equal(t, "ChangeType(5)", bad.ChangelogName())
}
