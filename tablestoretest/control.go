package tablestoretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// ControlPrefix is the path under which ControlHandler serves.
const ControlPrefix = "/testkit"

// ControlHandler serves the kit's test controls over HTTP, for tests in
// any language (`tablestore serve --testkit` mounts it on the admin
// listener). Bodies are JSON both ways; errors are Azure's JSON error
// body (odata.error with code and message), 400 InvalidInput naming the
// bad field, 404 ResourceNotFound naming what is missing.
//
//   - POST /testkit/reset: a clean slate (Kit.Reset): the store back to
//     its baseline (the --seed fixture, or empty), every fault removed,
//     the clock back to real time, the request log empty. With
//     ?only=state,faults,clock,requests (any of them), only those parts.
//   - PUT /testkit/snapshots/NAME: saves the state as NAME (replacing a
//     snapshot of that name); GET /testkit/snapshots lists the names;
//     POST /testkit/snapshots/NAME/restore restores it;
//     DELETE /testkit/snapshots/NAME forgets it.
//   - POST /testkit/faults: adds a Fault given in its JSON form (durations
//     also as strings such as "50ms"), answering {"id": N}; GET lists the
//     rules in force with their ids; DELETE /testkit/faults removes every rule;
//     DELETE /testkit/faults/N removes one.
//   - GET /testkit/clock, POST /testkit/clock with {"advance": "1h"} or
//     {"set": "RFC 3339 time"}: answers {"now": "RFC 3339 time"}.
//   - GET /testkit/requests: the request log (RequestRecord's fields,
//     durations in nanoseconds); DELETE /testkit/requests empties it.
//
// It checks neither Host nor origin: mount it behind the guards the
// listener needs.
func ControlHandler(k *Kit) http.Handler {
	c := &control{k: k, snaps: map[string]*Snapshot{}}
	mux := http.NewServeMux()
	p := ControlPrefix
	mux.HandleFunc("POST "+p+"/reset", c.reset)
	mux.HandleFunc("GET "+p+"/snapshots", c.listSnapshots)
	mux.HandleFunc("PUT "+p+"/snapshots/{name}", c.saveSnapshot)
	mux.HandleFunc("DELETE "+p+"/snapshots/{name}", c.deleteSnapshot)
	mux.HandleFunc("POST "+p+"/snapshots/{name}/restore", c.restoreSnapshot)
	mux.HandleFunc("POST "+p+"/faults", c.addFault)
	mux.HandleFunc("GET "+p+"/faults", c.listFaults)
	mux.HandleFunc("DELETE "+p+"/faults", c.clearFaults)
	mux.HandleFunc("DELETE "+p+"/faults/{id}", c.deleteFault)
	mux.HandleFunc("GET "+p+"/clock", c.getClock)
	mux.HandleFunc("POST "+p+"/clock", c.setClock)
	mux.HandleFunc("GET "+p+"/requests", c.requests)
	mux.HandleFunc("DELETE "+p+"/requests", c.clearRequests)
	mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		writeControlError(w, http.StatusNotFound, string(edm.CodeResourceNotFound), fmt.Sprintf("no test control %s %s", r.Method, r.URL.Path))
	})
	return mux
}

type control struct {
	k     *Kit
	mu    sync.Mutex
	snaps map[string]*Snapshot
}

// snapshotName is what a snapshot may be called.
var snapshotName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

func writeControlJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeControlError answers Azure's JSON error body.
func writeControlError(w http.ResponseWriter, status int, code, msg string) {
	type message struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type odataError struct {
		Code    string  `json:"code"`
		Message message `json:"message"`
	}
	w.Header().Set("x-ms-error-code", code)
	writeControlJSON(w, status, map[string]odataError{"odata.error": {Code: code, Message: message{"en-US", msg}}})
}

func badInput(w http.ResponseWriter, msg string) {
	writeControlError(w, http.StatusBadRequest, string(edm.CodeInvalidInput), msg)
}

// decodeBody reads a JSON object into v, refusing unknown fields; an
// empty body leaves v as is.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		badInput(w, "body: "+err.Error())
		return false
	}
	if len(b) == 0 {
		return true
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		badInput(w, "body: "+err.Error())
		return false
	}
	return true
}

func (c *control) reset(w http.ResponseWriter, r *http.Request) {
	parts := ResetAll
	if q := r.URL.Query(); q.Has("only") {
		var err error
		if parts, err = parseResetParts(q.Get("only")); err != nil {
			badInput(w, err.Error())
			return
		}
	}
	if err := c.k.Reset(parts); err != nil {
		writeControlError(w, http.StatusInternalServerError, string(edm.CodeInternalError), err.Error())
		return
	}
	writeControlJSON(w, http.StatusOK, map[string]any{})
}

func (c *control) listSnapshots(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	names := make([]string, 0, len(c.snaps))
	for n := range c.snaps {
		names = append(names, n)
	}
	c.mu.Unlock()
	slices.Sort(names)
	writeControlJSON(w, http.StatusOK, map[string]any{"snapshots": names})
}

func (c *control) saveSnapshot(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !snapshotName.MatchString(name) {
		badInput(w, fmt.Sprintf("name: snapshot name %q is not 1 to 100 letters, digits, '.', '_' or '-'", name))
		return
	}
	snap, err := c.k.Snapshot()
	if err != nil {
		writeControlError(w, http.StatusInternalServerError, string(edm.CodeInternalError), err.Error())
		return
	}
	c.mu.Lock()
	c.snaps[name] = snap
	c.mu.Unlock()
	writeControlJSON(w, http.StatusCreated, map[string]any{"name": name, "bytes": snap.Size()})
}

