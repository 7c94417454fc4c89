package server

import "sync"

// bufferPool keeps byte buffers for reuse from one request to the next,
// so a request body or a response of tens of kilobytes is not allocated,
// zeroed and collected each time. Buffers over maxPooledBuffer are left
// to the collector, as is whatever the pool holds at a collection.
type bufferPool struct {
	pool    sync.Pool
	initial int // the capacity of a new buffer
}

// maxPooledBuffer is the largest buffer a pool keeps.
const maxPooledBuffer = 1 << 20

var (
	// bodyBuffers hold request bodies (see readBody).
	bodyBuffers = bufferPool{initial: 64 << 10}
	// responseBuffers hold query pages and batch responses.
	responseBuffers = bufferPool{initial: 16 << 10}
)

// get returns an empty buffer. The caller owns it until it passes it to
// put; nothing may use it after that.
func (p *bufferPool) get() []byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, p.initial)
}

// getAtLeast returns an empty buffer of capacity n or more. A new one
// the pool can keep has up to a quarter more, so that the next requests,
// a little larger or smaller (the bodies of a bulk load), can reuse it.
func (p *bufferPool) getAtLeast(n int) []byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		if cap(*b) >= n {
			return (*b)[:0]
		}
		p.pool.Put(b)
	}
	size := n
	if n < maxPooledBuffer {
		size = min(n+n/4, maxPooledBuffer)
	}
	return make([]byte, 0, size)
}

// put returns b, which nothing may use any more, to the pool.
func (p *bufferPool) put(b []byte) {
	if cap(b) <= maxPooledBuffer {
		b = b[:0]
		p.pool.Put(&b)
	}
}
