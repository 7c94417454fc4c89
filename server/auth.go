package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"strings"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/edm"
)

// maxClockSkew is how old (or how far in the future) a signed request's
// date may be.
const maxClockSkew = 15 * time.Minute

// op is an operation, as permissions see it.
type op int

const (
	opListTables op = iota + 1
	opCreateTable
	opDeleteTable
	opGetACL
	opSetACL
	opGetService
	opSetService
	opBatch // the outer $batch request; each sub-operation is checked too
	opRead
	opInsert
	opUpdate
	opUpsert
	opDelete
	// The extension endpoints' (ext.go); they read a table with opRead.
	opCapabilities // the capability document: any valid credential
	opAdmin        // a table's indexes, TTL, feed settings: account-level write
	opKeyspace     // a range deletion: delete on the table
)

// authenticate checks the request's credentials: SharedKey or
// SharedKeyLite in Authorization, or a shared access signature in the
// query. Anonymous handlers accept everything.
func (q *request) authenticate() error {
	if q.h.anon || q.res.kind == kindExt && q.res.ext == extCaps {
		return nil // the capability document holds no data (ext.go)
	}
	if auth := q.r.Header.Get("Authorization"); auth != "" {
		if scheme, _, _ := strings.Cut(auth, " "); strings.EqualFold(scheme, "Bearer") {
			return q.checkBearer(auth) // bearer.go
		}
		return q.checkSharedKey(auth)
	}
	if q.res.query.Get("sig") != "" {
		g, err := q.h.checkSAS(q.r, q.res)
		if err != nil {
			return err
		}
		q.sas = g
		q.signed = g.signed
		return nil
	}
	return apiError(http.StatusForbidden, edm.CodeAuthenticationFailed, "Server failed to authenticate the request: no Authorization header or shared access signature.")
}

// checkSharedKey verifies "SharedKey account:sig" or "SharedKeyLite
// account:sig" against either account key.
func (q *request) checkSharedKey(auth string) error {
	scheme, cred, ok := strings.Cut(auth, " ")
	if !ok {
		return errAuthFailed
	}
	account, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
	if !ok || account != q.h.account {
		return errAuthFailed
	}
	date := q.r.Header.Get("X-Ms-Date")
	if date == "" {
		date = q.r.Header.Get("Date")
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return apiError(http.StatusForbidden, edm.CodeAuthenticationFailed, "Server failed to authenticate the request: the x-ms-date or Date header is missing or not in RFC 1123 form.")
	}
	if d := time.Since(t); d > maxClockSkew || d < -maxClockSkew {
		return apiError(http.StatusForbidden, edm.CodeAuthenticationFailed, "Server failed to authenticate the request: the request is more than 15 minutes old or in the future.")
	}
	resource := q.canonicalResource()
	var toSign string
	switch scheme {
	case "SharedKeyLite":
		toSign = date + "\n" + resource
	case "SharedKey":
		toSign = q.r.Method + "\n" + q.r.Header.Get("Content-MD5") + "\n" + q.r.Header.Get("Content-Type") + "\n" + date + "\n" + resource
	default:
		return errAuthFailed
	}
	if !q.h.verify(toSign, sig) {
		return apiError(http.StatusForbidden, edm.CodeAuthenticationFailed, "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.")
	}
	q.signed = signature{toSign, sig}
	return nil
}

// canonicalResource is "/" + account + the raw request path, plus
// ?comp=... when comp is present.
func (q *request) canonicalResource() string {
	s := "/" + q.h.account + q.res.rawPath
	if c, ok := q.res.query["comp"]; ok {
		s += "?comp=" + c[0]
	}
	return s
}

// verify reports whether sig is the base64 HMAC-SHA256 of s under one of
// the account keys.
func (h *handler) verify(s, sig string) bool {
	km, _ := h.macs.Get().(*keyMACs)
	if km == nil {
		km = new(keyMACs)
	}
	defer h.macs.Put(km)
	got, err := base64.StdEncoding.AppendDecode(km.got[:0], unsafe.Slice(unsafe.StringData(sig), len(sig)))
	if err != nil {
		return false
	}
	km.got = got[:0]
	keys := h.keys.Load()
	if km.keys != keys {
		km.keys, km.macs = keys, km.macs[:0]
		for _, k := range *keys {
			km.macs = append(km.macs, hmac.New(sha256.New, k))
		}
	}
	for _, m := range km.macs {
		m.Reset()
		m.Write(unsafe.Slice(unsafe.StringData(s), len(s))) // a hash keeps none of its input
		if hmac.Equal(m.Sum(km.sum[:0]), got) {
			return true
		}
	}
	return false
}

// keyMACs are HMAC-SHA256 states for the account keys keys, reused by
// verify from one request to the next (handler.macs): a new state hashes
// its key's pads and allocates each time. got and sum hold the decoded
// signature and the computed one.
type keyMACs struct {
	keys *[][]byte
	macs []hash.Hash
	got  []byte
	sum  [sha256.Size]byte
}

// authorizeOperation checks everything about the credentials that the
// URL and headers decide, before any body is read: the operation's
// permission, a service SAS's table, and its key range for an entity the
// URL names. What only the body tells (an insert's keys, a batch's
// operations) is checked again once it is read.
func (q *request) authorizeOperation(o opRoute) error {
	if q.bearer != nil {
		return q.bearer.allow(o.op) // bearer.go: the token's role
	}
	if q.sas == nil {
		return nil
	}
	if o.keyed {
		return q.sas.allow(o.op, q.res.table, q.res.pk, q.res.rk, true)
	}
	return q.sas.allow(o.op, q.res.table, "", "", false)
}

// authorize checks that the request's credentials allow op on table
// and, for the entity operations, on the entity (pk, rk): a service SAS
// limits keys to its range. Shared key and anonymous requests may do
// anything.
func (q *request) authorize(o op, table, pk, rk string) error {
	if err := q.cosmosKeys(o, table, pk, rk); err != nil { // cosmos.go
		return err
	}
	if q.bearer != nil {
		return q.bearer.allow(o) // bearer.go: the token's role
	}
	if q.sas == nil {
		return nil
	}
	return q.sas.allow(o, table, pk, rk, o >= opRead)
}
