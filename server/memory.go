package server

import (
	"context"
	"net/http"
	"time"
)

// Memory is one account's memory budget (Options.MemoryBudget), as
// handlers serving beside the REST API use it to count what they hold: the
// web console's change streams and imports. What they reserve, the
// account's requests cannot, and the other way round, so together they
// stay within the budget. It is safe for concurrent use.
type Memory struct {
	b    *budget
	wait time.Duration
}

// AccountMemory returns the memory budget of the account named account
// that h serves, h being a handler New or NewAccounts returned; nil when h
// is neither or serves no such account.
func AccountMemory(h http.Handler, account string) *Memory {
	a := accountHandler(h, account)
	if a == nil {
		return nil
	}
	return &Memory{b: a.mem, wait: a.wait}
}

// accountHandler is the handler of account in h, a handler New or
// NewAccounts returned; nil when h is neither or serves no such account.
func accountHandler(h http.Handler, account string) *handler {
	switch h := h.(type) {
	case *handler:
		if h.account == account {
			return h
		}
	case *multiAccount:
		return h.byName[account]
	}
	return nil
}

// Reserve reserves n bytes, waiting up to Options.QueueWait for them, as a
// request would. It returns false, holding nothing, when they did not come
// free in time, when ctx ends first, or when n is more than the budget
// could ever grant. Every reservation must be released.
func (m *Memory) Reserve(ctx context.Context, n int64) bool {
	if n > m.b.size {
		return false
	}
	_, ok := m.b.acquire(ctx, n, false, m.wait)
	return ok
}

// Release returns n bytes reserved before; reservations may be returned in
// parts.
func (m *Memory) Release(n int64) { m.b.release(n, false) }

// InUse returns the bytes reserved now, by requests and by Reserve.
func (m *Memory) InUse() int64 {
	used, _ := m.b.inUse()
	return used
}
