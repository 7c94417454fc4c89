package compat

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// absent is the model's value of a key with no entity.
const absent = -1

// possible is the set of values a key may hold: one once a write is
// acknowledged (or a read has settled it), more after an ambiguous one.
type possible map[int]bool

func one(v int) possible { return possible{v: true} }

func (p possible) String() string {
	vs := slices.Sorted(maps.Keys(p))
	return fmt.Sprint(vs)
}

// TestTestkitFaultModel writes through aztables (retries on) while the
// kit answers ServerBusy and OperationTimedOut and drops connections
// before and after the write commits, each at a seeded probability. A
// model tracks what each acknowledged write implies; a write that fails
// after its retries, or whose retry meets the effect of an earlier
// attempt, may or may not have applied, and a read settles it (the value
// read must be one the model allows). At the end, with the faults gone,
// the table holds exactly the entities the model predicts.
// TABLESTORE_MODEL_OPS sets the number of operations (default 300),
// TABLESTORE_MODEL_SEED the seed.
func TestTestkitFaultModel(t *testing.T) {
	ops, seed := 300, uint64(time.Now().UnixNano())
	if s := os.Getenv("TABLESTORE_MODEL_OPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("TABLESTORE_MODEL_OPS=%q", s)
		}
		ops = n
	}
	if s := os.Getenv("TABLESTORE_MODEL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TABLESTORE_MODEL_SEED=%q", s)
		}
		seed = n
	}
	t.Logf("TABLESTORE_MODEL_SEED=%d TABLESTORE_MODEL_OPS=%d", seed, ops)

	srv := tablestoretest.NewServer(t)
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Transport: srv.InProcessClient(),
			Retry:     policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("model")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	faults := []tablestoretest.Fault{
		{Code: "ServerBusy", RetryAfter: new(time.Millisecond)},
		{Code: "OperationTimedOut"},
		{Drop: tablestoretest.DropBefore},
		{Drop: tablestoretest.DropAfter},
	}
	var removes []func()
	for i, f := range faults {
		f.Table, f.Probability, f.Seed = "model", 0.08, seed+uint64(i)
		removes = append(removes, srv.InjectFault(f))
	}

	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	model := map[string]possible{}
	key := func(pk, rk string) string { return pk + "/" + rk }
	stateOf := func(k string) possible {
		if p, ok := model[k]; ok {
			return p
		}
		return one(absent)
	}
	read := func(pk, rk string) (int, error) {
		resp, err := c.GetEntity(ctx(t), pk, rk, nil)
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.ErrorCode == "ResourceNotFound" {
			return absent, nil
		}
		if err != nil {
			return 0, err
		}
		var e aztables.EDMEntity
		if err := e.UnmarshalJSON(resp.Value); err != nil {
			return 0, err
		}
		v, ok := e.Properties["V"].(int32)
		if !ok {
			return 0, fmt.Errorf("entity %s/%s without V: %s", pk, rk, resp.Value)
		}
		return int(v), nil
	}
	ambiguous, settled := 0, 0
	for i := 0; i < ops; i++ {
		pk, rk := "p"+strconv.Itoa(rng.IntN(2)), "r"+strconv.Itoa(rng.IntN(10))
		k := key(pk, rk)
		old := stateOf(k)
		next := possible{}
		body := mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "V": i})
		var err error
		var code string
		switch op := rng.IntN(3); op {
		case 0:
			_, err = c.UpsertEntity(ctx(t), body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
			if err == nil {
				next = one(i)
			} else {
				maps.Copy(next, old)
				next[i] = true
			}
		case 1:
			_, err = c.DeleteEntity(ctx(t), pk, rk, nil)
			if err == nil || errorCode(err) == "ResourceNotFound" {
				next, err = one(absent), nil // absent now, whichever attempt deleted it
			} else {
				maps.Copy(next, old)
				next[absent] = true
			}
		case 2:
			_, err = c.AddEntity(ctx(t), body, nil)
			code = errorCode(err)
			switch {
			case err == nil:
				next = one(i)
			default: // an earlier attempt may have inserted it
				maps.Copy(next, old)
				if old[absent] {
					next[i] = true
				}
				if code == "EntityAlreadyExists" {
					delete(next, absent)
					err = nil
				}
			}
		}
		if err != nil {
			var re *azcore.ResponseError
			if errors.As(err, &re) && !slices.Contains([]string{"ServerBusy", "OperationTimedOut"}, re.ErrorCode) {
				t.Fatalf("op %d on %s: a fault the test did not inject: %v", i, k, err)
			}
		}
		if len(next) > 1 {
			ambiguous++
			if v, rerr := read(pk, rk); rerr == nil {
				if !next[v] {
					t.Fatalf("op %d: %s holds %d, the model allows %v", i, k, v, next)
				}
				next = one(v)
				settled++
			}
		}
		model[k] = next
	}
	for _, remove := range removes {
		remove()
	}
	got := map[string]int{}
	pager := c.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e aztables.EDMEntity
			if err := e.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			got[key(e.PartitionKey, e.RowKey)] = int(e.Properties["V"].(int32))
		}
	}
	for k, p := range model {
		v, ok := got[k]
		if !ok {
			v = absent
		}
		if !p[v] {
			t.Errorf("%s holds %d, the model predicts %v", k, v, p)
		}
	}
	for k, v := range got {
		if _, ok := model[k]; !ok {
			t.Errorf("%s holds %d, never written", k, v)
		}
	}
	var hit int
	for _, r := range srv.Requests() {
		if r.Dropped || r.Code == "ServerBusy" || r.Code == "OperationTimedOut" {
			hit++
		}
	}
	t.Logf("%d operations, %d faults hit, %d ambiguous outcomes (%d settled by a read), %d entities", ops, hit, ambiguous, settled, len(got))
	if hit == 0 {
		t.Fatal("no fault hit: the test tested nothing")
	}
}

// errorCode is the Azure error code of err; "" for none.
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}
