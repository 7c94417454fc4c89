package azure

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// conn is the remote driver.Conn: one aztables service client. It keeps
// no state of its own beyond whether it is closed.
type conn struct {
	svc        *aztables.ServiceClient
	cosmos     bool
	createWait time.Duration
	// ext reaches tablestore's server's extension endpoints (ext.go).
	ext *extClient
	// done is closed when Close starts: long-polls end then rather than
	// hold Close up (ext_table.go).
	done      chan struct{}
	closeOnce sync.Once

	// mu is held shared by every operation in flight and exclusively by
	// Close, so Close waits for them.
	mu     sync.RWMutex
	closed bool
}

// begin admits one operation; end must follow when it returns nil.
func (c *conn) begin(ctx context.Context) error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return driver.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		c.mu.RUnlock()
		return err
	}
	return nil
}

func (c *conn) end() { c.mu.RUnlock() }

// createRetryInterval is the pause between CreateTable tries while the
// service answers TableBeingDeleted.
const createRetryInterval = 2 * time.Second

func (c *conn) CreateTable(ctx context.Context, name string) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	defer c.end()
	deadline := time.Now().Add(c.createWait)
	for {
		_, err := c.svc.CreateTable(ctx, name, nil)
		err = mapError(err, opCreateTable)
		var de *driver.Error
		if !errors.As(err, &de) || de.Code != edm.CodeTableBeingDeleted || time.Now().Add(createRetryInterval).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(createRetryInterval):
		}
	}
}

func (c *conn) DeleteTable(ctx context.Context, name string) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	defer c.end()
	_, err := c.svc.DeleteTable(ctx, name, nil)
	return mapError(err, opDeleteTable)
}

// ListTables reads the whole table list and pages it here: Azure compares
// table names ordinally and case-sensitively in $filter and does not
// promise an order, while the driver's listing is case-insensitive and
// sorted. An account holds few tables, so this costs one request per
// thousand tables.
func (c *conn) ListTables(ctx context.Context, req driver.ListTablesRequest) (driver.ListTablesResult, error) {
	if err := c.begin(ctx); err != nil {
		return driver.ListTablesResult{}, err
	}
	defer c.end()
	var names []string
	pager := c.svc.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return driver.ListTablesResult{}, mapError(err, opEntity)
		}
		for _, t := range page.Tables {
			if t != nil && t.Name != nil && strings.HasPrefix(strings.ToLower(*t.Name), req.Prefix) {
				names = append(names, *t.Name)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := strings.ToLower(names[i]), strings.ToLower(names[j])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	after := strings.ToLower(req.After)
	start := sort.Search(len(names), func(i int) bool { return strings.ToLower(names[i]) >= after })
	names = names[start:]
	var res driver.ListTablesResult
	if len(names) > req.Top {
		res.Next = names[req.Top]
		names = names[:req.Top]
	}
	res.Names = names
	return res, nil
}

func (c *conn) Table(name string) driver.Table {
	return &table{c: c, name: name, client: c.svc.NewClient(name)}
}

func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.done) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return driver.ErrClosed
	}
	c.closed = true
	return nil
}
