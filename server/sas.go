package server

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// sasGrant is what a verified shared access signature allows.
type sasGrant struct {
	account bool   // an account SAS (else a service SAS for one table)
	perms   string // effective permissions
	srt     string // account SAS: resource types
	table   string // service SAS: the table name, lowercase
	// Service SAS key range, inclusive; has* says which bounds are set.
	spk, srk, epk, erk             string
	hasSPK, hasSRK, hasEPK, hasERK bool
	// What a stream rechecks while it runs (ext_live.go): the signed
	// text, the expiry, the stored access policy named (si) as it was.
	signed signature
	end    time.Time
	si     string
	policy driver.AccessPolicy
}

// sasTimeLayouts are the ISO 8601 forms accepted for st and se.
var sasTimeLayouts = []string{
	"2006-01-02T15:04:05.9999999Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
}

func parseSASTime(s string) (time.Time, bool) {
	for _, l := range sasTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func sasFailed(why string) *apiErr {
	return apiError(http.StatusForbidden, edm.CodeAuthenticationFailed, "Server failed to authenticate the request: "+why)
}

// sasParams are the query parameters a shared access signature is made
// of; each may appear once.
var sasParams = [...]string{"sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "sig", "si", "tn",
	"spk", "srk", "epk", "erk", "ses"}

// checkSAS verifies the signature in the query (account or service SAS),
// its times, protocol and address, and returns what it grants.
func (h *handler) checkSAS(r *http.Request, res resource) (*sasGrant, error) {
	v := res.query
	for _, k := range sasParams {
		if len(v[k]) > 1 {
			// Which copy counts would be a guess; refusing rules out
			// parameter pollution.
			return nil, sasFailed("the signature's " + k + " is repeated.")
		}
	}
	get := func(k string) string { return v.Get(k) }
	sv, sig := get("sv"), get("sig")
	if sv == "" {
		return nil, sasFailed("the signature has no sv (version).")
	}
	if !knownVersion[sv] {
		return nil, sasFailed("sv is not a storage service version this server accepts (2015-04-05 or later).")
	}
	switch get("spr") {
	case "", "https,http", "http,https", "http":
	case "https":
		// The SDKs sign spr=https even for an emulator's http endpoint, so
		// plain http is refused only for clients off this machine.
		if r.TLS == nil && !isLoopback(r.RemoteAddr) {
			return nil, apiError(http.StatusForbidden, edm.CodeAuthorizationProtocolMismatch, "This request is not authorized to perform this operation using this protocol.")
		}
	default:
		return nil, sasFailed("spr is not a valid protocol list.")
	}
	if sip := get("sip"); sip != "" && !ipAllowed(sip, r.RemoteAddr) {
		return nil, apiError(http.StatusForbidden, edm.CodeAuthorizationSourceIPMismatch, "This request is not authorized to perform this operation using this source IP.")
	}
	if get("ss") != "" || get("srt") != "" {
		return h.checkAccountSAS(res, sig)
	}
	return h.checkServiceSAS(r, res, sig)
}

// checkTimes applies st and se.
func checkTimes(now time.Time, st, se string) error {
	if se == "" {
		return sasFailed("the signature has no expiry (se).")
	}
	end, ok := parseSASTime(se)
	if !ok {
		return sasFailed("se is not a valid ISO 8601 time.")
	}
	if st != "" {
		start, ok := parseSASTime(st)
		if !ok {
			return sasFailed("st is not a valid ISO 8601 time.")
		}
		if now.Before(start) {
			return sasFailed("the signature is not valid yet (st).")
		}
	}
	if now.After(end) {
		return sasFailed("the signature has expired (se).")
	}
	return nil
}

func (h *handler) checkAccountSAS(res resource, sig string) (*sasGrant, error) {
	v := res.query
	ss, srt, sp := v.Get("ss"), v.Get("srt"), v.Get("sp")
	if !onlyLetters(srt, "sco") || srt == "" {
		return nil, sasFailed("srt must hold resource types from s, c and o.")
	}
	if !onlyLetters(sp, "rwdlacupxytfi") || sp == "" {
		return nil, sasFailed("sp must hold permissions from rwdlacup.")
	}
	lines := []string{h.account, sp, ss, srt, v.Get("st"), v.Get("se"), v.Get("sip"), v.Get("spr"), v.Get("sv")}
	if v.Get("sv") >= "2020-12-06" {
		lines = append(lines, v.Get("ses"))
	}
	signed := signature{strings.Join(lines, "\n") + "\n", sig}
	if !h.verify(signed.text, sig) {
		return nil, sasFailed("the signature does not match.")
	}
	if err := checkTimes(h.now(), v.Get("st"), v.Get("se")); err != nil {
		return nil, err
	}
	if !strings.Contains(ss, "t") {
		return nil, apiError(http.StatusForbidden, edm.CodeAuthorizationServiceMismatch, "This request is not authorized to perform this operation using this service.")
	}
	end, _ := parseSASTime(v.Get("se"))
	return &sasGrant{account: true, perms: sp, srt: srt, signed: signed, end: end}, nil
}

func (h *handler) checkServiceSAS(r *http.Request, res resource, sig string) (*sasGrant, error) {
	v := res.query
	tn := v.Get("tn")
	if tn == "" {
		return nil, sasFailed("the signature names no table (tn).")
	}
	sp, st, se := v.Get("sp"), v.Get("st"), v.Get("se")
	toSign := strings.Join([]string{sp, st, se, "/table/" + h.account + "/" + strings.ToLower(tn),
		v.Get("si"), v.Get("sip"), v.Get("spr"), v.Get("sv"),
		v.Get("spk"), v.Get("srk"), v.Get("epk"), v.Get("erk")}, "\n")
	if !h.verify(toSign, sig) {
		return nil, sasFailed("the signature does not match.")
	}
	var policy driver.AccessPolicy
	if si := v.Get("si"); si != "" {
		pols, err := root.AccessPolicies(h.db.Table(tn), r.Context())
		if err != nil && tablestore.ErrorCode(err) != edm.CodeTableNotFound {
			return nil, err
		}
		var found *driver.AccessPolicy
		for i := range pols {
			if pols[i].ID == si {
				found = &pols[i]
			}
		}
		if found == nil {
			return nil, sasFailed("the stored access policy named by si does not exist.")
		}
		policy = *found
		both := apiError(http.StatusBadRequest, edm.CodeInvalidQueryParameterValue, "A field of the access policy is given both in the stored policy and in the signature.")
		if found.Permission != "" {
			if sp != "" {
				return nil, both
			}
			sp = found.Permission
		}
		if !found.Start.IsZero() {
			if st != "" {
				return nil, both
			}
			st = found.Start.UTC().Format(time.RFC3339)
		}
		if !found.Expiry.IsZero() {
			if se != "" {
				return nil, both
			}
			se = found.Expiry.UTC().Format(time.RFC3339)
		}
	}
	if !inOrder(sp, "raud") || sp == "" {
		return nil, sasFailed("sp must hold permissions from raud, in that order.")
	}
	if err := checkTimes(h.now(), st, se); err != nil {
		return nil, err
	}
	end, _ := parseSASTime(se)
	g := &sasGrant{perms: sp, table: strings.ToLower(tn), signed: signature{toSign, sig}, end: end, si: v.Get("si"), policy: policy}
	g.spk, g.hasSPK = v.Get("spk"), v.Has("spk")
	g.srk, g.hasSRK = v.Get("srk"), v.Has("srk")
	g.epk, g.hasEPK = v.Get("epk"), v.Has("epk")
	g.erk, g.hasERK = v.Get("erk"), v.Has("erk")
	if g.hasSRK && !g.hasSPK || g.hasERK && !g.hasEPK {
		return nil, sasFailed("srk and erk need spk and epk.")
	}
	return g, nil
}

// onlyLetters reports whether every byte of s is in set.
func onlyLetters(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// inOrder reports whether s is a subsequence of order with no repeats.
func inOrder(s, order string) bool {
	j := 0
	for i := 0; i < len(s); i++ {
		k := strings.IndexByte(order[j:], s[i])
		if k < 0 {
			return false
		}
		j += k + 1
	}
	return true
}

func isLoopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ipAllowed checks the client address against sip: one address or a
// range a-b.
func ipAllowed(sip, remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	lo, hi, isRange := strings.Cut(sip, "-")
	a := net.ParseIP(lo)
	if a == nil {
		return false
	}
	if !isRange {
		return a.Equal(ip)
	}
	b := net.ParseIP(hi)
	if b == nil {
		return false
	}
	ip16, a16, b16 := ip.To16(), a.To16(), b.To16()
	return string(ip16) >= string(a16) && string(ip16) <= string(b16)
}

// allow checks one operation against the grant; keyed says (pk, rk) is
// the entity the operation touches.
func (g *sasGrant) allow(o op, table, pk, rk string, keyed bool) error {
	has := func(ps string) bool {
		for i := 0; i < len(ps); i++ {
			if strings.IndexByte(g.perms, ps[i]) < 0 {
				return false
			}
		}
		return true
	}
	if g.account {
		var rt byte
		var need []string // alternatives
		switch o {
		case opGetService:
			rt, need = 's', []string{"r"}
		case opSetService:
			rt, need = 's', []string{"w"}
		case opListTables:
			rt, need = 'c', []string{"l", "r"}
		case opCreateTable:
			rt, need = 'c', []string{"c", "w", "a"}
		case opDeleteTable:
			rt, need = 'c', []string{"d"}
		case opGetACL, opSetACL:
			return errResourceType
		case opBatch:
			// Each operation is checked on its own once the body is
			// read; a signature that allows no write is refused first.
			rt, need = 'o', []string{"a", "u", "d"}
		case opRead:
			rt, need = 'o', []string{"r"}
		case opInsert:
			rt, need = 'o', []string{"a"}
		case opUpdate:
			rt, need = 'o', []string{"u"}
		case opUpsert:
			rt, need = 'o', []string{"au"}
		case opDelete, opKeyspace:
			rt, need = 'o', []string{"d"}
		case opCapabilities:
			return nil
		case opAdmin:
			rt, need = 'c', []string{"w"}
		}
		if strings.IndexByte(g.srt, rt) < 0 {
			return errResourceType
		}
		for _, n := range need {
			if has(n) {
				return nil
			}
		}
		return errPermission
	}
	var need string
	switch o {
	case opBatch:
		// Each operation is checked on its own once the body is read (the
		// table too); a signature that allows no write is refused first.
		if has("a") || has("u") || has("d") {
			return nil
		}
		return errPermission
	case opRead:
		need = "r"
	case opInsert:
		need = "a"
	case opUpdate:
		need = "u"
	case opUpsert:
		need = "au"
	case opDelete, opKeyspace:
		need = "d"
	case opCapabilities:
		return nil
	default:
		return errResourceType
	}
	if !strings.EqualFold(table, g.table) {
		return apiError(http.StatusForbidden, edm.CodeAuthorizationPermissionMismatch, "This request is not authorized to perform this operation: the signature is for another table.")
	}
	if !has(need) {
		return errPermission
	}
	if keyed && !g.inRange(pk, rk) {
		return apiError(http.StatusForbidden, edm.CodeAuthorizationPermissionMismatch, "This request is not authorized to perform this operation: the entity is outside the signature's key range.")
	}
	return nil
}

// inRange applies the key range: (spk, srk) <= (pk, rk) <= (epk, erk),
// each bound on PartitionKey alone when its RowKey bound is absent.
func (g *sasGrant) inRange(pk, rk string) bool {
	if g.hasSPK {
		if pk < g.spk || g.hasSRK && pk == g.spk && rk < g.srk {
			return false
		}
	}
	if g.hasEPK {
		if pk > g.epk || g.hasERK && pk == g.epk && rk > g.erk {
			return false
		}
	}
	return true
}

// rangeNode is the grant's key range as a filter condition; nil when the
// grant has none.
func (g *sasGrant) rangeNode() filter.Node {
	str := func(s string) edm.Value { return edm.Value{Type: edm.TypeString, Bytes: []byte(s)} }
	cmp := func(p string, op filter.Op, v string) filter.Node {
		return &filter.CompareNode{Property: p, Op: op, Value: str(v)}
	}
	and := func(x, y filter.Node) filter.Node {
		if x == nil {
			return y
		}
		return &filter.AndNode{X: x, Y: y}
	}
	var n filter.Node
	if g.hasSPK {
		if g.hasSRK {
			n = &filter.OrNode{X: cmp("PartitionKey", filter.OpGT, g.spk),
				Y: &filter.AndNode{X: cmp("PartitionKey", filter.OpEQ, g.spk), Y: cmp("RowKey", filter.OpGE, g.srk)}}
		} else {
			n = cmp("PartitionKey", filter.OpGE, g.spk)
		}
	}
	if g.hasEPK {
		if g.hasERK {
			n = and(n, &filter.OrNode{X: cmp("PartitionKey", filter.OpLT, g.epk),
				Y: &filter.AndNode{X: cmp("PartitionKey", filter.OpEQ, g.epk), Y: cmp("RowKey", filter.OpLE, g.erk)}})
		} else {
			n = and(n, cmp("PartitionKey", filter.OpLE, g.epk))
		}
	}
	return n
}

// restrictFilter returns the $filter text to run: the client's filter,
// AND-ed with a service SAS's key range. The client's filter is parsed
// and re-printed by package filter, so its text cannot escape the
// conjunction.
func (q *request) restrictFilter(src string) (string, error) {
	if q.sas == nil || q.sas.account {
		return src, nil
	}
	rn := q.sas.rangeNode()
	if rn == nil {
		return src, nil
	}
	f, err := filter.Compile(src, nil)
	if err != nil {
		return "", filterAPIError(err)
	}
	if f.Root != nil {
		rn = &filter.AndNode{X: f.Root, Y: rn}
	}
	return filter.Format(rn), nil
}
