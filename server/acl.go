package server

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/tablestore/tablestore"
)

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
	pols, err := q.h.db.Table(q.res.table).AccessPolicies(q.r.Context())
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
	if err := q.h.db.Table(q.res.table).SetAccessPolicies(q.r.Context(), pols); err != nil {
		// The library checks the policies (count, IDs, permissions);
		// Azure reports those problems as a bad XML document.
		if tablestore.ErrorCode(err) == tablestore.CodeInvalidInput {
			err = apiError(http.StatusBadRequest, "InvalidXmlDocument", "XML specified is not syntactically valid: "+err.(*tablestore.Error).Message+".")
		}
		q.fail(err)
		return
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
}

// parseACL reads a SignedIdentifiers document. Errors: InvalidXmlDocument
// for bad XML or a bad time; Table.SetAccessPolicies checks the rest.
func parseACL(body []byte) ([]tablestore.AccessPolicy, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var doc xmlIdentifiers
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, errBadXML
	}
	var out []tablestore.AccessPolicy
	for _, id := range doc.Identifiers {
		p := tablestore.AccessPolicy{ID: id.ID}
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
		}
		out = append(out, p)
	}
	return out, nil
}
