package lake_test

import (
	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/planner"
)

// The lake's source is what the planner's lake-union branch plans with.
var _ planner.LakeSource = (*lake.Source)(nil)
