package lakeunion

import "github.com/apache/arrow-go/v18/arrow/array"

// FoldedKeys returns the number of distinct keys a kv+log or lake+log reader holds
// from its tail (-1 for another reader), so tests can prove the fold
// keeps one entry per key, not one per change.
func FoldedKeys(r array.RecordReader) int {
	if kr, ok := r.(*mergeReader); ok {
		return len(kr.tail)
	}
	return -1
}
