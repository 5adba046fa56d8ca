package exec

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// intMap maps int64 keys to dense ids 0, 1, 2, ... in the order the keys
// were first seen. It is the group table of GROUP BY and DISTINCT on one
// integer column: open addressing with linear probing over flat slices,
// so a lookup hashes one word and touches one or two cache lines, with no
// per-key allocation or interface call as a Go map of boxed keys has.
//
// Keys in [0, denseKeys), the common case of small codes (a status, a
// bucket of 1,000, a year), skip the hash: dense holds value+1 at index
// key, grown to the largest such key seen, so a lookup is one load.
type intMap struct {
	keys []int64
	// ids holds value+1 per slot; 0 marks an empty slot.
	ids   []int32
	n     int   // keys in all
	hashN int   // keys in the hash slots
	shift uint8 // 64 - log2(len(keys))
	dense []int32
}

// denseKeys bounds the keys dense holds: 256 KiB of ids at most.
const denseKeys = 1 << 16

// denseSlot is what lookup returns as the slot of an absent dense key.
const denseSlot = -1

func newIntMap() *intMap {
	m := &intMap{}
	m.resize(64)
	return m
}

func (m *intMap) resize(slots int) {
	old, oldIDs := m.keys, m.ids
	m.keys, m.ids = make([]int64, slots), make([]int32, slots)
	m.shift = uint8(64 - bits.TrailingZeros(uint(slots)))
	mask := slots - 1
	for i, id := range oldIDs {
		if id == 0 {
			continue
		}
		h := m.slot(old[i])
		for m.ids[h] != 0 {
			h = (h + 1) & mask
		}
		m.keys[h], m.ids[h] = old[i], id
	}
}

// slot is k's home slot: Fibonacci hashing takes the high bits of a
// multiplication, which spreads consecutive keys across the table.
func (m *intMap) slot(k int64) int {
	return int((uint64(k) * 0x9e3779b97f4a7c15) >> m.shift)
}

// lookup returns k's value, or the slot to insert k into when it is
// absent.
func (m *intMap) lookup(k int64) (v int32, slot int, ok bool) {
	if uint64(k) < uint64(len(m.dense)) && m.dense[k] != 0 {
		return m.dense[k] - 1, 0, true
	}
	if uint64(k) < denseKeys {
		return 0, denseSlot, false
	}
	mask := len(m.ids) - 1
	h := m.slot(k)
	for {
		id := m.ids[h]
		if id == 0 {
			return 0, h, false
		}
		if m.keys[h] == k {
			return id - 1, h, true
		}
		h = (h + 1) & mask
	}
}

// insert adds k, which lookup did not find, with value v (at least 0) at
// the slot lookup returned.
func (m *intMap) insert(slot int, k int64, v int32) {
	if slot == denseSlot {
		if int(k) >= len(m.dense) {
			grown := make([]int32, min(denseKeys, max(64, 1<<bits.Len64(uint64(k)))))
			copy(grown, m.dense)
			m.dense = grown
		}
		m.dense[k] = v + 1
		m.n++
		return
	}
	m.keys[slot], m.ids[slot] = k, v+1
	m.n++
	m.hashN++
	// Keep the load at most one half so probes stay short.
	if 2*m.hashN > len(m.ids) {
		m.resize(2 * len(m.ids))
	}
}

// densify moves the hashed keys into dense when every key is at least 0
// and below limit, so that a lookup of any key is one load. It returns
// the bytes dense grew by. The map takes no more keys afterwards: a key
// at or above denseKeys that dense holds is found only by lookup's first
// test, which every reader of the map makes.
func (m *intMap) densify(limit int64) int64 {
	if m.hashN == 0 {
		return 0
	}
	top := int64(-1)
	for i, id := range m.ids {
		if id == 0 {
			continue
		}
		k := m.keys[i]
		if k < 0 || k >= limit {
			return 0
		}
		top = max(top, k)
	}
	before := len(m.dense)
	grown := make([]int32, max(int64(before), top+1))
	copy(grown, m.dense)
	for i, id := range m.ids {
		if id != 0 {
			grown[m.keys[i]] = id
		}
	}
	m.dense = grown
	m.hashN = 0
	m.keys, m.ids = nil, nil
	m.resize(64)
	return 4 * int64(len(grown)-before)
}

// intValues are the values of an integer Arrow array widened to int64 on
// read; T is the array's own element type, so the loops over them are
// typed and the values are not copied.
type intValues interface {
	~int8 | ~int16 | ~int32 | ~int64
}

// intIDs sets ids[i] (when ids is not nil) to the value of row rows[i]
// of vals in m. A new key takes the value onNew returns for its row, a
// NULL row the value onNull returns.
func intIDs[T intValues](m *intMap, vals []T, arr arrow.Array, rows []int32, ids []int32, onNew, onNull func(row int32) int32) {
	hasNulls := arr.NullN() > 0
	for i, r := range rows {
		var v int32
		if hasNulls && arr.IsNull(int(r)) {
			v = onNull(r)
		} else {
			k := int64(vals[r])
			if uint64(k) < uint64(len(m.dense)) && m.dense[k] != 0 {
				// The dense keys' fast path, inline.
				if ids != nil {
					ids[i] = m.dense[k] - 1
				}
				continue
			}
			var slot int
			var ok bool
			if v, slot, ok = m.lookup(k); !ok {
				v = onNew(r)
				m.insert(slot, k, v)
			}
		}
		if ids != nil {
			ids[i] = v
		}
	}
}

// intIDsOf runs intIDs typed for an Int8..Int64 array and reports whether
// arr was one.
func intIDsOf(m *intMap, arr arrow.Array, rows []int32, ids []int32, onNew, onNull func(row int32) int32) bool {
	switch a := arr.(type) {
	case *array.Int8:
		intIDs(m, a.Int8Values(), arr, rows, ids, onNew, onNull)
	case *array.Int16:
		intIDs(m, a.Int16Values(), arr, rows, ids, onNew, onNull)
	case *array.Int32:
		intIDs(m, a.Int32Values(), arr, rows, ids, onNew, onNull)
	case *array.Int64:
		intIDs(m, a.Int64Values(), arr, rows, ids, onNew, onNull)
	default:
		return false
	}
	return true
}
