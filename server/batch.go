package server

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/wire"
)

// A $batch body is multipart/mixed holding one changeset, itself
// multipart/mixed, whose parts are application/http sub-requests. The
// parser is tolerant as clients differ: CRLF or bare LF, a preamble,
// header names in any case, sub-requests without Content-Length and with
// blank lines before the body, absolute or relative sub-request URLs.

// mimePart is one part of a multipart body. Its header and body alias
// the multipart body. bad says it has more than maxPartHeaders header
// lines.
type mimePart struct {
	header partHeader
	body   []byte
	bad    bool
}

// partHeader is a part's header block, its lines "Name: value" as they
// arrived, aliasing the multipart body. Lookups read the lines each
// time: a part's few headers are read once or twice, and parsing none of
// them ahead costs no allocation per part.
type partHeader []byte

// each calls f with the name and value, trimmed, of every header line in
// order until f returns false. Lines without a colon are skipped.
func (h partHeader) each(f func(name, value []byte) bool) {
	l := lines{b: h}
	for {
		line, _, ok := l.next()
		if !ok {
			return
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && !f(bytes.TrimSpace(k), bytes.TrimSpace(v)) {
			return
		}
	}
}

// get returns the first value of the header named name (in any case),
// aliasing h, or "" when there is none.
func (h partHeader) get(name string) string {
	var out string
	h.each(func(k, v []byte) bool {
		if strings.EqualFold(string(k), name) {
			out = unsafe.String(unsafe.SliceData(v), len(v))
			return false
		}
		return true
	})
	return out
}

// maxPartHeaders bounds the header lines of one part of a batch; the
// SDKs send fewer than ten.
const maxPartHeaders = 64

// lines iterates over the lines of b, each without its LF or CRLF,
// aliasing b. off is where the next line starts.
type lines struct {
	b   []byte
	off int
}

// next returns the next line and where it starts; ok is false at the end.
func (l *lines) next() (line []byte, start int, ok bool) {
	if l.off >= len(l.b) {
		return nil, 0, false
	}
	start = l.off
	rest := l.b[start:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		l.off = len(l.b)
		line = rest
	} else {
		l.off = start + i + 1
		line = rest[:i]
	}
	return bytes.TrimSuffix(line, []byte("\r")), start, true
}

// splitMultipart splits body (CRLF or LF line endings) on boundary,
// appending the parts to parts[:0]. The parts' bodies alias body. It
// stops after maxParts+1 parts, unclosed: the caller refuses more than
// maxParts. Errors: InvalidInput when the boundary never appears or never
// closes. Only lines that start with the delimiter are read: the lines
// between them are skipped by a search for the next one, a newline
// followed by the delimiter (the dashes of an entity's JSON do not stop
// it).
func splitMultipart(body []byte, boundary string, maxParts int, parts []mimePart) ([]mimePart, error) {
	lineDelim := []byte("\n--" + boundary)
	delim := lineDelim[1:]
	search := newDelimSearch(lineDelim)
	parts = parts[:0]
	partStart := -1 // where the current part's first line starts
	for from := 0; ; {
		// from is 0 or follows a newline: a delimiter at from is found by
		// the search from the newline before it.
		at := 0
		if from > 0 || !bytes.HasPrefix(body, delim) {
			start := max(from-1, 0)
			i := search.index(body[start:])
			if i < 0 {
				return nil, errBadBatch("the multipart body is not closed by its boundary")
			}
			at = start + i + 1
		}
		l := lines{b: body, off: at}
		line, _, _ := l.next()
		t := bytes.TrimRight(line, " \t")
		closing := len(t) == len(delim)+2 && bytes.HasSuffix(t, []byte("--"))
		if !closing && len(t) != len(delim) {
			from = l.off // another line that starts like the delimiter
			continue
		}
		// The part ends where the line before the delimiter ends, its
		// newline (LF or CRLF) excluded.
		prevEnd := 0
		if at > 0 {
			prevEnd = at - 1
			if at >= 2 && body[at-2] == '\r' {
				prevEnd = at - 2
			}
		}
		if partStart >= 0 {
			parts = append(parts, newPart(body[partStart:max(partStart, prevEnd)]))
		}
		if closing {
			return parts, nil
		}
		if len(parts) > maxParts {
			return parts, nil
		}
		partStart, from = l.off, l.off
	}
}

// delimSearch finds a delimiter line's start, a newline followed by
// "--" and the boundary. Where the boundary holds a byte other than a
// letter, digit, '-' or '.' (the SDKs' "batch_" and "changeset_"), the
// search looks for that byte, rare in headers and entities, rather than
// for newlines, which end every header line.
type delimSearch struct {
	pat    []byte // "\n--" and the boundary
	anchor int    // where in pat the searched byte is; 0: bytes.Index
}

func newDelimSearch(pat []byte) delimSearch {
	d := delimSearch{pat: pat}
	for i := len("\n--"); i < len(pat); i++ {
		if c := pat[i]; !isAlnum(c) && c != '-' && c != '.' {
			d.anchor = i
			break
		}
	}
	return d
}

// index returns where the first delimiter in s starts, or -1. After as
// many false hits as bytes.Index allows itself before it changes its
// method, it hands the rest of s to bytes.Index.
func (d *delimSearch) index(s []byte) int {
	k, n := d.anchor, len(d.pat)
	if k == 0 {
		return bytes.Index(s, d.pat)
	}
	last := len(s) - n + k // the anchor's last place: the delimiter must fit
	c := d.pat[k]
	fails := 0
	for i := k; i <= last; {
		j := bytes.IndexByte(s[i:last+1], c)
		if j < 0 {
			return -1
		}
		i += j
		if at := i - k; s[at] == d.pat[0] && bytes.Equal(s[at:at+n], d.pat) {
			return at
		}
		i++
		if fails++; fails > (i+16)/8 {
			// No delimiter starts before i-k.
			if r := bytes.Index(s[i-k:], d.pat); r >= 0 {
				return i - k + r
			}
			return -1
		}
	}
	return -1
}

// newPart reads a part's header block and body: what follows the first
// blank line after the headers. Continuation lines are not used by any
// client and are taken as ordinary lines.
func newPart(b []byte) mimePart {
	var p mimePart
	l := lines{b: b}
	first, headers := -1, 0 // where the header block starts, its lines
	for {
		line, start, ok := l.next()
		if !ok {
			if first >= 0 {
				p.header = b[first:]
			}
			return p
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if first >= 0 {
				p.header, p.body = b[first:start], b[l.off:]
				return p
			}
			continue // blank lines before the headers
		}
		if first < 0 {
			first = start
		}
		if headers++; headers > maxPartHeaders {
			p.bad = true
		}
	}
}

// isToken reports whether s is a MIME token: one or more ASCII
// characters other than controls, space and tspecials (RFC 2045).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenBytes[s[i]] {
			return false
		}
	}
	return s != ""
}

var tokenBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

func errBadBatch(why string) *apiErr {
	return apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: "+why+".")
}

// boundaryOf returns the boundary of a multipart/mixed content type. The
// form clients send, "multipart/mixed; boundary=" and a token, is read
// without mime.ParseMediaType's allocations, the boundary aliasing
// contentType; FuzzBoundaryOf holds the two equal.
func boundaryOf(contentType string) (string, bool) {
	if b, ok := strings.CutPrefix(contentType, "multipart/mixed; boundary="); ok && isToken(b) {
		return b, true
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// subRequest is one parsed operation of a changeset.
type subRequest struct {
	method string
	res    resource
	// ifMatch is its first If-Match header's value; ifNoneMatch says
	// its first If-None-Match header has a value.
	ifMatch     tablestore.ETag
	ifNoneMatch bool
	// contentID is its part's Content-ID: the MIME header's, else the
	// first in its own header block; "" when it has none.
	contentID string
	body      []byte // aliases the batch body
}

// batchScratch is the working memory of one $batch request, kept in
// batchScratches from one request to the next. Between requests it holds
// no part of a request: put clears every element, so no body or entity
// is kept alive by the pool. After a batch of small entities it keeps
// their buffers (RawEntity.Reset), for a bulk load's next batch.
type batchScratch struct {
	parts   []mimePart
	subs    []subRequest
	actions []tablestore.TransactionAction
	raws    []tablestore.RawEntity
	head    []byte // the response parts' leads (batchPartHeads)
	// retrieve says the batch holds one retrieve (parseRetrieve), whose
	// Accept header is accept.
	retrieve bool
	accept   string
}

var batchScratches = sync.Pool{New: func() any { return new(batchScratch) }}

// maxKeptBatchBody is the largest $batch body after which the scratch
// keeps its entities' buffers; those of a larger batch go to the
// collector, so an idle server does not hold a burst's memory.
const maxKeptBatchBody = 256 << 10

// put clears sc, keeping the entities' buffers if keepBuffers, and
// returns it to batchScratches.
func (sc *batchScratch) put(keepBuffers bool) {
	sc.clear(keepBuffers)
	batchScratches.Put(sc)
}

// clear zeroes every element sc's slices can hold and empties them; with
// keepBuffers, the entities are Reset instead of zeroed.
func (sc *batchScratch) clear(keepBuffers bool) {
	clear(sc.parts[:cap(sc.parts)])
	clear(sc.subs[:cap(sc.subs)])
	clear(sc.actions[:cap(sc.actions)])
	raws := sc.raws[:cap(sc.raws)]
	if keepBuffers {
		for i := range raws {
			raws[i].Reset()
		}
	} else {
		clear(raws)
	}
	sc.parts, sc.subs, sc.actions, sc.raws = sc.parts[:0], sc.subs[:0], sc.actions[:0], sc.raws[:0]
	sc.retrieve, sc.accept = false, ""
}

// parseBatch reads the whole envelope into sc.subs, which it returns; the
// sub-requests' bodies alias body. Errors are answered as ordinary
// (non-202) errors: nothing has run yet.
func (h *handler) parseBatch(contentType string, body []byte, sc *batchScratch) ([]subRequest, error) {
	boundary, ok := boundaryOf(contentType)
	if !ok {
		return nil, errBadBatch("a batch needs Content-Type multipart/mixed with a boundary")
	}
	outer, err := splitMultipart(body, boundary, 1, sc.parts)
	sc.parts = outer
	if err != nil {
		return nil, err
	}
	if len(outer) != 1 {
		return nil, errBadBatch("a batch holds exactly one changeset")
	}
	changeset := outer[0] // sc.parts is reused below
	if changeset.bad {
		return nil, errBadBatch("a part has too many header lines")
	}
	// The changeset's boundary may alias the body, read only here.
	csBoundary, ok := boundaryOf(changeset.header.get("Content-Type"))
	if !ok {
		return h.parseRetrieve(changeset.body, sc)
	}
	inner, err := splitMultipart(changeset.body, csBoundary, tablestore.MaxTransactionActions, sc.parts)
	sc.parts = inner
	if err != nil {
		return nil, err
	}
	if len(inner) == 0 {
		return nil, errBadBatch("the changeset is empty")
	}
	subs := slices.Grow(sc.subs[:0], len(inner))
	defer func() { sc.subs = subs }()
	var memo urlMemo
	for _, p := range inner {
		if p.bad {
			return nil, errBadBatch("a part has too many header lines")
		}
		s, err := h.parseSubRequest(p.body, &memo)
		if err != nil {
			return nil, err
		}
		if id := p.header.get("Content-ID"); id != "" {
			s.contentID = strings.Clone(id) // the body goes before the answer
		}
		subs = append(subs, s)
	}
	return subs, nil
}

// parseRetrieve reads the part of a batch that is not a changeset: a
// query operation, which Azure takes alone in a batch. Here it must be a
// retrieve, a GET of one entity; sc.retrieve is set and sc.accept holds
// its Accept header (aliasing b).
func (h *handler) parseRetrieve(b []byte, sc *batchScratch) ([]subRequest, error) {
	var memo urlMemo
	s, err := h.parseSubRequest(b, &memo)
	if err != nil {
		return nil, err
	}
	if s.method != http.MethodGet || s.res.kind != kindEntity {
		return nil, errBadBatch("the batch part must be a multipart/mixed changeset or a retrieve of one entity")
	}
	l := lines{b: b}
	for {
		line, _, ok := l.next()
		if !ok || len(bytes.TrimSpace(line)) > 0 {
			break // the request line, which parseSubRequest found
		}
	}
	sc.retrieve, sc.accept = true, newPart(b[l.off:]).header.get("Accept")
	return append(sc.subs[:0], s), nil
}

// subHeaders is what a sub-request's header block holds for its
// operation, the values aliasing the batch body.
type subHeaders struct {
	count       int    // header lines
	ifMatch     []byte // the first If-Match's value
	ifNoneMatch []byte // the first If-None-Match's value
	xMethod     []byte // the first X-HTTP-Method's value
	xMethods    int    // X-HTTP-Method headers
	contentID   []byte // the first Content-ID's value
	body        []byte // what follows the header block's blank line
}

// scanSubHeaders reads what follows a sub-request's request line in one
// pass over its lines: the header block and body newPart finds (blank
// lines before the headers skipped) and the header values the operation
// reads, names in any case, values trimmed. Lines without a colon count
// as header lines; beyond maxPartHeaders lines, the values are not read
// (the sub-request is refused). FuzzSubRequest holds parseSubRequest
// equal to its reading through newPart and partHeader.
func scanSubHeaders(b []byte) subHeaders {
	var hs subHeaders
	haveIfMatch, haveIfNoneMatch, haveContentID := false, false, false
	l := lines{b: b}
	for {
		line, _, ok := l.next()
		if !ok {
			return hs
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if hs.count > 0 {
				hs.body = b[l.off:]
				return hs
			}
			continue // blank lines before the headers
		}
		if hs.count++; hs.count > maxPartHeaders {
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		// Only names of these lengths can be one of the four: their
		// letters fold to no other UTF-8 length.
		k := bytes.TrimSpace(line[:colon])
		switch len(k) {
		case len("If-Match"):
			if !haveIfMatch && strings.EqualFold(string(k), "If-Match") {
				hs.ifMatch, haveIfMatch = bytes.TrimSpace(line[colon+1:]), true
			}
		case len("Content-ID"):
			if !haveContentID && strings.EqualFold(string(k), "Content-ID") {
				hs.contentID, haveContentID = bytes.TrimSpace(line[colon+1:]), true
			}
		case len("If-None-Match"): // and X-HTTP-Method
			switch {
			case !haveIfNoneMatch && strings.EqualFold(string(k), "If-None-Match"):
				hs.ifNoneMatch, haveIfNoneMatch = bytes.TrimSpace(line[colon+1:]), true
			case strings.EqualFold(string(k), "X-Http-Method"):
				if hs.xMethods++; hs.xMethods == 1 {
					hs.xMethod = bytes.TrimSpace(line[colon+1:])
				}
			}
		}
	}
}

// checkContentIDs refuses, before the answer echoes them, Content-IDs
// holding a control character, which would break its header lines.
// Errors: InvalidInput.
func checkContentIDs(subs []subRequest) error {
	for i := range subs {
		for _, c := range []byte(subs[i].contentID) {
			if c < ' ' || c == 0x7f {
				return errBadBatch("a part's Content-ID holds a control character")
			}
		}
	}
	return nil
}

// urlMemo is the URL of a changeset's last sub-request, as it was sent
// (aliasing the batch body), and the resource it names. The inserts of
// a bulk load all send one URL, read once.
type urlMemo struct {
	url string
	res resource
}

// parseSubRequest reads "VERB URL HTTP/1.1", headers, and the body: all
// that follows the header block, trimmed. A URL equal to memo's (the
// sub-request before's) names memo's resource; a table equal to memo's
// is that string. memo then holds this sub-request's URL and resource.
func (h *handler) parseSubRequest(b []byte, memo *urlMemo) (subRequest, error) {
	return h.parseSubRequestWith(b, memo, scanSubHeaders)
}

// parseSubRequestWith is parseSubRequest reading the header block that
// follows the request line with readHeaders.
func (h *handler) parseSubRequestWith(b []byte, memo *urlMemo, readHeaders func([]byte) subHeaders) (subRequest, error) {
	var s subRequest
	l := lines{b: b}
	var reqLine []byte
	for {
		line, _, ok := l.next()
		if !ok {
			return s, errBadBatch("a changeset part holds no request")
		}
		if len(bytes.TrimSpace(line)) > 0 {
			reqLine = line
			break
		}
	}
	// The request line is read through a view of the body: what the
	// sub-request keeps of it (its table and keys) is copied below.
	f, ok := requestLine(unsafe.String(unsafe.SliceData(reqLine), len(reqLine)))
	if !ok {
		return s, errBadBatch("a changeset part does not start with a request line")
	}
	hs := readHeaders(b[l.off:])
	if hs.count > maxPartHeaders {
		return s, errBadBatch("a sub-request has too many header lines")
	}
	s.method = upperMethod(f[0])
	s.body = bytes.TrimSpace(hs.body)
	s.ifMatch, s.ifNoneMatch = tablestore.ETag(hs.ifMatch), len(hs.ifNoneMatch) > 0
	if len(hs.contentID) > 0 {
		s.contentID = string(hs.contentID) // a copy: the body goes before the answer
	}
	xMethod, xMethods := hs.xMethod, hs.xMethods
	if xMethods > 0 {
		switch {
		case s.method != http.MethodPost:
			return s, errXMethodNotUsingPost
		case xMethods > 1:
			return s, errXMethodIncorrectCount
		}
		switch m := strings.ToUpper(string(xMethod)); m {
		case "MERGE", "PATCH", "PUT", "DELETE":
			s.method = m
		default:
			return s, errXMethodIncorrectValue
		}
	}
	if memo.url != "" && f[1] == memo.url {
		s.res = memo.res // the same URL names the same resource
		return s, nil
	}
	res, err := h.subRequestResource(f[1], memo.res.table)
	if err != nil {
		return s, err
	}
	s.res = res
	memo.url, memo.res = f[1], res
	return s, nil
}

// subRequestResource reads a sub-request's URL (which may alias the batch
// body: what the resource keeps of it is copied, but a table equal to
// prevTable is that string).
func (h *handler) subRequestResource(rawURL, prevTable string) (resource, error) {
	var res resource
	host, path, ok := splitSimpleURL(rawURL)
	var rawQuery string // none on the short path
	if !ok {
		u, err := url.Parse(strings.Clone(rawURL)) // its parts may be kept
		if err != nil {
			return res, errBadBatch("a sub-request URL is malformed")
		}
		host, path, rawQuery = u.Host, u.EscapedPath(), u.RawQuery
	}
	if a := hostAccount(host); a != "" && strings.TrimSuffix(a, secondarySuffix) != h.account {
		return res, errHostAccount
	}
	rest, _ := h.stripAccount(host, path)
	q, err := parseQuery(rawQuery)
	if err != nil {
		return res, err
	}
	res, err = parseResource(resource{query: q}, rest)
	if err != nil {
		return res, err
	}
	if res.kind != kindEntities && res.kind != kindEntity {
		return res, errBadBatch("a sub-request must address an entity or a table's entities")
	}
	// The names may alias the body, which goes back to its pool before
	// the transaction runs: the table is shared with the sub-request
	// before when it is the same, the keys are copied.
	if res.table == prevTable {
		res.table = prevTable
	} else {
		res.table = strings.Clone(res.table)
	}
	res.pk, res.rk = strings.Clone(res.pk), strings.Clone(res.rk)
	return res, nil
}

// splitSimpleURL returns what url.Parse gives as Host and EscapedPath()
// for the URLs changeset clients send, "http://host[:port]/path" or
// "/path", whose path holds only unreserved characters, sub-delimiters,
// ':', '@' and '/' (so no query), without url.Parse's allocations. ok is
// false for any other URL (a query, an escape, a user, another scheme),
// which the caller gives to url.Parse. FuzzSimpleURL holds the two equal.
func splitSimpleURL(s string) (host, path string, ok bool) {
	rest, found := strings.CutPrefix(s, "http://")
	if !found {
		rest, found = strings.CutPrefix(s, "https://")
	}
	if found {
		i := strings.IndexByte(rest, '/')
		if i < 0 || !simpleHost(rest[:i]) {
			return "", "", false
		}
		host, rest = rest[:i], rest[i:]
	} else if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return "", "", false // "//x" names a host
	}
	for i := 0; i < len(rest); i++ {
		if !simplePathByte(rest[i]) {
			return "", "", false
		}
	}
	return host, rest, true
}

// simpleHost reports whether h is a name of letters, digits, dots and
// hyphens, with an optional port of digits.
func simpleHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if name == "" || hasPort && port == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// simplePathByte reports whether c stands for itself in a URL's escaped
// path: unreserved, a sub-delimiter, ':', '@' or '/'.
func simplePathByte(c byte) bool { return simplePathBytes[c] }

var simplePathBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("-._~!$&'()*+,;=:@/", byte(c)) >= 0
	}
	return t
}()

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// requestLine splits "VERB URL HTTP/1.1", fields separated by spaces or
// tabs; the fields alias line.
func requestLine(line string) (f [3]string, ok bool) {
	rest := trimBlanks(line)
	for n := range f {
		if rest == "" {
			return f, false
		}
		end := 0
		for end < len(rest) && rest[end] != ' ' && rest[end] != '\t' {
			end++
		}
		f[n], rest = rest[:end], trimBlanks(rest[end:])
	}
	return f, rest == "" && strings.HasPrefix(f[2], "HTTP/")
}

