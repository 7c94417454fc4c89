package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
)

// cookieName names the session cookie.
const cookieName = "tablestore_console"

// maxSignInFailures ends a session after that many wrong keys.
const maxSignInFailures = 10

// randomToken returns 256 random bits in URL-safe base64 (43 characters).
func randomToken() string {
	var b [32]byte
	// crypto/rand.Read never fails (it panics inside the runtime when the
	// system has no randomness at all).
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// session is one browser's signed-in state.
type session struct {
	id   string
	csrf string

	mu       sync.Mutex
	acct     *account // the signed-in account; nil without sign-in
	seen     time.Time
	failures int
	// streams and imports are the session's live change streams and
	// imports kept; guarded by Console.liveMu.
	streams, imports int
}

// account returns the signed-in account, or nil.
func (s *session) account() *account {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acct
}

// sessionStore holds the live sessions.
type sessionStore struct {
	ttl   time.Duration
	max   int
	clock func() time.Time

	mu sync.Mutex
	m  map[string]*session
}

func newSessionStore(ttl time.Duration, maxSessions int, clock func() time.Time) *sessionStore {
	return &sessionStore{ttl: ttl, max: maxSessions, clock: clock, m: map[string]*session{}}
}

// start creates a session, ending the one idle longest when the store is
// full.
func (st *sessionStore) start() *session {
	now := st.clock()
	s := &session{id: randomToken(), csrf: randomToken(), seen: now}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked(now)
	for len(st.m) >= st.max {
		var oldest *session
		for _, o := range st.m {
			o.mu.Lock()
			if oldest == nil || o.seen.Before(oldest.seen) {
				oldest = o
			}
			o.mu.Unlock()
		}
		delete(st.m, oldest.id)
	}
	st.m[s.id] = s
	return s
}

// get returns the live session id names and marks it used, or nil.
func (st *sessionStore) get(id string) *session {
	now := st.clock()
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.m[id]
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.seen) > st.ttl {
		delete(st.m, id)
		return nil
	}
	s.seen = now
	return s
}

// alive reports whether s is still a live session, without marking it
// used.
func (st *sessionStore) alive(s *session) bool {
	now := st.clock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m[s.id] != s {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Sub(s.seen) <= st.ttl
}

// end removes a session.
func (st *sessionStore) end(id string) {
	st.mu.Lock()
	delete(st.m, id)
	st.mu.Unlock()
}

// expireLocked drops idle sessions. REQUIRES: st.mu held.
func (st *sessionStore) expireLocked(now time.Time) {
	for id, s := range st.m {
		s.mu.Lock()
		idle := now.Sub(s.seen) > st.ttl
		s.mu.Unlock()
		if idle {
			delete(st.m, id)
		}
	}
}

// authenticate finds the request's session, or starts one from a valid
// ?token= and redirects to the same URL without it. It answers the request
// itself (and returns false) when there is no session.
func (c *Console) authenticate(w http.ResponseWriter, r *http.Request) (*session, bool) {
	if tok := r.URL.Query().Get("token"); tok != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(c.token)) != 1 {
			c.unauthorized(w, r, "the link's token is not this console's token: use the URL the console printed when it started")
			return nil, false
		}
		if old, err := r.Cookie(cookieName); err == nil {
			c.sessions.end(old.Value)
		}
		s := c.sessions.start()
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.id, Path: c.o.Prefix + "/",
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		u.Path = c.o.Prefix + u.Path
		u.RawPath = ""
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return nil, false
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		if s := c.sessions.get(ck.Value); s != nil {
			return s, true
		}
	}
	c.unauthorized(w, r, "no session: open the URL the console printed when it started (it ends in ?token=...)")
	return nil, false
}

// unauthorized answers 401 with a page saying how to get in.
func (c *Console) unauthorized(w http.ResponseWriter, r *http.Request, msg string) {
	if wantsJSON(r) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": msg})
		return
	}
	c.render(w, r, http.StatusUnauthorized, "message", &pageData{Title: "Not signed in",
		Body: messageBody{Heading: "Not signed in", Text: msg}})
}

// signInBody is the sign-in page's data. It names no account but the one
// typed: the accounts a console serves are not shown before a key is given.
type signInBody struct {
	Account string
	Then    string
	Error   string
}

func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	c.renderSignIn(w, r, http.StatusOK, "", "")
}

func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, account, msg string) {
	if len(c.accounts) == 0 {
		http.Redirect(w, r, c.o.Prefix+"/tables", http.StatusSeeOther)
		return
	}
	b := signInBody{Account: account, Then: localTarget(r.FormValue("then")), Error: msg}
	c.render(w, r, status, "signin", &pageData{Title: "Sign in", Body: b})
}

// signIn checks an account name and key and binds the session to the
// account.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if len(c.accounts) == 0 {
		http.Redirect(w, r, c.o.Prefix+"/tables", http.StatusSeeOther)
		return
	}
	name, key := r.PostFormValue("account"), r.PostFormValue("key")
	var found *account
	for i := range c.accounts {
		a := &c.accounts[i]
		if a.Name != name {
			continue
		}
		for _, k := range a.Keys {
			if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
				found = a
			}
		}
	}
	if found == nil {
		s.mu.Lock()
		s.failures++
		failures := s.failures
		s.mu.Unlock()
		if c.o.Logger != nil {
			c.o.Logger.Warn("console: sign-in failed", "account", name, "remote", r.RemoteAddr)
		}
		if failures >= maxSignInFailures {
			c.sessions.end(s.id)
			c.unauthorized(w, r, "too many failed sign-ins: the session has ended")
			return
		}
		c.renderSignIn(w, r, http.StatusUnauthorized, name, "wrong account name or key")
		return
	}
	s.mu.Lock()
	s.acct, s.failures = found, 0
	s.mu.Unlock()
	if c.o.Logger != nil {
		c.o.Logger.Info("console: signed in", "account", found.Name, "remote", r.RemoteAddr)
	}
	http.Redirect(w, r, c.o.Prefix+localTarget(r.PostFormValue("then")), http.StatusSeeOther)
}

// signOut ends the session.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	c.sessions.end(s.id)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: c.o.Prefix + "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	c.render(w, r, http.StatusOK, "message", &pageData{Title: "Signed out",
		Body: messageBody{Heading: "Signed out", Text: "the session has ended; open the console's URL with its token to start another"}})
}

type sessionKey struct{}

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// sessionFrom returns the request's session; nil outside an authenticated
// request.
func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// store returns the store the request acts on: the signed-in account's,
// or the console's.
func (c *Console) store(r *http.Request) *tablestore.DB {
	if a := sessionFrom(r.Context()).account(); a != nil {
		return a.DB
	}
	return c.db
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
