package server

import (
	"encoding/xml"
	"net/http"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
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

var errBadXML = apiError(http.StatusBadRequest, edm.CodeInvalidXMLDocument, "XML specified is not syntactically valid.")

// aclRule is the schema of Set Table ACL's body: SignedIdentifiers, each
// with one Id and at most one AccessPolicy of at most one Start, Expiry
// and Permission, children in any order (the Go SDK writes AccessPolicy
// before Id). How many identifiers, and what an Id and a Permission may
// hold, Table.SetAccessPolicies checks.
var aclRule = &xmlRule{children: []xmlChild{
	{name: "SignedIdentifier", min: 0, max: maxXMLElements, rule: &xmlRule{children: []xmlChild{
		{name: "Id", rule: leaf(nil), min: 1, max: 1},
		{name: "AccessPolicy", min: 0, max: 1, rule: &xmlRule{children: []xmlChild{
			{name: "Start", rule: leaf(validSASTime), min: 0, max: 1},
			{name: "Expiry", rule: leaf(validSASTime), min: 0, max: 1},
			{name: "Permission", rule: leaf(nil), min: 0, max: 1},
		}}},
	}}},
}}

// validSASTime accepts an empty time or one parseSASTime reads.
func validSASTime(s string) bool {
	if s == "" {
		return true
	}
	_, ok := parseSASTime(s)
	return ok
}

func (q *request) getACL() error {
	pols, err := root.AccessPolicies(q.h.db.Table(q.res.table), q.r.Context())
	if err != nil {
		return err
	}
	body := []byte(xmlDeclaration)
	if len(pols) == 0 {
		q.writeXML(http.StatusOK, append(body, "<SignedIdentifiers />"...)) // Azure's form
		return nil
	}
	doc := xmlIdentifiers{Identifiers: []xmlIdentifier{}}
	for _, p := range pols {
		xi := xmlIdentifier{ID: p.ID}
		// An identifier stored without a policy has no AccessPolicy
		// element, as Azure answers it.
		if p.Permission != "" || !p.Start.IsZero() || !p.Expiry.IsZero() {
			xi.Policy = &xmlPolicy{Permission: p.Permission}
			if !p.Start.IsZero() {
				xi.Policy.Start = p.Start.UTC().Format(aclTimeLayout)
			}
			if !p.Expiry.IsZero() {
				xi.Policy.Expiry = p.Expiry.UTC().Format(aclTimeLayout)
			}
		}
		doc.Identifiers = append(doc.Identifiers, xi)
	}
	out, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	q.writeXML(http.StatusOK, append(body, out...))
	return nil
}

func (q *request) setACL() error {
	pols, err := parseACL(q.body)
	if err != nil {
		return err
	}
	if err := root.SetAccessPolicies(q.h.db.Table(q.res.table), q.r.Context(), pols); err != nil {
		// The library checks the policies (count, IDs, permissions);
		// Azure reports those problems as a bad XML document.
		if tablestore.ErrorCode(err) == edm.CodeInvalidInput {
			err = apiError(http.StatusBadRequest, edm.CodeInvalidXMLDocument, "XML specified is not syntactically valid: "+err.(*tablestore.Error).Message+".")
		}
		return err
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseACL reads a SignedIdentifiers document; an empty body is no
// policies. Errors: InvalidXmlDocument for anything aclRule refuses;
// Table.SetAccessPolicies checks the rest.
func parseACL(body []byte) ([]driver.AccessPolicy, error) {
	if len(trimXMLSpace(body)) == 0 {
		return nil, nil
	}
	root, err := parseXML(body)
	if err != nil {
		return nil, err
	}
	if root.name != "SignedIdentifiers" {
		return nil, errBadXML
	}
	if err := aclRule.validate(root); err != nil {
		return nil, errBadXML // Azure's code for any fault of an ACL
	}
	out := []driver.AccessPolicy{}
	for _, si := range root.children {
		p := driver.AccessPolicy{ID: si.child("Id").text}
		if ap := si.child("AccessPolicy"); ap != nil {
			if e := ap.child("Start"); e != nil && e.text != "" {
				p.Start, _ = parseSASTime(e.text)
			}
			if e := ap.child("Expiry"); e != nil && e.text != "" {
				p.Expiry, _ = parseSASTime(e.text)
			}
			if e := ap.child("Permission"); e != nil {
				p.Permission = e.text
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// trimXMLSpace trims XML white space (space, tab, CR, LF).
func trimXMLSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
