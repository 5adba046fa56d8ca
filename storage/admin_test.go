package storage

import "github.com/flusslite/fluss/planner"

// The engine is the planner's Admin; asserted here so that storage itself
// never imports the planner.
var _ planner.Admin = (*Engine)(nil)
