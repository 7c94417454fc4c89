package tablestoretest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/suggest"
	"github.com/tablestore/tablestore/server"
)

// Fault is a rule that makes some requests fail the way Azure's do. A
// request is matched by Operation, Table and Partition (each empty
// matches all); of the matching requests, Times, Every and Probability
// choose which the fault hits; the fault then adds Latency and does one
// of: answer Status/Code, drop the connection (Drop), or bend a query's
// paging (Page). Status, Code, Drop and Page are exclusive; Latency may
// go with any of them or alone.
//
// Rules apply in the order injected; the first that hits a request acts
// on it. The JSON form (the field tags) is the one a rule is given in
// over HTTP.
type Fault struct {
	// Operation is the Azure operation name as Storage Analytics logs it
	// (server.Operations lists them: InsertEntity, UpdateEntity,
	// MergeEntity, DeleteEntity, InsertOrReplaceEntity,
	// InsertOrMergeEntity, QueryEntity, QueryEntities, QueryTables,
	// CreateTable, DeleteTable, EntityGroupTransaction,
	// GetTableServiceProperties, ...). Empty: every operation.
	Operation string `json:"operation,omitempty"`
	// Table matches the table the request's URL names, case-insensitively
	// (CreateTable names its table in the body: Table does not match it).
	// Empty: every table.
	Table string `json:"table,omitempty"`
	// Partition matches the PartitionKey of the single-entity operations
	// that address an entity in the URL (QueryEntity, UpdateEntity,
	// MergeEntity, DeleteEntity, InsertOrReplaceEntity,
	// InsertOrMergeEntity) and the partition of a $batch
	// (EntityGroupTransaction). Empty: every request.
	Partition string `json:"partition,omitempty"`

	// Status and Code are the error answered, with Azure's body, headers
	// and message: 503 ServerBusy, 500 OperationTimedOut, 500
	// InternalError, 429 TooManyRequests (as Cosmos DB's Table API
	// answers), or 412 UpdateConditionNotSatisfied, which is a real race:
	// a competing write changes the entity first, then the request runs
	// against it (for UpdateEntity, MergeEntity and DeleteEntity sent with
	// If-Match). Either may be given alone; both must agree.
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
	// RetryAfter is the wait the error asks for; nil asks for none, as
	// Azure Storage's ServerBusy and OperationTimedOut do (clients back
	// off on their own), except that a 429 always carries one (one
	// second by default). A whole number of seconds (0 included) is sent
	// as Retry-After; any other wait as x-ms-retry-after-ms, Cosmos DB's
	// header, which azcore and azure-core read, so a sub-second wait is
	// not rounded up to a second. A 429 carries x-ms-retry-after-ms
	// always, as Cosmos DB's do. In JSON, nanoseconds or a string such
	// as "20ms".
	RetryAfter *time.Duration `json:"retry_after,omitempty"`

	// Times limits the fault to the first Times requests it would hit.
	// Zero: no limit.
	Times int `json:"times,omitempty"`
	// Every makes the fault hit only every Every-th matching request (the
	// Every-th, the 2×Every-th, ...). Zero or one: every request.
	Every int `json:"every,omitempty"`
	// Probability, when above zero, hits each request that passes Every
	// with this probability (at most 1), drawn from a generator seeded by
	// Seed, so a run repeats exactly.
	Probability float64 `json:"probability,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`

	// Latency delays the request by this long before it runs (or fails);
	// the delay ends early if the client gives up. In JSON, nanoseconds.
	Latency time.Duration `json:"latency,omitempty"`

	// Drop closes the connection without an answer: DropBefore before the
	// request runs (nothing is written), DropAfter once it has run and
	// committed (the ambiguous write a client retries). Over TCP the
	// connection is closed; through InProcessClient, RoundTrip returns an
	// error.
	Drop string `json:"drop,omitempty"`

	// Page bends a QueryEntities page: PageEmpty answers an empty page
	// with a continuation that resumes where the request began,
	// PageShort cuts the page to one entity, PagePartition ends the page
	// at the end of the first partition it holds. Clients that follow
	// continuations see every entity all the same.
	Page string `json:"page,omitempty"`
}

