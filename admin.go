package tablestore

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Checkpoint writes a consistent copy of the whole store into directory
// dir, which must not exist yet, while the store stays open: reads and
// writes go on during the call. The copy holds every commit acknowledged
// before Checkpoint started, each transaction entirely or not at all, as
// of one instant; Open(dir, nil) opens it as a store of its own. On the
// embedded engine the copy hard-links the immutable data files, so it
// takes little time and space on the same filesystem.
//
// Errors: NotImplemented when the store's driver cannot checkpoint (a
// remote store), ErrClosed, ctx's error, and I/O errors (such as dir
// existing already).
func (db *DB) Checkpoint(ctx context.Context, dir string) error {
	if err := db.checkContext(ctx); err != nil {
		return err
	}
	cp, ok := db.conn.(driver.Checkpointer)
	if !ok {
		return newError(edm.CodeNotImplemented, "this store's driver cannot write a checkpoint")
	}
	return mapError(cp.Checkpoint(ctx, dir), false)
}

// TableStats are estimates of a table's size read from the store's
// metadata, without reading the table. See Table.Stats.
type TableStats struct {
	// Entities estimates the stored entities (expired ones not yet
	// swept included). On the embedded engine a table of up to 20,000
	// entities is counted exactly, writes still in memory included;
	// past that, it is the table's disk usage (writes in memory flushed
	// first) times the entities per byte measured by counting runs of
	// entities at 8 places spread over that usage, typically within a
	// few percent.
	Entities int64
	// Bytes estimates the disk space the table's data takes.
	Bytes int64
	// Unflushed is true when the newest writes, still held in memory, may
	// be missing from both estimates.
	Unflushed bool
}

// Stats estimates the table's size: on the embedded engine, by counting
// the table's first 20,000 entities and, past them, scaling its disk
// usage by the entities per byte of runs counted at 8 places (at most
// 40,000 entities more), so it takes a bounded time whatever the table's
// size. Writes still in memory are flushed first. For an exact count of a larger table, run a query.
//
// Errors: TableNotFound, NotImplemented when the store's driver cannot
// estimate (a remote store), ErrClosed, ctx's error.
func (t *Table) Stats(ctx context.Context) (*TableStats, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	sr, ok := t.db.conn.(driver.StatsReader)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store's driver cannot estimate table sizes")
	}
	st, err := sr.TableStats(ctx, t.name)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &TableStats{Entities: st.Entities, Bytes: st.Bytes, Unflushed: st.Unflushed}, nil
}

// Health returns nil while the store accepts writes, else the first fault
// it met (an *Error matching ErrCorrupt for damaged data, found by any
// read, write, check or background compaction); from then on every write
// fails, while reads go on and fail only where they meet damage. It does
// no I/O and may be called at any time, even after Close. Options'
// OnCorruption is called once with the same error. While the disk is
// full it returns an error matching ErrNoSpace (code ServerBusy), which
// is not a fault: it clears by itself once space is freed. A driver that
// reports no health is always healthy.
func (db *DB) Health() error {
	h, ok := db.conn.(driver.HealthReporter)
	if !ok {
		return nil
	}
	return mapError(h.Health(), false)
}

// Check reads every stored block, verifying its checksum, and every
// entity, and reports each damaged file with the tables it holds. It
// changes nothing and the store stays usable meanwhile; damage found
// also sets Health. Errors: ErrClosed, ctx's error, NotImplemented for a
// driver that cannot check; damage is in the report, not an error.
func (db *DB) Check(ctx context.Context) (*CheckReport, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	c, ok := db.conn.(driver.Checker)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "the driver cannot check its data")
	}
	rep, err := c.Check(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &rep, nil
}

// CheckDir checks the closed store in directory dir without writing to
// it, as Check does, even when the damage keeps Open from opening it (it
// then verifies each file alone and cannot tell which tables a file
// holds). Errors: InvalidInput for an option outside its bounds (see
// Options), ErrNotStore, and I/O and lock errors (a store open elsewhere
// is locked).
func CheckDir(ctx context.Context, dir string, opts *Options) (*CheckReport, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	rep, err := engine.CheckDir(ctx, dir, o.engineOptions())
	if err != nil {
		return nil, mapError(err, false)
	}
	return &rep, nil
}

// maxAccessPolicies is the most stored access policies a table holds, as
// in Azure.
const maxAccessPolicies = 5

// accessPolicies is rootapi.API's AccessPolicies.
func (t *Table) accessPolicies(ctx context.Context) ([]driver.AccessPolicy, error) {
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
	return ps, nil
}

// setAccessPolicies is rootapi.API's SetAccessPolicies.
func (t *Table) setAccessPolicies(ctx context.Context, policies []driver.AccessPolicy) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	if len(policies) > maxAccessPolicies {
		return newError(edm.CodeInvalidInput, "a table holds at most %d access policies, got %d", maxAccessPolicies, len(policies))
	}
	seen := make(map[string]bool, len(policies))
	ps := make([]driver.AccessPolicy, len(policies))
	for i, p := range policies {
		switch {
		case p.ID == "":
			return newError(edm.CodeInvalidInput, "access policy %d has no ID", i)
		case utf8.RuneCountInString(p.ID) > 64:
			return newError(edm.CodeInvalidInput, "access policy ID %s is longer than 64 characters", entityenc.QuoteShort(p.ID))
		case seen[p.ID]:
			return newError(edm.CodeInvalidInput, "access policy ID %s appears twice", entityenc.QuoteShort(p.ID))
		case !validPolicyPermission(p.Permission):
			return newError(edm.CodeInvalidInput, "access policy %s has permission %s; use letters of \"raud\" in that order", entityenc.QuoteShort(p.ID), entityenc.QuoteShort(p.Permission))
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
		return nil, newError(edm.CodeNotImplemented, "the store's driver keeps no access policies")
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

// EngineMetrics returns the engine's current figures (see
// driver.Metrics; Health gives the store's fault). It reads no
// entities; on the embedded engine it costs about as much as listing the
// store's data files. It may be called concurrently with anything.
// Errors: NotImplemented for a driver that keeps no such figures (a
// remote store), ErrClosed, ctx's error.
func (db *DB) EngineMetrics(ctx context.Context) (*EngineMetrics, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	mr, ok := db.conn.(driver.MetricsReader)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store's driver keeps no engine metrics")
	}
	m, err := mr.Metrics(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &m, nil
}

// maxServicePropertiesSize bounds the service properties document.
const maxServicePropertiesSize = 64 << 10

// serviceProperties is rootapi.API's ServiceProperties.
func (db *DB) serviceProperties(ctx context.Context) ([]byte, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	ps, ok := db.conn.(driver.ServicePropertiesStore)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store's driver cannot keep service properties")
	}
	doc, err := ps.ServiceProperties(ctx)
	return doc, mapError(err, false)
}

// setServiceProperties is rootapi.API's SetServiceProperties.
func (db *DB) setServiceProperties(ctx context.Context, doc []byte) error {
	if err := db.checkContext(ctx); err != nil {
		return err
	}
	if len(doc) > maxServicePropertiesSize {
		return newError(edm.CodeInvalidInput, "the service properties document is larger than 64 KiB")
	}
	ps, ok := db.conn.(driver.ServicePropertiesStore)
	if !ok {
		return newError(edm.CodeNotImplemented, "this store's driver cannot keep service properties")
	}
	return mapError(ps.SetServiceProperties(ctx, doc), false)
}