// trimBlanks is strings.TrimLeft(s, " \t") without its set's making.
func trimBlanks(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// upperMethod returns m in upper case, without allocating for the
// methods a changeset holds.
func upperMethod(m string) string {
	for _, known := range [...]string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, "MERGE", http.MethodGet} {
		if strings.EqualFold(m, known) {
			return known
		}
	}
	return strings.Clone(strings.ToUpper(m)) // m may alias a body
}

// action turns a sub-request into a transaction action and the
// operation it needs permission for. An entity the action writes is
// decoded into raw, or with asMap into a property map (see
// mapBodiesKey).
func (s *subRequest) action(raw *tablestore.RawEntity, asMap bool) (tablestore.TransactionAction, op, error) {
	var a tablestore.TransactionAction
	ifMatch := s.ifMatch
	if s.ifNoneMatch {
		return a, 0, apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: If-None-Match is not supported on this operation.")
	}
	decode := func() (bodyEntity, error) {
		body := s.body
		if err := checkMembers(body); err != nil {
			return bodyEntity{}, err
		}
		if s.res.kind == kindEntity {
			body = withKeys(body, s.res.pk, s.res.rk)
		}
		return decodeBody(body, raw, asMap)
	}
	switch {
	case s.method == http.MethodPost && s.res.kind == kindEntities:
		e, err := decode()
		if err != nil {
			return a, 0, err
		}
		return tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: e.entity()}, opInsert, nil
	case s.res.kind != kindEntity:
		return a, 0, errMethodNotAllowed
	case s.method == http.MethodDelete:
		e := &tablestore.Entity{PartitionKey: s.res.pk, RowKey: s.res.rk}
		return tablestore.TransactionAction{Type: tablestore.ActionDelete, Entity: e, IfMatch: ifMatch}, opDelete, nil
	case s.method == http.MethodPut || s.method == "MERGE" || s.method == http.MethodPatch:
		e, err := decode()
		if err != nil {
			return a, 0, err
		}
		e.setKeys(s.res.pk, s.res.rk)
		a.Type, a.Entity, a.IfMatch = writeAction(s.method == http.MethodPut, ifMatch), e.entity(), ifMatch
		if ifMatch != "" {
			return a, opUpdate, nil
		}
		return a, opUpsert, nil
	}
	return a, 0, errMethodNotAllowed
}

