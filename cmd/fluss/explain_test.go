package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRenderPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want string
	}{
		{
			name: "lake-union with limit and a bracket in a literal",
			in: []string{
				"FlussScan: [db.t], Type: [LakeUpsert] [PushedPredicates: s = 'a]b', x > 1] [Limit: 10]",
				"Branch: lake-union (snapshot 3)",
				"Split: lake+log partition=- bucket=0 lake_files=1 log=5..9",
				"Split: log partition=- bucket=1 log=0..4",
			},
			want: `
FlussScan db.t (LakeUpsert)
│   PushedPredicates: s = 'a]b', x > 1
│   Limit: 10
└── Branch: lake-union (snapshot 3)
    ├── Split: lake+log partition=- bucket=0 lake_files=1 log=5..9
    └── Split: log partition=- bucket=1 log=0..4
`,
		},
		{
			name: "analyze",
			in: []string{
				"FlussScan: [db.t], Type: [Append]",
				"Branch: log-only",
				"Split: log partition=- bucket=0 log=0..4",
				"  read: batches=1",
				"Split: log partition=- bucket=1 log=0..4",
				"  read: not opened",
				"Read: splits=1/2",
			},
			want: `
FlussScan db.t (Append)
└── Branch: log-only
    ├── Split: log partition=- bucket=0 log=0..4
    │       read: batches=1
    └── Split: log partition=- bucket=1 log=0..4
            read: not opened
Read: splits=1/2
`,
		},
		{
			name: "no splits",
			in:   []string{"FlussScan: [db.t], Type: [Append] [PartitionFilter: dt = '2000-01-01']", "Branch: log-only"},
			want: `
FlussScan db.t (Append)
│   PartitionFilter: dt = '2000-01-01'
└── Branch: log-only
`,
		},
		{
			name: "unknown lines pass through",
			in:   []string{"Values: 1 row (no FROM)", "FlussScan: odd", "Split: x"},
			want: `
Values: 1 row (no FROM)
FlussScan: odd
└── Split: x
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, strings.TrimPrefix(tc.want, "\n"), renderPlan(tc.in))
		})
	}
}
