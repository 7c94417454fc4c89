package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// Bounds on what the console holds between requests (see the package
// comment's Memory section).
const (
	// maxStreams bounds the live change streams of all sessions together.
	maxStreams = 32
	// maxStreamsPerSession bounds one session's live change streams (one
	// per open Changes page).
	maxStreamsPerSession = 4
	// streamMemory is what a live change stream reserves: its
	// goroutine, the connection's buffers and a page of changes
	// (streamPage). 4,000 streams were measured to hold about 78 KB each
	// when a stream had a reader goroutine and a queue of its own.
	streamMemory = 128 << 10
	// streamPage is the most changes one read of a stream gathers.
	streamPage = 16
	// maxImports bounds the imports of all sessions together.
	maxImports = 16
	// importWork is what a chunk's transactions need beyond the chunk:
	// the decoded entities of batchBytes of input and their encoding.
	importWork = 4 * batchBytes
	// retryAfter is the Retry-After, in seconds, of a refusal for want of
	// room.
	retryAfter = 2
)

// accountShare is what one account may take of a bound of the whole
// console: the bound split evenly between the accounts, at least one;
// the whole bound without Accounts or with one.
func (c *Console) accountShare(bound int) int {
	if n := len(c.accounts); n > 1 {
		return max(1, bound/n)
	}
	return bound
}

// accountKey names the account s acts on in the per-account counts.
func accountKey(s *session) string {
	if a := s.account(); a != nil {
		return a.Name
	}
	return ""
}

// memory returns the budget of the store s acts on, or nil.
func (c *Console) memory(s *session) Memory {
	if a := s.account(); a != nil {
		return a.Memory
	}
	return c.o.Memory
}

// refusal is why a stream or a chunk is not taken: its status and message.
type refusal struct {
	status int
	msg    string
}

// write answers r's request with the refusal, as JSON or plain text.
func (f *refusal) write(c *Console, w http.ResponseWriter, r *http.Request) {
	if f.status == http.StatusServiceUnavailable || f.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	if wantsJSON(r) {
		writeJSON(w, f.status, map[string]string{"error": f.msg})
		return
	}
	c.plainError(w, f.status, f.msg)
}

var errNoMemory = &refusal{http.StatusServiceUnavailable,
	"the server's memory budget is full: try again in a few seconds"}

// openStream admits one more live change stream of session s, whose
// memory is mem (nil: none), or says why not. The returned function ends
// the stream's admission; call it exactly once.
func (c *Console) openStream(ctx context.Context, s *session, mem Memory) (func(), *refusal) {
	acct := accountKey(s)
	c.liveMu.Lock()
	switch {
	case s.streams >= c.streamsPerSession:
		c.liveMu.Unlock()
		return nil, &refusal{http.StatusTooManyRequests, fmt.Sprintf(
			"this session has %d live change streams open already: close another Changes page first", s.streams)}
	case c.streams >= c.maxStreams:
		c.liveMu.Unlock()
		return nil, &refusal{http.StatusServiceUnavailable, fmt.Sprintf(
			"the console serves %d live change streams already, its most: try again when one ends", c.streams)}
	case c.accountStreams[acct] >= c.accountShare(c.maxStreams):
		c.liveMu.Unlock()
		return nil, &refusal{http.StatusServiceUnavailable, fmt.Sprintf(
			"this account's sessions have %d live change streams open already, its share: try again when one ends", c.accountStreams[acct])}
	}
	s.streams++
	c.streams++
	c.accountStreams[acct]++
	c.liveMu.Unlock()
	closeStream := func() {
		c.liveMu.Lock()
		s.streams--
		c.streams--
		c.accountStreams[acct]--
		c.liveMu.Unlock()
	}
	if mem != nil {
		if !mem.Reserve(ctx, streamMemory) {
			closeStream()
			return nil, errNoMemory
		}
		return func() { mem.Release(streamMemory); closeStream() }, nil
	}
	return closeStream, nil
}