// batch serves POST $batch: one changeset, run as one transaction.
func (q *request) batch() (err error) {
	sc := batchScratches.Get().(*batchScratch)
	defer sc.put(len(q.body) <= maxKeptBatchBody) // after the response is written: it reads the actions
	defer func() {
		if f, ok := err.(*opFailure); ok && f.index < len(sc.subs) {
			s := &sc.subs[f.index]
			f.insert = s.method == http.MethodPost && s.res.kind == kindEntities
		}
	}()
	subs, err := q.h.parseBatch(q.r.Header.Get("Content-Type"), q.body, sc)
	if err != nil {
		return err
	}
	if sc.retrieve {
		return q.batchRetrieve(&subs[0], sc.accept)
	}
	cosmos := q.h.cosmos != nil
	cosmosWire := cosmos && !q.h.cosmos.opt.StorageWire
	if cosmosWire {
		if err := checkContentIDs(subs); err != nil {
			return err
		}
	}
	if len(subs) > tablestore.MaxTransactionActions {
		// Azure was observed to answer this at index 99 (or 0).
		return failAt(tablestore.MaxTransactionActions-1, apiError(http.StatusBadRequest, edm.CodeInvalidInput,
			"The batch request operation exceeds the maximum 100 changes per change set."))
	}
	sc.actions = slices.Grow(sc.actions[:0], len(subs))[:len(subs)]
	sc.raws = slices.Grow(sc.raws[:0], len(subs))[:len(subs)]
	actions, raws := sc.actions, sc.raws
	table := subs[0].res.table
	asMap := mapBodies(q.r)
	for i := range subs {
		s := &subs[i]
		if !strings.EqualFold(s.res.table, table) {
			return failAt(i, errBadBatch("all operations of a batch must address the same table"))
		}
		a, o, err := s.action(&raws[i], asMap)
		if err != nil {
			return failAt(i, err)
		}
		pk, rk, _ := actionKeys(a.Entity)
		if err := q.authorize(o, s.res.table, pk, rk); err != nil {
			return failAt(i, err)
		}
		actions[i] = a
	}
	// The actions hold copies of what they need: the body can go before
	// the store's work begins.
	q.releaseBody()
	for i := range subs {
		subs[i].body = nil
	}
	err = root.SubmitTransaction(q.h.db.Table(table), q.r.Context(), actions,
		driver.CommitOptions{DistinctTimestamps: cosmos && !q.h.cosmos.opt.StorageTimestamps})
	if err != nil {
		var be *tablestore.BatchError
		if as(err, &be) {
			return failAt(be.Index, be.Err)
		}
		return err
	}
	base := q.res.base
	if base == "" {
		base = "/"
	}
	q.writeBatch(func(b []byte, lead string) []byte {
		if cosmosWire {
			return appendCosmosParts(b, lead, base, actions, subs) // cosmos_wire.go
		}
		sc.head = batchPartHeads(sc.head[:0], lead, base)
		return appendBatchParts(b, sc.head, len(lead)+len(insertPartHead)+len(base), len(base), actions, subs)
	})
	return nil
}

