package tablestoretest

import (
	"context"
	"fmt"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/server"
)

// This file injects faults into an embedded store (NewDB): a driver
// wrapper checks each call against the rules and answers with the
// driver's typed errors, which the library maps to its own (*Error with
// Azure's code).

// fullTable is a driver table with every optional interface the embedded
// engine's tables have, so a wrapped table keeps them all.
type fullTable interface {
	driver.Table
	driver.OptionCommitter
	driver.BulkCommitter
	driver.ChangeFeeder
	driver.ExpiryStats
	driver.Indexer
	driver.IndexSizer
	driver.PolicyTable
	driver.ReverseQuerier
	driver.Segmenter
	driver.TTLTable
	driver.RangeDeleter
}

// faultConn wraps a connection without the engine's optional interfaces:
// only its tables are checked.
type faultConn struct {
	driver.Conn
	faults *faultSet
}

// faultEngine is a connection with the optional interfaces the embedded
// engine has, which fullConn keeps by embedding it.
type faultEngine interface {
	driver.Conn
	driver.Checkpointer
	driver.StatsReader
	driver.HealthReporter
	driver.Checker
	driver.MetricsReader
	driver.ServicePropertiesStore
}

// fullConn is faultConn over an engine, keeping its optional interfaces.
type fullConn struct {
	faultEngine
	faults *faultSet
}

func wrapConn(c driver.Conn, faults *faultSet) driver.Conn {
	if e, ok := c.(faultEngine); ok {
		return &fullConn{faultEngine: e, faults: faults}
	}
	return &faultConn{Conn: c, faults: faults}
}

func (c *fullConn) CreateTable(ctx context.Context, name string) error {
	return hit(ctx, c.faults, server.RequestInfo{Operation: "CreateTable", Table: name}, nil, func() error {
		return c.faultEngine.CreateTable(ctx, name)
	})
}

func (c *fullConn) DeleteTable(ctx context.Context, name string) error {
	return hit(ctx, c.faults, server.RequestInfo{Operation: "DeleteTable", Table: name}, nil, func() error {
		return c.faultEngine.DeleteTable(ctx, name)
	})
}

func (c *fullConn) ListTables(ctx context.Context, req driver.ListTablesRequest) (res driver.ListTablesResult, err error) {
	err = hit(ctx, c.faults, server.RequestInfo{Operation: "QueryTables"}, nil, func() error {
		res, err = c.faultEngine.ListTables(ctx, req)
		return err
	})
	return res, err
}

func (c *fullConn) Table(name string) driver.Table {
	return wrapTable(c.faultEngine.Table(name), name, c.faults)
}

func (c *faultConn) Table(name string) driver.Table {
	return wrapTable(c.Conn.Table(name), name, c.faults)
}

func wrapTable(t driver.Table, name string, faults *faultSet) driver.Table {
	if ft, ok := t.(fullTable); ok {
		return &faultTable{fullTable: ft, name: name, faults: faults}
	}
	return t
}

// faultTable checks a table's reads and writes against the faults.
type faultTable struct {
	fullTable
	name   string
	faults *faultSet
}

func (t *faultTable) Get(ctx context.Context, pk, rk string, sel []string) (row driver.Row, err error) {
	info := server.RequestInfo{Operation: "QueryEntity", Table: t.name, PartitionKey: pk, RowKey: rk}
	err = hit(ctx, t.faults, info, nil, func() error {
		row, err = t.fullTable.Get(ctx, pk, rk, sel)
		return err
	})
	return row, err
}

