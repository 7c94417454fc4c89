package server

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
)

// AccessPolicy is one stored access policy of a table (Azure's
// SignedIdentifier): a service SAS naming it with si takes its start,
// expiry and permissions from here. Zero times and an empty Permission
// mean the field is left to the signature.
type AccessPolicy struct {
	ID         string
	Start      time.Time
	Expiry     time.Time
	Permission string
}

// MaxAccessPolicies is Azure's limit of stored access policies per table.
const MaxAccessPolicies = 5

// PolicyStore keeps each table's stored access policies. Table names
// are matched case-insensitively. Implementations must be safe for
// concurrent use.
type PolicyStore interface {
	// Policies returns the table's policies; none is not an error.
	Policies(ctx context.Context, table string) ([]AccessPolicy, error)
	// SetPolicies replaces the table's policies; nil removes them.
	SetPolicies(ctx context.Context, table string, policies []AccessPolicy) error
}

// NewMemoryPolicyStore returns a PolicyStore that keeps policies in
// memory.
func NewMemoryPolicyStore() PolicyStore { return &memoryPolicies{m: map[string][]AccessPolicy{}} }

type memoryPolicies struct {
	mu sync.Mutex
	m  map[string][]AccessPolicy
}

func (s *memoryPolicies) Policies(_ context.Context, table string) ([]AccessPolicy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AccessPolicy(nil), s.m[strings.ToLower(table)]...), nil
}

func (s *memoryPolicies) SetPolicies(_ context.Context, table string, p []AccessPolicy) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) == 0 {
		delete(s.m, strings.ToLower(table))
		return nil
	}
	s.m[strings.ToLower(table)] = append([]AccessPolicy(nil), p...)
	return nil
}

// The ACL document: <SignedIdentifiers><SignedIdentifier><Id/>
// <AccessPolicy><Start/><Expiry/><Permission/></AccessPolicy>...
type xmlIdentifiers struct {
	XMLName     xml.Name        `xml:"SignedIdentifiers"`
	Identifiers []xmlIdentifier `xml:"SignedIdentifier"`
}

type xmlIdentifier struct {
	ID     string     `xml:"Id"`
	Policy *xmlPolicy `xml:"AccessPolicy"`
}

type xmlPolicy struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

const aclTimeLayout = "2006-01-02T15:04:05.0000000Z"

var errBadXML = apiError(http.StatusBadRequest, "InvalidXmlDocument", "XML specified is not syntactically valid.")

func (q *request) getACL() {
	if err := q.authorize(opGetACL, q.res.table, "", ""); err != nil {
		q.fail(err)
		return
	}
	if _, err := q.lookupTable(q.res.table, tablestore.CodeTableNotFound); err != nil {
		q.fail(err)
		return
	}
	pols, err := q.h.policies.Policies(q.r.Context(), q.res.table)
	if err != nil {
		q.fail(err)
		return
	}
	doc := xmlIdentifiers{Identifiers: []xmlIdentifier{}}
	for _, p := range pols {
		xp := &xmlPolicy{Permission: p.Permission}
		if !p.Start.IsZero() {
			xp.Start = p.Start.UTC().Format(aclTimeLayout)
		}
		if !p.Expiry.IsZero() {
			xp.Expiry = p.Expiry.UTC().Format(aclTimeLayout)
		}
		doc.Identifiers = append(doc.Identifiers, xmlIdentifier{ID: p.ID, Policy: xp})
	}
	out, err := xml.Marshal(doc)
	if err != nil {
		q.fail(err)
		return
	}
	body := append([]byte(xml.Header[:len(xml.Header)-1]), out...)
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.Header().Set("Content-Length", itoa(len(body)))
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(body)
}

func (q *request) setACL() {
	if err := q.authorize(opSetACL, q.res.table, "", ""); err != nil {
		q.fail(err)
		return
	}
	body, err := q.readBody()
	if err != nil {
		q.fail(err)
		return
	}
	pols, err := parseACL(body)
	if err != nil {
		q.fail(err)
		return
	}
	if _, err := q.lookupTable(q.res.table, tablestore.CodeTableNotFound); err != nil {
		q.fail(err)
		return
	}
	if err := q.h.policies.SetPolicies(q.r.Context(), q.res.table, pols); err != nil {
		q.fail(err)
		return
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
}

// parseACL reads a SignedIdentifiers document. Errors: InvalidXmlDocument
// for bad XML, more than five policies, an empty or over-long Id, a
// repeated Id, a bad time or permission.
func parseACL(body []byte) ([]AccessPolicy, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var doc xmlIdentifiers
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, errBadXML
	}
	if len(doc.Identifiers) > MaxAccessPolicies {
		return nil, errBadXML
	}
	seen := map[string]bool{}
	var out []AccessPolicy
	for _, id := range doc.Identifiers {
		if id.ID == "" || len(id.ID) > 64 || seen[id.ID] {
			return nil, errBadXML
		}
		seen[id.ID] = true
		p := AccessPolicy{ID: id.ID}
		if id.Policy != nil {
			var ok bool
			if s := strings.TrimSpace(id.Policy.Start); s != "" {
				if p.Start, ok = parseSASTime(s); !ok {
					return nil, errBadXML
				}
			}
			if s := strings.TrimSpace(id.Policy.Expiry); s != "" {
				if p.Expiry, ok = parseSASTime(s); !ok {
					return nil, errBadXML
				}
			}
			p.Permission = strings.TrimSpace(id.Policy.Permission)
			if !inOrder(p.Permission, "raud") {
				return nil, errBadXML
			}
		}
		out = append(out, p)
	}
	return out, nil
}