// The constant header lines of a successful changeset's parts: each
// starts with the part's status and common headers; an insert's
// continues with insertPartHead, the base of its Location and the
// entity's path; any other's with otherPartHead.
const (
	okPartHead     = "HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n"
	insertPartHead = okPartHead + "Preference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\nLocation: "
	otherPartHead  = okPartHead + "DataServiceVersion: 1.0;\r\n"
)

// batchPartHeads appends to dst, once per batch, the two leads of the
// parts of a successful changeset: an insert's (lead, insertPartHead and
// base), then any other action's (lead and otherPartHead).
func batchPartHeads(dst []byte, lead, base string) []byte {
	dst = append(append(append(dst, lead...), insertPartHead...), base...)
	return append(append(dst, lead...), otherPartHead...)
}

// appendBatchParts appends the response parts of a successful
// changeset's actions to b: heads holds the two leads (batchPartHeads),
// the insert's first, of insertLen bytes ending with the base, of
// baseLen. An insert's part carries its
// Location and DataServiceId (the base and the entity's path) and its
// ETag, an update's its ETag, a delete's neither; each ends with the
// header block's blank line and the part's CRLF.
func appendBatchParts(b, heads []byte, insertLen, baseLen int, actions []tablestore.TransactionAction, subs []subRequest) []byte {
	insertHead, otherHead := heads[:insertLen], heads[insertLen:]
	for i := range actions {
		a := &actions[i]
		pk, rk, etag := actionKeys(a.Entity)
		switch a.Type {
		case tablestore.ActionInsert:
			b = append(b, insertHead...)
			loc := len(b) - baseLen
			b = wire.AppendEntityPath(b, subs[i].res.table, pk, rk)
			locEnd := len(b)
			b = append(b, "\r\nDataServiceId: "...)
			b = append(b, b[loc:locEnd]...)
			b = append(b, "\r\nETag: "...)
		case tablestore.ActionDelete:
			b = append(b, otherHead...)
		default:
			b = append(b, otherHead...)
			b = append(b, "ETag: "...)
		}
		if a.Type != tablestore.ActionDelete {
			b = append(b, etag...)
			b = append(b, "\r\n"...)
		}
		b = append(b, "\r\n\r\n"...)
	}
	return b
}

