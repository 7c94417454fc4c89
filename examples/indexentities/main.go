// Command indexentities shows the index entities pattern (the guide's
// option 2): beside the employee entities of a department, index entities
// keyed by last name hold the list of employee ids with that name. Each
// change to an employee and its index entity is one transaction guarded by
// the index entity's ETag; a writer that loses a race reads again and
// retries.
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const dept = "Sales"

// indexKey is the RowKey of the index entity for a last name; employee
// RowKeys are numeric ids, so the prefix keeps the two kinds apart.
func indexKey(last string) string { return "name_" + last }

// addEmployee inserts an employee and adds its id to the index entity of
// its last name, retrying when another writer changed the index entity
// first. beforeCommit, if not nil, runs between the read and the commit.
// It returns how many attempts it took.
func addEmployee(ctx context.Context, t *tablestore.Table, id, first, last string, beforeCommit func()) (int, error) {
	for attempt := 1; ; attempt++ {
		idx, err := t.Get(ctx, dept, indexKey(last), nil)
		indexAction := tablestore.TransactionAction{Type: tablestore.ActionInsert}
		var ids []string
		switch {
		case err == nil:
			list, _ := idx.Properties["EmployeeIDs"].(string)
			ids = strings.Fields(list)
			indexAction = tablestore.TransactionAction{Type: tablestore.ActionUpdateReplace, IfMatch: idx.ETag}
		case !errors.Is(err, tablestore.ErrResourceNotFound):
			return attempt, err
		}
		indexAction.Entity = &tablestore.Entity{PartitionKey: dept, RowKey: indexKey(last),
			Properties: map[string]any{"EmployeeIDs": strings.Join(append(ids, id), " ")}}
		if beforeCommit != nil {
			beforeCommit()
			beforeCommit = nil
		}
		err = t.SubmitTransaction(ctx, []tablestore.TransactionAction{
			{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: dept, RowKey: id,
				Properties: map[string]any{"FirstName": first, "LastName": last}}},
			indexAction,
		})
		// Someone else updated (or created) the index entity since we read it.
		if errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) || isIndexInsertRace(err) {
			continue
		}
		return attempt, err
	}
}

// isIndexInsertRace reports whether the index entity's insert (action 1)
// failed because another writer created it first.
func isIndexInsertRace(err error) bool {
	var be *tablestore.BatchError
	return errors.As(err, &be) && be.Index == 1 && errors.Is(err, tablestore.ErrEntityAlreadyExists)
}

// findByLastName reads the index entity, then each employee it lists.
func findByLastName(ctx context.Context, t *tablestore.Table, last string) []*tablestore.Entity {
	q := tablestore.Query{Filter: fmt.Sprintf("PartitionKey eq '%s' and RowKey eq '%s'", dept, indexKey(last))}
	idx := demo.All(ctx, t, q, demo.Point)
	if len(idx) == 0 {
		return nil
	}
	list, _ := idx[0].Properties["EmployeeIDs"].(string)
	var out []*tablestore.Entity
	for _, id := range strings.Fields(list) {
		out = append(out, demo.Get(ctx, t, dept, id))
	}
	return out
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Employees")

	demo.Step("add employees; each add maintains the index entity of the last name")
	for _, e := range [][3]string{{"000100", "Ana", "Alves"}, {"000152", "Don", "Jones"}, {"000223", "Jo", "Jones"}} {
		n, err := addEmployee(ctx, t, e[0], e[1], e[2], nil)
		demo.NoErr(err, "add "+e[0])
		demo.Say("added %s %s %s in %d attempt(s)", e[0], e[1], e[2], n)
	}

	demo.Step("find every Jones: one point query for the index, then one per employee")
	jones := findByLastName(ctx, t, "Jones")
	demo.Check(slices.Equal(demo.RowKeys(jones), []string{"000152", "000223"}), "Jones are %v", demo.RowKeys(jones))
	for _, e := range jones {
		demo.Say("%s %v %v", e.RowKey, e.Properties["FirstName"], e.Properties["LastName"])
	}

	demo.Step("a writer that loses a race on the index entity retries")
	n, err := addEmployee(ctx, t, "000300", "Liz", "Jones", func() {
		_, err := addEmployee(ctx, t, "000301", "Max", "Jones", nil)
		demo.NoErr(err, "the competing add of 000301")
		demo.Say("meanwhile another writer added 000301 Max Jones")
	})
	demo.NoErr(err, "add 000300")
	demo.Say("000300 went in after %d attempts", n)
	demo.Check(n == 2, "the racing add took %d attempts, want 2", n)

	demo.Step("eight concurrent writers add Smiths; no id is lost")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = addEmployee(ctx, t, fmt.Sprintf("0004%02d", i), "Pat", "Smith", nil)
		})
	}
	wg.Wait()
	demo.NoErr(errors.Join(errs...), "concurrent adds")
	smiths := findByLastName(ctx, t, "Smith")
	demo.Say("index for Smith lists %d employees", len(smiths))
	demo.Check(len(smiths) == 8, "the Smith index lists %d employees, want 8", len(smiths))

	all := findByLastName(ctx, t, "Jones")
	demo.Check(len(all) == 4, "the Jones index lists %v, want 4 ids", demo.RowKeys(all))
	demo.Check(len(findByLastName(ctx, t, "Nobody")) == 0, "an unknown name matched employees")

	native(ctx, db)
	demo.Done()
}