// Values of Fault.Drop.
const (
	DropBefore = "before"
	DropAfter  = "after"
)

// Values of Fault.Page.
const (
	PageEmpty     = "empty"
	PageShort     = "short"
	PagePartition = "partition"
)

// faultError is an error Fault.Status/Code may name.
type faultError struct {
	status int
	msg    string
}

// faultErrors are the errors a fault may answer, by code, with Azure's
// messages.
var faultErrors = map[string]faultError{
	string(edm.CodeServerBusy):                  {http.StatusServiceUnavailable, "The server is busy."},
	string(edm.CodeOperationTimedOut):           {http.StatusInternalServerError, "Operation could not be completed within the specified time."},
	string(edm.CodeInternalError):               {http.StatusInternalServerError, "Server encountered an internal error. Please try again after some time."},
	"TooManyRequests":                           {http.StatusTooManyRequests, "The request rate is too large. Please retry after some time."},
	string(edm.CodeUpdateConditionNotSatisfied): {http.StatusPreconditionFailed, "The update condition specified in the request was not satisfied."},
}

// statusCodes is the code a Status alone stands for.
var statusCodes = map[int]string{
	http.StatusServiceUnavailable:  string(edm.CodeServerBusy),
	http.StatusInternalServerError: string(edm.CodeInternalError),
	http.StatusTooManyRequests:     "TooManyRequests",
	http.StatusPreconditionFailed:  string(edm.CodeUpdateConditionNotSatisfied),
}

// Validate reports the first field of f that is not valid, naming it:
// an unknown Operation, Status, Code, Drop or Page, a Status and Code
// that disagree, a negative count, a Probability outside [0, 1], a
// precondition race on an operation without If-Match, or more than one
// action.
func (f Fault) Validate() error {
	if f.Operation != "" && !slices.Contains(server.Operations, f.Operation) {
		if s := suggest.Nearest(f.Operation, server.Operations); s != "" {
			return fmt.Errorf("Fault.Operation: unknown operation %q (did you mean %q?)", f.Operation, s)
		}
		return fmt.Errorf("Fault.Operation: unknown operation %q (want one of %v)", f.Operation, server.Operations)
	}
	if f.Status != 0 {
		if _, ok := statusCodes[f.Status]; !ok {
			return fmt.Errorf("Fault.Status: %d is not a status a fault answers (503, 500, 429, 412)", f.Status)
		}
	}
	if f.Code != "" {
		e, ok := faultErrors[f.Code]
		if !ok {
			return fmt.Errorf("Fault.Code: unknown code %q (want ServerBusy, OperationTimedOut, InternalError, TooManyRequests or UpdateConditionNotSatisfied)", f.Code)
		}
		if f.Status != 0 && f.Status != e.status {
			return fmt.Errorf("Fault.Status: %d does not go with Code %s (%d)", f.Status, f.Code, e.status)
		}
	}
	if f.code() == string(edm.CodeUpdateConditionNotSatisfied) {
		switch f.Operation {
		case "UpdateEntity", "MergeEntity", "DeleteEntity":
		default:
			return fmt.Errorf("Fault.Operation: a 412 race needs UpdateEntity, MergeEntity or DeleteEntity, not %q", f.Operation)
		}
	}
	switch f.Drop {
	case "", DropBefore, DropAfter:
	default:
		return fmt.Errorf("Fault.Drop: %q is not %q or %q", f.Drop, DropBefore, DropAfter)
	}
	switch f.Page {
	case "":
	case PageEmpty, PageShort, PagePartition:
		if f.Operation != "" && f.Operation != "QueryEntities" {
			return fmt.Errorf("Fault.Page: paging faults apply to QueryEntities, not %s", f.Operation)
		}
	default:
		return fmt.Errorf("Fault.Page: %q is not %q, %q or %q", f.Page, PageEmpty, PageShort, PagePartition)
	}
	actions := 0
	for _, set := range []bool{f.code() != "", f.Drop != "", f.Page != ""} {
		if set {
			actions++
		}
	}
	switch {
	case actions > 1:
		return fmt.Errorf("Fault.Drop: Status/Code, Drop and Page are exclusive")
	case actions == 0 && f.Latency <= 0:
		return fmt.Errorf("Fault.Status: the fault does nothing (no Status, Code, Drop, Page or Latency)")
	case f.Times < 0:
		return fmt.Errorf("Fault.Times: %d is negative", f.Times)
	case f.Every < 0:
		return fmt.Errorf("Fault.Every: %d is negative", f.Every)
	case f.Probability < 0 || f.Probability > 1:
		return fmt.Errorf("Fault.Probability: %v is not within 0 and 1", f.Probability)
	case f.RetryAfter != nil && *f.RetryAfter < 0:
		return fmt.Errorf("Fault.RetryAfter: %v is negative", *f.RetryAfter)
	case f.RetryAfter != nil && f.code() == "":
		return fmt.Errorf("Fault.RetryAfter: a wait goes with an error (Status or Code)")
	case f.Latency < 0:
		return fmt.Errorf("Fault.Latency: %v is negative", f.Latency)
	}
	return nil
}