func (t *faultTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (res driver.PageResult, err error) {
	err = hit(ctx, t.faults, server.RequestInfo{Operation: "QueryEntities", Table: t.name}, nil, func() error {
		res, err = t.fullTable.QueryPage(ctx, q, emit)
		return err
	})
	return res, err
}

func (t *faultTable) Commit(ctx context.Context, actions []driver.Action) (driver.CommitResult, error) {
	return t.CommitWith(ctx, actions, driver.CommitOptions{})
}

func (t *faultTable) CommitWith(ctx context.Context, actions []driver.Action, opts driver.CommitOptions) (res driver.CommitResult, err error) {
	info := server.RequestInfo{Operation: "EntityGroupTransaction", Table: t.name}
	var race func()
	if len(actions) == 1 {
		a := actions[0]
		info = server.RequestInfo{Operation: actionOperation(a), Table: t.name, PartitionKey: a.PartitionKey, RowKey: a.RowKey}
		race = func() { t.competingWrite(ctx, a.PartitionKey, a.RowKey) }
	}
	err = hit(ctx, t.faults, info, race, func() error {
		res, err = t.fullTable.CommitWith(ctx, actions, opts)
		return err
	})
	return res, err
}

// competingWrite rewrites an entity unchanged, with a new ETag.
func (t *faultTable) competingWrite(ctx context.Context, pk, rk string) {
	row, err := t.fullTable.Get(ctx, pk, rk, nil)
	if err != nil {
		return
	}
	props, err := row.Record.Properties()
	if err != nil {
		return
	}
	_, _ = t.fullTable.Commit(ctx, []driver.Action{{Type: driver.ActionUpdateReplace, PartitionKey: pk, RowKey: rk, Properties: props, IfMatch: "*"}})
}

// actionOperation names a single action as Azure names the request.
func actionOperation(a driver.Action) string {
	switch a.Type {
	case driver.ActionInsert:
		return "InsertEntity"
	case driver.ActionUpdateMerge:
		return "MergeEntity"
	case driver.ActionUpdateReplace:
		return "UpdateEntity"
	case driver.ActionUpsertMerge:
		return "InsertOrMergeEntity"
	case driver.ActionUpsertReplace:
		return "InsertOrReplaceEntity"
	case driver.ActionDelete:
		return "DeleteEntity"
	}
	return "Unknown"
}

// hit runs op unless a fault hits the call: the fault's latency first,
// then its error (a *driver.Error with the fault's code), its drop
// (ErrDropped, before op runs or after it succeeded), or its race
// (race, then op).
func hit(ctx context.Context, faults *faultSet, info server.RequestInfo, race func(), op func() error) error {
	f, ok := faults.pick(info)
	if !ok {
		return op()
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	switch code := f.code(); {
	case f.Drop == DropBefore:
		return fmt.Errorf("%s: %w", info.Operation, ErrDropped)
	case f.Drop == DropAfter:
		if err := op(); err != nil {
			return err
		}
		return fmt.Errorf("%s: %w (after the operation committed)", info.Operation, ErrDropped)
	case code == string(edm.CodeUpdateConditionNotSatisfied):
		if race != nil {
			race()
		}
		return op()
	case code != "":
		return &driver.Error{Code: edm.Code(code), Message: faultErrors[code].msg}
	}
	return op()
}

// InjectFault adds a fault rule to the embedded store (see Fault) and
// returns a function that removes it. Operations are named as the REST
// API names them: Table.Get is QueryEntity, a query page QueryEntities,
// Insert InsertEntity, Update UpdateEntity or MergeEntity, Upsert
// InsertOrReplaceEntity or InsertOrMergeEntity, Delete DeleteEntity, a
// transaction EntityGroupTransaction, ListTables QueryTables. A fault's
// error is the library's *tablestore.Error with the fault's code; a drop
// is an error matching ErrDropped (after the write committed, for
// DropAfter). Page faults are for servers only: one here fails the test.
func (d *DB) InjectFault(f Fault) (remove func()) {
	d.t.Helper()
	if f.Page != "" {
		d.t.Fatalf("tablestoretest: InjectFault: Fault.Page: paging faults need a Server")
	}
	_, remove, err := d.faults.add(f)
	if err != nil {
		d.t.Fatalf("tablestoretest: InjectFault: %v", err)
	}
	return remove
}
