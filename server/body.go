package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// Limits on how request bodies arrive, applied when Options leave them
// zero.
const (
	// DefaultMinBodyRate is the slowest, in bytes per second, a request
	// body may arrive once its grace period is over.
	DefaultMinBodyRate = 32 << 10
	// DefaultBodyGracePeriod is how long a body may take before
	// MinBodyRate applies to it.
	DefaultBodyGracePeriod = 5 * time.Second
)

var (
	errBodyTooSlow = apiError(http.StatusRequestTimeout, edm.CodeOperationTimedOut,
		"The request body was not received at the minimum data rate; the connection is closed.")
	errBodyUnreadable = apiError(http.StatusBadRequest, edm.CodeInvalidInput,
		"One of the request inputs is not valid: the request body could not be read.")
)

// receiveBody runs the upload stage for a request whose operation reads
// a body: an upload slot, the body's bytes from the memory budget (held
// until the request ends, see finish), and the body read at the minimum
// rate into q.body. Errors: RequestBodyTooLarge, ServerBusy when no slot
// or memory came free within QueueWait, OperationTimedOut for a body
// slower than the minimum rate, InvalidInput for a body that breaks off.
func (q *request) receiveBody() error {
	h, r := q.h, q.r
	n := r.ContentLength
	if n == 0 || r.Body == nil || r.Body == http.NoBody {
		q.bodyDone = true
		return nil
	}
	if n > h.maxBody {
		return errBodyTooLarge
	}
	want := n
	if n < 0 { // chunked: the limit is what it may need
		want = h.maxBody
	}
	ctx := r.Context()
	if !h.uploads.acquire(ctx, h.wait) {
		q.refused()
		return errServerBusy
	}
	defer h.uploads.release()
	got, ok := h.mem.acquire(ctx, want, true, h.wait)
	if !ok {
		q.refused()
		return errServerBusy
	}
	q.bodyMem = got
	body, err := q.readBody(n)
	if err != nil {
		return err
	}
	q.bodyBuf = body
	if excess := q.bodyMem - int64(len(body)); n < 0 && excess > 0 {
		h.mem.release(excess, true)
		q.bodyMem -= excess
	}
	q.body, q.bodyDone = body, true
	return nil
}

// readBody reads the body, of n bytes or (n < 0) of any length up to the
// limit, into a buffer of bodyBuffers (its capacity may be larger than
// the body's), enforcing the minimum rate: the k-th byte must have arrived
// BodyGracePeriod + k/MinBodyRate after the read began. The rate is kept
// with the connection's read deadline; a ResponseWriter without one (a
// test recorder) reads without it.
func (q *request) readBody(n int64) ([]byte, error) {
	h := q.h
	rc := http.NewResponseController(q.w)
	timed := true
	start := time.Now()
	src := http.MaxBytesReader(q.w, q.r.Body, h.maxBody)
	var whole, buf []byte
	if n >= 0 {
		whole = bodyBuffers.getAtLeast(int(n))
		buf = whole[:0:n] // full at Content-Length
	} else {
		buf = bodyBuffers.get()
	}
	for {
		if len(buf) == cap(buf) {
			if n >= 0 {
				// Content-Length bytes read: the body is complete (the
				// reader reports EOF next).
				var one [1]byte
				if m, err := src.Read(one[:]); m == 0 && (err == io.EOF || err == nil) {
					break
				}
				return nil, errBodyUnreadable
			}
			buf = append(buf, 0)[:len(buf)]
		}
		if timed {
			due := time.Duration(float64(len(buf)+1) / float64(h.minRate) * float64(time.Second))
			if rc.SetReadDeadline(start.Add(h.grace+due)) != nil {
				timed = false
			}
		}
		m, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				return nil, errBodyTooLarge
			case errors.Is(err, os.ErrDeadlineExceeded):
				return nil, errBodyTooSlow
			}
			return nil, errBodyUnreadable
		}
	}
	if timed {
		// Processing may outlast the body's schedule; the server's own
		// deadlines apply again to the next request.
		_ = rc.SetReadDeadline(time.Time{})
	}
	if n >= 0 {
		return whole[:len(buf)], nil
	}
	return buf, nil
}
