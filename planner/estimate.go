package planner

// EstimateRows is an upper bound of the rows the splits yield before any
// filter: the log records of each log range, the lake files' row counts,
// and for a KV snapshot the changelog records up to its tail's end (a
// table holds at most one row per record written). A join uses it to
// hold the smaller side.
func EstimateRows(splits []Split) int64 {
	var n int64
	for _, s := range splits {
		switch x := s.(type) {
		case *LogSplit:
			n += x.StopOffset - x.StartOffset
		case *KvLogSplit:
			n += x.LogStop
		case *LakeSplit:
			for _, f := range x.Files {
				n += f.RowCount
			}
		case *LakeLogSplit:
			for _, f := range x.Files {
				n += f.RowCount
			}
			n += x.LogStop - x.LogStart
		}
	}
	return n
}
