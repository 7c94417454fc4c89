package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/driver"
)

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
		return nil, newError(CodeNotImplemented, "this store's driver keeps no engine metrics")
	}
	m, err := mr.Metrics(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &m, nil
}

// MaxServicePropertiesSize bounds the document SetServiceProperties keeps.
const MaxServicePropertiesSize = 64 << 10

// ServiceProperties returns the service properties document last stored
// by SetServiceProperties, or nil when there is none. The library does
// not interpret it: the REST server keeps Azure's Table Service
// Properties XML (CORS rules, logging and metrics settings) here, so they
// survive restarts and travel with backups. Errors: NotImplemented for a
// driver that cannot keep one, ErrClosed, ctx's error.
func (db *DB) ServiceProperties(ctx context.Context) ([]byte, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	ps, ok := db.conn.(driver.ServicePropertiesStore)
	if !ok {
		return nil, newError(CodeNotImplemented, "this store's driver cannot keep service properties")
	}
	doc, err := ps.ServiceProperties(ctx)
	return doc, mapError(err, false)
}

// SetServiceProperties durably replaces the stored service properties
// document (nil removes it). The document is opaque to the library.
// Errors: InvalidInput for a document over MaxServicePropertiesSize,
// NotImplemented as for ServiceProperties, ErrClosed, ctx's error, and
// the store's faults (see Health).
func (db *DB) SetServiceProperties(ctx context.Context, doc []byte) error {
	if err := db.checkContext(ctx); err != nil {
		return err
	}
	if len(doc) > MaxServicePropertiesSize {
		return newError(CodeInvalidInput, "the service properties document is larger than 64 KiB")
	}
	ps, ok := db.conn.(driver.ServicePropertiesStore)
	if !ok {
		return newError(CodeNotImplemented, "this store's driver cannot keep service properties")
	}
	return mapError(ps.SetServiceProperties(ctx, doc), false)
}
