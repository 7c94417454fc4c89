package main

import (
	"context"
	"errors"

	"github.com/tablestore/tablestore"
)

// committer writes records to a table in entity group transactions:
// consecutive records of one PartitionKey, up to 100 actions and 4 MiB
// per transaction, in input order. A record the store rejects (a limit,
// EntityAlreadyExists with insert) is handed to reject after every record
// before it is committed; nothing of it or after it is committed first.
type committer struct {
	// ctx is used for the commits; it should not be cancelled midway, so
	// that every commit's outcome is known.
	ctx    context.Context
	table  *tablestore.Table
	action tablestore.ActionType
	// committed is called after each commit with its records.
	committed func(recs []*record) error
	// reject is called for each rejected record in order, with the reason;
	// it returns nil to go on, or the error that stops the run.
	reject func(rec *record, err error) error

	group   []*record
	actions []tablestore.TransactionAction
}

// add queues rec, committing the queued group first when rec cannot join
// it. A bad record commits the queued group, then goes to reject.
func (c *committer) add(rec *record) error {
	if rec.err != nil {
		if err := c.flush(); err != nil {
			return err
		}
		return c.reject(rec, rec.err)
	}
	if len(c.group) > 0 && (len(c.group) == tablestore.MaxTransactionActions ||
		c.group[0].entity.PartitionKey != rec.entity.PartitionKey) {
		if err := c.flush(); err != nil {
			return err
		}
	}
	c.group = append(c.group, rec)
	return nil
}

// flush commits the queued group.
func (c *committer) flush() error {
	g := c.group
	c.group = c.group[:0]
	return c.commit(g)
}

// commit commits g, splitting it where the store says it must: at a
// repeated RowKey, at the action that crosses 4 MiB, and around a record
// the store rejects.
func (c *committer) commit(g []*record) error {
	for len(g) > 0 {
		c.actions = c.actions[:0]
		for _, r := range g {
			c.actions = append(c.actions, tablestore.TransactionAction{Type: c.action, Entity: r.entity})
		}
		err := c.table.SubmitTransaction(c.ctx, c.actions)
		if err == nil {
			return c.committed(g)
		}
		var be *tablestore.BatchError
		if !errors.As(err, &be) || be.Index < 0 || be.Index >= len(g) {
			return err
		}
		i := be.Index
		switch be.Err.Code {
		case tablestore.CodeInvalidDuplicateRow, tablestore.CodeRequestBodyTooLarge:
			if i == 0 {
				// One entity alone cannot cross either limit; be safe.
				return err
			}
			// Commit the records before the split, then go on from it.
			if err := c.commit(g[:i]); err != nil {
				return err
			}
			g = g[i:]
		case tablestore.CodeTableNotFound, tablestore.CodeCommandsInBatchActOnDifferentPartitions:
			return err
		default:
			if !recordCode(be.Err.Code) {
				return err
			}
			if err := c.commit(g[:i]); err != nil {
				return err
			}
			if err := c.reject(g[i], be.Err); err != nil {
				return err
			}
			g = g[i+1:]
		}
	}
	return nil
}

// recordCode reports whether a transaction failing with code at an
// action is that action's record's fault, not the store's or the run's.
func recordCode(code tablestore.Code) bool {
	switch code {
	case tablestore.CodeEntityAlreadyExists, tablestore.CodePropertiesNeedValue,
		tablestore.CodeOutOfRangeInput, tablestore.CodeKeyValueTooLarge,
		tablestore.CodePropertyNameInvalid, tablestore.CodePropertyNameTooLong,
		tablestore.CodeInvalidValueType, tablestore.CodePropertyValueTooLarge,
		tablestore.CodeTooManyProperties, tablestore.CodeEntityTooLarge,
		tablestore.CodeInvalidInput, tablestore.CodeDuplicatePropertiesSpecified,
		tablestore.CodeUpdateConditionNotSatisfied, tablestore.CodeResourceNotFound:
		return true
	}
	return false
}
