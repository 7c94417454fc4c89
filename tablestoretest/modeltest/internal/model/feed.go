package model

import (
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Change is one change the model's feed recorded (see Table.Changes):
// the operation, the keys (for a range deletion, the partition and the
// range [RK, ToRK)), the model ETag of a write, the entity the write left
// when the feed records images, and the commit: changes of one
// transaction share Commit, Index is a change's place in it and Count
// its number of changes.
type Change struct {
	Op           ts.ChangeOp
	PK, RK, ToRK string
	ETag         ts.ETag
	Entity       *ts.Entity
	Commit       int
	Index, Count int
}

// feed is a table's change feed: its image mode and every change
// recorded since it was turned on.
type feed struct {
	images  ts.ImageMode
	changes []Change
}

// put stores s under k with a change of its own commit.
func (m *Model) put(t *table, k Key, s *ts.Entity, op ts.ChangeOp) {
	m.commit++
	m.putIn(t, k, s, op)
}

// putIn stores s under k with a change in the current commit.
func (m *Model) putIn(t *table, k Key, s *ts.Entity, op ts.ChangeOp) {
	t.rows[k] = s
	t.written[k] = m.elapsed
	c := Change{Op: op, PK: k.PK, RK: k.RK, ETag: s.ETag}
	if t.feed != nil && t.feed.images == ts.ImagesNew {
		c.Entity = clone(s)
	}
	t.record(m.commit, c)
}

// remove deletes k with a change of its own commit.
func (m *Model) remove(t *table, k Key) {
	m.commit++
	m.removeIn(t, k)
}

// removeIn deletes k with a change in the current commit.
func (m *Model) removeIn(t *table, k Key) {
	delete(t.rows, k)
	delete(t.written, k)
	t.record(m.commit, Change{Op: ts.ChangeDelete, PK: k.PK, RK: k.RK})
}

// record appends c to t's feed, if on, as the last change so far of
// commit.
func (t *table) record(commit int, c Change) {
	if t.feed == nil {
		return
	}
	c.Commit, c.Count = commit, 1
	n := len(t.feed.changes)
	if n > 0 && t.feed.changes[n-1].Commit == commit {
		c.Index = t.feed.changes[n-1].Index + 1
		for i := n - 1; i >= 0 && t.feed.changes[i].Commit == commit; i-- {
			t.feed.changes[i].Count = c.Index + 1
		}
		c.Count = c.Index + 1
	}
	t.feed.changes = append(t.feed.changes, c)
}

// EnableChangeFeed turns a table's feed on, or changes its image mode
// when it is on (the changes recorded stay). Retention is not modelled:
// a workload keeps it longer than the time it moves the clock by.
func (m *Model) EnableChangeFeed(tableName string, images ts.ImageMode) error {
	if images != ts.ImagesKeysOnly && images != ts.ImagesNew {
		return fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	if t.feed == nil {
		t.feed = &feed{}
	}
	t.feed.images = images
	return nil
}

// DisableChangeFeed turns a table's feed off and forgets its changes.
func (m *Model) DisableChangeFeed(tableName string) error {
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	t.feed = nil
	return nil
}

// FeedOn reports whether the table exists with its feed on.
func (m *Model) FeedOn(tableName string) bool {
	t, err := m.table(tableName)
	return err == nil && t.feed != nil
}

// Changes returns a copy of every change the table's feed holds, of
// partition pk only when pk is not "", oldest first. Errors: TableNotFound,
// ResourceNotFound when the feed is off.
func (m *Model) Changes(tableName, pk string) ([]Change, error) {
	t, err := m.table(tableName)
	if err != nil {
		return nil, err
	}
	if t.feed == nil {
		return nil, fail(edm.CodeResourceNotFound)
	}
	var out []Change
	for _, c := range t.feed.changes {
		if pk == "" || c.PK == pk {
			out = append(out, c)
		}
	}
	return out, nil
}