// actionKeys are the keys of an action's entity, a *RawEntity or an
// *Entity (a delete's, or with mapBodiesKey any), and the ETag its write
// set.
func actionKeys(e tablestore.ActionEntity) (pk, rk string, etag tablestore.ETag) {
	switch e := e.(type) {
	case *tablestore.RawEntity:
		return e.PartitionKey, e.RowKey, e.ETag
	case *tablestore.Entity:
		return e.PartitionKey, e.RowKey, e.ETag
	}
	return "", "", ""
}

// opFailure is the failure of a batch's operation at index, which the
// batch answers 202 with a changeset holding that one operation: its
// status and a one-line JSON error whose message starts with "index:"
// (see answerFailure).
type opFailure struct {
	index  int
	err    error
	insert bool // the operation is an insert, answered return-no-content
}

func (e *opFailure) Error() string { return "operation " + itoa(e.index) + ": " + e.err.Error() }
func (e *opFailure) Unwrap() error { return e.err }

// failAt is the failure of the batch's operation at index.
func failAt(index int, err error) error { return &opFailure{index: index, err: err} }

// answerFailure writes the batch response for f.
func (q *request) answerFailure(f *opFailure) {
	q.writeFailedPart(q.errorPart(itoa(f.index)+":", f.err, f.insert))
}

