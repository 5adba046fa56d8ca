package storage

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The raw bytes of the log batches a scan reads are its largest
// allocations: one buffer per batch, as large as the batch, which the
// decoded record then references in place. Allocating each afresh cost a
// scan about a quarter of its CPU time (zeroing memory that pread
// overwrites at once, and the garbage collection it drives). batchPool
// recycles them instead: a buffer goes back to its size class when the
// last record referencing it is released (Arrow's reference count reaches
// zero and calls Free), and sync.Pool lets the garbage collector drop
// what sits unused.
//
// A buffer comes back only through Free, so a consumer that keeps a value
// of a released record (a string aliasing the buffer) would see it
// overwritten. Builds with the race detector, as the tests run, poison
// every freed buffer so such a read shows up as garbage there.
var batchPool poolAllocator

// Pooled sizes: from poolMin to poolMax bytes, in four classes per power
// of two (so a buffer wastes at most a fifth of itself, which matters
// for records a sort keeps). Smaller buffers are cheap to allocate exactly,
// larger ones are rare.
const (
	poolMin     = 4 << 10
	poolMax     = 256 << 20
	poolClasses = 4 * (28 - 12) // powers of two from 2^12 to 2^28
)

type poolAllocator struct {
	classes [poolClasses]sync.Pool // of *[]byte with cap classSize
	buffers atomic.Int64           // handed out by newBuffer, for tests
}

// newBuffer returns a buffer of size bytes whose contents are undefined:
// the caller overwrites all of them.
func (p *poolAllocator) newBuffer(size int) *memory.Buffer {
	p.buffers.Add(1)
	return memory.NewBufferWithAllocator(p.get(size), p)
}

// sizeClass returns the class of a buffer of size bytes and the class's
// capacity; ok is false outside the pooled sizes. With 2^c < size <=
// 2^(c+1), the classes of that range are 5/4, 6/4, 7/4 and 8/4 of 2^c.
func sizeClass(size int) (class, capacity int, ok bool) {
	if size <= poolMin || size > poolMax {
		return 0, 0, false
	}
	c := bits.Len(uint(size-1)) - 1
	step := 1 << (c - 2)
	q := (size + step - 1) / step // 5..8
	return (c-12)*4 + q - 5, q * step, true
}

func (p *poolAllocator) get(size int) []byte {
	class, capacity, ok := sizeClass(size)
	if !ok {
		return make([]byte, size)
	}
	if b, ok := p.classes[class].Get().(*[]byte); ok {
		return (*b)[:size]
	}
	return make([]byte, size, capacity)
}

// Allocate, Reallocate and Free make poolAllocator a memory.Allocator;
// only Free is reached through Arrow (a buffer's last Release).
func (p *poolAllocator) Allocate(size int) []byte {
	b := p.get(size)
	clear(b)
	return b
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) {
	class, capacity, ok := sizeClass(cap(b))
	if !ok || capacity != cap(b) {
		return
	}
	b = b[:cap(b)]
	if poisonFreed {
		for i := range b {
			b[i] = 0xdb
		}
	}
	p.classes[class].Put(&b)
}
