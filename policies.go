package tablestore

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/tablestore/tablestore/driver"
)

// AccessPolicy is one stored access policy of a table, Azure's
// SignedIdentifier: a shared access signature that names the policy by ID
// takes its start, expiry and permissions from it, and removing the
// policy revokes every such signature. Zero times and an empty Permission
// leave the field to the signature.
type AccessPolicy struct {
	ID     string
	Start  time.Time
	Expiry time.Time
	// Permission holds letters of "raud" (read, add, update, delete), in
	// that order.
	Permission string
}

// MaxAccessPolicies is the most stored access policies a table holds, as
// in Azure.
const MaxAccessPolicies = 5

// AccessPolicies returns the table's stored access policies, in the order
// they were set (Azure's Get Table ACL). Errors: TableNotFound;
// NotImplemented for a driver that stores no policies.
func (t *Table) AccessPolicies(ctx context.Context) ([]AccessPolicy, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	pt, err := t.policyTable()
	if err != nil {
		return nil, err
	}
	ps, err := pt.AccessPolicies(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	out := make([]AccessPolicy, len(ps))
	for i, p := range ps {
		out[i] = AccessPolicy(p)
	}
	return out, nil
}

// SetAccessPolicies replaces the table's stored access policies (Azure's
// Set Table ACL); nil or empty removes them all. Times are kept in UTC at
// 100 ns precision. Policies are deleted with the table.
//
// Errors: InvalidInput for more than MaxAccessPolicies policies, an empty
// or repeated ID, an ID over 64 characters, or a Permission that is not
// letters of "raud" in that order; TableNotFound; NotImplemented for a
// driver that stores no policies.
func (t *Table) SetAccessPolicies(ctx context.Context, policies []AccessPolicy) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	if len(policies) > MaxAccessPolicies {
		return newError(CodeInvalidInput, "a table holds at most %d access policies, got %d", MaxAccessPolicies, len(policies))
	}
	seen := make(map[string]bool, len(policies))
	ps := make([]driver.AccessPolicy, len(policies))
	for i, p := range policies {
		switch {
		case p.ID == "":
			return newError(CodeInvalidInput, "access policy %d has no ID", i)
		case utf8.RuneCountInString(p.ID) > 64:
			return newError(CodeInvalidInput, "access policy ID %s is longer than 64 characters", quoteShort(p.ID))
		case seen[p.ID]:
			return newError(CodeInvalidInput, "access policy ID %s appears twice", quoteShort(p.ID))
		case !validPolicyPermission(p.Permission):
			return newError(CodeInvalidInput, "access policy %s has permission %s; use letters of \"raud\" in that order", quoteShort(p.ID), quoteShort(p.Permission))
		}
		seen[p.ID] = true
		ps[i] = driver.AccessPolicy{ID: p.ID, Start: policyTime(p.Start), Expiry: policyTime(p.Expiry), Permission: p.Permission}
	}
	pt, err := t.policyTable()
	if err != nil {
		return err
	}
	return mapError(pt.SetAccessPolicies(ctx, ps), false)
}

func (t *Table) policyTable() (driver.PolicyTable, error) {
	pt, ok := t.drv.(driver.PolicyTable)
	if !ok {
		return nil, newError(CodeNotImplemented, "the store's driver keeps no access policies")
	}
	return pt, nil
}

func policyTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(100 * time.Nanosecond)
}

// validPolicyPermission reports whether s is a subsequence of "raud".
func validPolicyPermission(s string) bool {
	const order = "raud"
	j := 0
	for i := 0; i < len(s); i++ {
		for j < len(order) && order[j] != s[i] {
			j++
		}
		if j == len(order) {
			return false
		}
		j++
	}
	return true
}