// code is the error code f answers; "" for none.
func (f Fault) code() string {
	if f.Code != "" {
		return f.Code
	}
	return statusCodes[f.Status]
}

// matches reports whether f's filters take in a request.
func (f Fault) matches(info server.RequestInfo) bool {
	if f.Operation != "" && f.Operation != info.Operation {
		return false
	}
	if f.Table != "" && !strings.EqualFold(f.Table, info.Table) {
		return false
	}
	if f.Partition != "" && (info.RowKey == "" && info.PartitionKey == "" || f.Partition != info.PartitionKey) {
		return false
	}
	return true
}

// rule is an injected Fault with its counters.
type rule struct {
	Fault
	id      int
	matched int // requests matched so far
	hits    int // requests hit so far
	rng     *rand.Rand
}

// faultSet holds a Server's or DB's rules. It is safe for concurrent
// use.
type faultSet struct {
	mu     sync.Mutex
	rules  []*rule
	nextID int
}

// add validates and adds f, numbering it; remove takes it out again.
func (s *faultSet) add(f Fault) (id int, remove func(), err error) {
	if err := f.Validate(); err != nil {
		return 0, nil, err
	}
	r := &rule{Fault: f}
	if f.Probability > 0 {
		r.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	}
	s.mu.Lock()
	s.nextID++
	r.id = s.nextID
	s.rules = append(s.rules, r)
	s.mu.Unlock()
	return r.id, func() { s.remove(r.id) }, nil
}

// remove takes out the rule numbered id, reporting whether there was one.
func (s *faultSet) remove(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.rules)
	s.rules = slices.DeleteFunc(s.rules, func(x *rule) bool { return x.id == id })
	return len(s.rules) < n
}

// clear removes every rule.
func (s *faultSet) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
}

// numbered is a rule as the control API lists it.
type numbered struct {
	ID int `json:"id"`
	Fault
}

// list returns the rules with their numbers, in order.
func (s *faultSet) list() []numbered {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]numbered, len(s.rules))
	for i, r := range s.rules {
		out[i] = numbered{r.id, r.Fault}
	}
	return out
}

// pick returns the fault that hits a request, if any, counting it.
func (s *faultSet) pick(info server.RequestInfo) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if !r.matches(info) {
			continue
		}
		r.matched++
		if r.Every > 1 && r.matched%r.Every != 0 {
			continue
		}
		if r.Times > 0 && r.hits >= r.Times {
			continue
		}
		if r.rng != nil && r.rng.Float64() >= r.Probability {
			continue
		}
		r.hits++
		return r.Fault, true
	}
	return Fault{}, false
}
