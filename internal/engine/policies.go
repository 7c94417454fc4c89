package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

// A table's stored access policies live in the catalog's keyspace, keyed
// by table ID, so a table created again under the same name starts with
// none:
//
//	meta | 'P' | table ID (8 bytes BE)  ->  JSON array of policies
const catalogPolicyTag = 'P'

func policyKey(id uint64) []byte {
	k := keys.TablePrefix(nil, keys.MetaTableID)
	k = append(k, catalogPolicyTag)
	return binary.BigEndian.AppendUint64(k, id)
}

var _ driver.PolicyTable = (*table)(nil)

// AccessPolicies implements driver.PolicyTable.
func (t *table) AccessPolicies(ctx context.Context) (_ []driver.AccessPolicy, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	op := "read of the access policies of table " + t.name
	defer t.db.recoverStop(op, &err)
	info, err := t.resolve()
	if err != nil {
		return nil, err
	}
	v, closer, err := t.db.pdb.Get(policyKey(info.id))
	if err == pebble.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, t.db.storageErr(op, err)
	}
	defer closer.Close()
	var out []driver.AccessPolicy
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, &driver.CorruptError{Op: op, Err: err}
	}
	return out, nil
}

// SetAccessPolicies implements driver.PolicyTable with one synced write,
// under the catalog lock so the table cannot be deleted meanwhile.
func (t *table) SetAccessPolicies(ctx context.Context, policies []driver.AccessPolicy) (err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	op := "write of the access policies of table " + t.name
	defer t.db.recoverStop(op, &err)
	t.db.catMu.RLock()
	defer t.db.catMu.RUnlock()
	info, err := t.resolveLocked()
	if err != nil {
		return err
	}
	if len(policies) == 0 {
		return t.db.storageErr(op, t.db.deleteKey(policyKey(info.id), pebble.Sync))
	}
	v, err := json.Marshal(policies)
	if err != nil {
		return err
	}
	return t.db.storageErr(op, t.db.setKey(policyKey(info.id), v, pebble.Sync))
}
