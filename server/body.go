package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
	"unicode/utf8"

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
	errInvalidUTF8 = apiError(http.StatusBadRequest, edm.CodeInvalidInput,
		"One of the request inputs is not valid: the JSON body is not valid UTF-8 (an invalid byte or a lone surrogate escape).")
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
	if excess := q.bodyMem - int64(len(body)); n < 0 && excess > 0 {
		h.mem.release(excess, true)
		q.bodyMem -= excess
	}
	q.body, q.bodyDone = body, true
	return nil
}

// readBody reads the body, of n bytes or (n < 0) of any length up to the
// limit, enforcing the minimum rate: the k-th byte must have arrived
// BodyGracePeriod + k/MinBodyRate after the read began. The rate is kept
// with the connection's read deadline; a ResponseWriter without one (a
// test recorder) reads without it.
func (q *request) readBody(n int64) ([]byte, error) {
	h := q.h
	rc := http.NewResponseController(q.w)
	timed := true
	start := time.Now()
	src := http.MaxBytesReader(q.w, q.r.Body, h.maxBody)
	var buf []byte
	if n >= 0 {
		buf = make([]byte, 0, n)
	} else {
		buf = make([]byte, 0, min(h.maxBody, 64<<10))
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
	return buf, nil
}

// checkJSONText refuses a JSON text that is not valid UTF-8 or holds a
// \u escape of a lone UTF-16 surrogate, so the decoder never turns
// either into U+FFFD: two different keys a client sent must not become
// one stored key. Errors: InvalidInput.
func checkJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return errInvalidUTF8
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				u, ok := hex4(b, i+2)
				if !ok {
					i++ // the decoder reports the bad escape
					continue
				}
				switch {
				case u >= 0xDC00 && u <= 0xDFFF:
					return errInvalidUTF8
				case u >= 0xD800 && u <= 0xDBFF:
					lo, ok := uint16(0), false
					if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						lo, ok = hex4(b, i+8)
					}
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return errInvalidUTF8
					}
					i += 11
					continue
				}
				i += 5
				continue
			}
			i++ // the escaped character
		}
	}
	return nil
}

// hex4 reads four hexadecimal digits at b[i:].
func hex4(b []byte, i int) (uint16, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var u uint16
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(c)
	}
	return u, true
}
