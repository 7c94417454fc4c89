package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// A long-poll or event stream is authorized for its whole length, not
// only at its start: it ends, with the reason, when the server shuts
// down or its credential stops being one a new request could use.

// End reasons, as the final "end" event and a long-poll page's end
// field name them.
const (
	// EndShutdown: the server is shutting down; reconnect later.
	EndShutdown = "shutdown"
	// EndCredentialExpired: the SAS's expiry (se) or the bearer token's
	// (exp, plus the skew) passed; authorize again.
	EndCredentialExpired = "credentialExpired"
	// EndPolicyChanged: the stored access policy the SAS names changed
	// or was removed; authorize again.
	EndPolicyChanged = "policyChanged"
	// EndKeysRotated: the account key that signed the request is no
	// longer one of the account's; authorize again.
	EndKeysRotated = "keysRotated"
)

// credentialCheckInterval is how often a live request's credential is
// checked again; the server's clock (Options.Now) decides expiries, so
// a test clock moved forward ends a stream within this.
const credentialCheckInterval = 100 * time.Millisecond

// signature is a text an account key signed, and the signature.
type signature struct{ text, sig string }

// streamEnd is the cause of a live request's context ending: the reason.
type streamEnd string

func (e streamEnd) Error() string { return "tablestore: server: stream ended: " + string(e) }

// liveContext returns the context of a long-poll or stream: the
// request's, also ended (with a streamEnd cause) when the server shuts
// down or the credential stops being valid. stop releases it.
func (q *request) liveContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(q.r.Context())
	go func() {
		t := time.NewTicker(credentialCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.h.closing:
				cancel(streamEnd(EndShutdown))
				return
			case <-t.C:
				if why := q.credentialEnd(ctx); why != "" {
					cancel(streamEnd(why))
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// endReason is why ctx, a live context, ended early; "" when it has
// not, or ended with the request.
func endReason(ctx context.Context) string {
	var e streamEnd
	if errors.As(context.Cause(ctx), &e) {
		return string(e)
	}
	return ""
}

// credentialEnd checks the request's credential again as a new request
// would be checked: the signing key still the account's, the SAS not
// expired and its stored access policy unchanged, the token not
// expired. It answers why the credential no longer holds, or "".
func (q *request) credentialEnd(ctx context.Context) string {
	if q.signed.sig != "" && !q.h.verify(q.signed.text, q.signed.sig) {
		return EndKeysRotated
	}
	if g := q.sas; g != nil {
		if q.h.now().After(g.end) {
			return EndCredentialExpired
		}
		if g.si != "" {
			pols, err := root.AccessPolicies(q.h.db.Table(q.res.table), ctx)
			if err != nil && ctx.Err() != nil {
				return ""
			}
			same := false
			for _, p := range pols {
				same = same || p.ID == g.si && p.Permission == g.policy.Permission &&
					p.Start.Equal(g.policy.Start) && p.Expiry.Equal(g.policy.Expiry)
			}
			if err != nil || !same {
				return EndPolicyChanged
			}
		}
	}
	if b := q.bearer; b != nil && !b.until.IsZero() && b.now().After(b.until) {
		return EndCredentialExpired
	}
	return ""
}

// endStreams ends the handler's long-polls and streams, now and from
// now on.
func (h *handler) endStreams() { h.closeOnce.Do(func() { close(h.closing) }) }

// EndStreams ends the long-polls and event streams of h, a handler from
// New or NewAccounts, each with its final event naming EndShutdown,
// and those that start later at once: call it when the server shuts
// down (NewHTTPServer's Shutdown does), as http.Server.Shutdown waits
// for every request to finish. Other handlers are left alone.
func EndStreams(h http.Handler) {
	switch h := h.(type) {
	case *handler:
		h.endStreams()
	case *multiAccount:
		for _, a := range h.byName {
			a.endStreams()
		}
	}
}

// SetKeys replaces the keys of account, served by h (a handler from New
// or NewAccounts), as an account's keys are rotated: requests signed
// with a key no longer given are refused from now on, and the long-polls
// and streams they opened end with EndKeysRotated. Errors: an account h
// does not serve, and New's errors for keys.
func SetKeys(h http.Handler, account string, keys []string) error {
	a := accountHandler(h, account)
	if a == nil {
		return fmt.Errorf("tablestore: server: account %q is not served by this handler", account)
	}
	return a.setKeys(keys)
}

// setKeys decodes and installs the account keys.
func (h *handler) setKeys(keys []string) error {
	if len(keys) == 0 || len(keys) > 2 {
		return fmt.Errorf("tablestore: server: %d keys given; an account has one or two", len(keys))
	}
	decoded := make([][]byte, 0, len(keys))
	for _, k := range keys {
		key, err := base64.StdEncoding.DecodeString(k)
		if err != nil || len(key) == 0 {
			return fmt.Errorf("tablestore: server: account key is not base64")
		}
		decoded = append(decoded, key)
	}
	h.keys.Store(&decoded)
	return nil
}