// writeFailedPart writes the 202 batch response whose changeset holds
// one part, the failed operation's.
func (q *request) writeFailedPart(part string) {
	q.writeBatch(func(b []byte, lead string) []byte { return append(append(b, lead...), part...) })
}

// statusLine is a part's status line for code, with its CRLF.
func statusLine(code int) string {
	return "HTTP/1.1 " + itoa(code) + " " + http.StatusText(code) + "\r\n"
}

// errorPart is the response part of a batch operation that failed with
// err: its status line, headers and one-line JSON error, whose message
// starts with prefix. An insert's says Preference-Applied, as its success
// would (insertPartHead).
func (q *request) errorPart(prefix string, err error, insert bool) string {
	ae := toAPIError(err)
	msg := prefix + ae.msg + "\nRequestId:" + q.id + "\nTime:" + edm.FormatDateTimeJSON(q.start)
	pref := ""
	if insert {
		pref = "Preference-Applied: return-no-content\r\n"
	}
	return statusLine(ae.status) +
		"X-Content-Type-Options: nosniff\r\n" +
		"Cache-Control: no-cache\r\n" + pref +
		"DataServiceVersion: 3.0;\r\n" +
		"Content-Type: " + contentType(tablestore.MinimalMetadata) + "\r\n" +
		"\r\n" + string(errorJSON(ae.code, msg)) + "\r\n"
}