func (c *control) snapshot(w http.ResponseWriter, name string) *Snapshot {
	c.mu.Lock()
	snap := c.snaps[name]
	c.mu.Unlock()
	if snap == nil {
		writeControlError(w, http.StatusNotFound, string(edm.CodeResourceNotFound), fmt.Sprintf("name: no snapshot named %q", name))
	}
	return snap
}

func (c *control) restoreSnapshot(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	snap := c.snapshot(w, name)
	if snap == nil {
		return
	}
	if err := c.k.Restore(snap); err != nil {
		writeControlError(w, http.StatusInternalServerError, string(edm.CodeInternalError), err.Error())
		return
	}
	writeControlJSON(w, http.StatusOK, map[string]any{"name": name})
}

func (c *control) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if c.snapshot(w, name) == nil {
		return
	}
	c.mu.Lock()
	delete(c.snaps, name)
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// jsonDuration reads a duration as nanoseconds or as a Go duration
// string ("1.5s").
type jsonDuration time.Duration

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = jsonDuration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("want nanoseconds or a duration such as \"50ms\"")
	}
	*d = jsonDuration(n)
	return nil
}

func (c *control) addFault(w http.ResponseWriter, r *http.Request) {
	// Fault's JSON form, its durations also as strings.
	var in struct {
		Fault
		RetryAfter *jsonDuration `json:"retry_after,omitempty"`
		Latency    *jsonDuration `json:"latency,omitempty"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	f := in.Fault
	if in.RetryAfter != nil {
		d := time.Duration(*in.RetryAfter)
		f.RetryAfter = &d
	}
	if in.Latency != nil {
		f.Latency = time.Duration(*in.Latency)
	}
	id, _, err := c.k.faults.add(f)
	if err != nil {
		badInput(w, err.Error())
		return
	}
	writeControlJSON(w, http.StatusCreated, map[string]any{"id": id})
}

func (c *control) listFaults(w http.ResponseWriter, r *http.Request) {
	writeControlJSON(w, http.StatusOK, map[string]any{"faults": c.k.faults.list()})
}

func (c *control) clearFaults(w http.ResponseWriter, r *http.Request) {
	c.k.faults.clear()
	w.WriteHeader(http.StatusNoContent)
}

func (c *control) deleteFault(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := strconv.Atoi(raw)
	if err != nil {
		badInput(w, fmt.Sprintf("id: %q is not a fault id", raw))
		return
	}
	if !c.k.faults.remove(id) {
		writeControlError(w, http.StatusNotFound, string(edm.CodeResourceNotFound), fmt.Sprintf("id: no fault %d", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (c *control) writeClock(w http.ResponseWriter) {
	writeControlJSON(w, http.StatusOK, map[string]any{"now": c.k.Clock().Now().UTC().Format(time.RFC3339Nano)})
}

func (c *control) getClock(w http.ResponseWriter, r *http.Request) { c.writeClock(w) }

func (c *control) setClock(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Advance *string `json:"advance"`
		Set     *string `json:"set"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	switch {
	case (in.Advance == nil) == (in.Set == nil):
		badInput(w, `advance: give one of "advance" (a duration such as "1h") or "set" (an RFC 3339 time)`)
		return
	case in.Advance != nil:
		d, err := time.ParseDuration(*in.Advance)
		if err != nil {
			badInput(w, fmt.Sprintf("advance: %q is not a duration such as \"90s\" or \"1h\"", *in.Advance))
			return
		}
		c.k.Clock().Advance(d)
	default:
		t, err := time.Parse(time.RFC3339Nano, *in.Set)
		if err != nil {
			badInput(w, fmt.Sprintf("set: %q is not an RFC 3339 time", *in.Set))
			return
		}
		c.k.Clock().Set(t)
	}
	c.writeClock(w)
}

// controlOp is a RequestInfo in JSON.
type controlOp struct {
	Operation    string `json:"operation"`
	Table        string `json:"table,omitempty"`
	PartitionKey string `json:"partition_key,omitempty"`
	RowKey       string `json:"row_key,omitempty"`
}

// controlRecord is a RequestRecord in JSON.
type controlRecord struct {
	Operation     string `json:"operation"`
	Table         string `json:"table,omitempty"`
	PartitionKey  string `json:"partition_key,omitempty"`
	RowKey        string `json:"row_key,omitempty"`
	Method        string `json:"method"`
	Status        int    `json:"status"`
	Code          string `json:"code,omitempty"`
	Dropped       bool   `json:"dropped,omitempty"`
	Duration      int64  `json:"duration"`
	RequestBytes  int64  `json:"request_bytes"`
	ResponseBytes int64  `json:"response_bytes"`
	// RequestCharge is the Cosmos flavor's request units.
	RequestCharge float64 `json:"request_charge,omitempty"`
	// Batch is a $batch's sub-operations.
	Batch []controlOp `json:"batch,omitempty"`
}

func (c *control) requests(w http.ResponseWriter, r *http.Request) {
	recs := c.k.Requests()
	out := make([]controlRecord, len(recs))
	for i, rec := range recs {
		out[i] = controlRecord{rec.Operation, rec.Table, rec.PartitionKey, rec.RowKey, rec.Method, rec.Status,
			rec.Code, rec.Dropped, int64(rec.Duration), rec.RequestBytes, rec.ResponseBytes, rec.RequestCharge, nil}
		for _, op := range rec.Batch {
			out[i].Batch = append(out[i].Batch, controlOp{op.Operation, op.Table, op.PartitionKey, op.RowKey})
		}
	}
	writeControlJSON(w, http.StatusOK, map[string]any{"requests": out, "dropped": c.k.RequestsDropped()})
}

func (c *control) clearRequests(w http.ResponseWriter, r *http.Request) {
	c.k.ClearRequests()
	w.WriteHeader(http.StatusNoContent)
}