// batchRetrieve answers a batch holding one retrieve s as Azure does: 202
// with Get Entity's response as the batch's one part, outside any
// changeset; a failure (a missing entity's 404, a refused permission) is
// that part's status and JSON error.
func (q *request) batchRetrieve(s *subRequest, accept string) error {
	res := s.res
	res.base = q.res.base
	q.res = res
	var part []byte
	l, err := metadataLevelOf(res.query.Get("$format"), accept)
	if err == nil {
		err = q.authorize(opRead, res.table, res.pk, res.rk)
	}
	var body []byte
	var etag tablestore.ETag
	if err == nil {
		body, etag, err = q.readEntity(l)
	}
	if err != nil {
		part = append(part, q.errorPart("", err, false)...)
	} else {
		if !q.needMemory(int64(len(body))) {
			return q.busy()
		}
		// The headers in the order of a retrieve Azure answered.
		part = append(part, "HTTP/1.1 200 OK\r\nDataServiceVersion: 3.0;\r\nContent-Type: "...)
		part = append(part, contentType(l)...)
		part = append(part, "\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nETag: "...)
		part = append(part, etag...)
		part = append(append(append(part, "\r\n\r\n"...), body...), "\r\n"...)
	}
	bb := "batchresponse_" + newRequestID()
	b := responseBuffers.get()
	b = append(b, "--"+bb+"\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"...)
	b = append(append(b, part...), "--"+bb+"--\r\n"...)
	q.writeMultipart(bb, b)
	return nil
}

// writeBatch writes the 202 multipart response around the changeset
// response parts, which appendParts appends to b: each starts with lead,
// the changeset's delimiter line and the part's MIME headers, and ends
// with a CRLF. The body starts with the batch boundary and the changeset
// boundary follows the part's blank line directly, as the Go SDK's parser
// requires; the JavaScript SDK needs the boundary prefix
// changesetresponse_.
func (q *request) writeBatch(appendParts func(b []byte, lead string) []byte) {
	bb := "batchresponse_" + newRequestID()
	const partHead = "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
	lead := "--changesetresponse_" + newRequestID() + partHead
	cb := lead[len("--") : len(lead)-len(partHead)]
	b := responseBuffers.get()
	b = append(b, "--"+bb+"\r\nContent-Type: multipart/mixed; boundary="+cb+"\r\n\r\n"...)
	b = appendParts(b, lead)
	b = append(b, "--"+cb+"--\r\n--"+bb+"--\r\n"...)
	q.writeMultipart(bb, b)
}

// writeMultipart writes the 202 response of a batch whose multipart body,
// of boundary bb, is b, a buffer of responseBuffers.
func (q *request) writeMultipart(bb string, b []byte) {
	hd := q.w.Header()
	hd.Set("Content-Type", "multipart/mixed; boundary="+bb)
	hd.Set("Content-Length", itoa(len(b)))
	q.w.WriteHeader(http.StatusAccepted)
	_, _ = q.w.Write(b)
	q.respBuf = b // back to the pool once the response is sent
}
