package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
)

// Import limits.
const (
	// maxChunk bounds one chunk of an import's file.
	maxChunk = 4 << 20
	// maxImportRecord bounds one record (line) of an import's file.
	maxImportRecord = 16 << 20
	// batchBytes bounds the input bytes of one transaction, well inside
	// Azure's 4 MiB.
	batchBytes = 2 << 20
	// maxIssues is how many rejected records an import reports.
	maxIssues = 20
	// importIdle ends an import that received no chunk for that long,
	// releasing its unfinished record.
	importIdle = 2 * time.Minute
	// maxImportsPerSession bounds the imports a session runs at once.
	maxImportsPerSession = 4
)

// importModes maps the import form's mode to the transaction action, as the
// tablestore command's --mode does.
var importModes = map[string]tablestore.ActionType{
	"insert":       tablestore.ActionInsert,
	"upsert":       tablestore.ActionUpsertReplace,
	"upsert-merge": tablestore.ActionUpsertMerge,
}

// importJob is one import in progress: the browser sends the file in
// chunks, in order, each answered once its complete records are committed,
// so the progress it shows is what the store holds. Records follow the
// format of the tablestore command's import: JSON lines in Azure's wire
// format, or the CSV of package entitycsv. Consecutive records with the same
// PartitionKey are committed together in transactions of up to 100.
type importJob struct {
	id     string
	owner  *session
	acct   string // the account it counts against (accountKey)
	table  *tablestore.Table
	format string // "jsonl" or "csv"
	action tablestore.ActionType
	skip   bool   // go on after a rejected record
	mem    Memory // the owner's budget; nil: none
	// idle fires importIdle after the last chunk, to end the import if
	// no other comes (Console.sweepImports). Guarded by Console.liveMu.
	idle *time.Timer

	mu       sync.Mutex
	held     int64 // bytes reserved from mem
	used     time.Time
	received int64  // bytes of the file taken so far
	carry    []byte // the start of a record the next chunk completes
	line     int    // lines read so far
	cols     entitycsv.Header
	batch    []pendingEntity
	batchLen int
	rowKeys  map[string]bool // the batch's RowKeys

	imported, rejected int64
	issues             []importIssue
	done, stopped      bool
	fatal              string
}

// pendingEntity is a decoded record waiting for its transaction.
type pendingEntity struct {
	e    *tablestore.Entity
	line int
}

// importIssue is one rejected record.
type importIssue struct {
	Line    int             `json:"line"`
	Code    tablestore.Code `json:"code,omitempty"`
	Message string          `json:"message"`
}

// importStatus is the answer to each chunk.
type importStatus struct {
	ID       string        `json:"id"`
	Received int64         `json:"received"` // bytes taken; the next chunk's offset
	Lines    int           `json:"lines"`
	Imported int64         `json:"imported"`
	Rejected int64         `json:"rejected"`
	Issues   []importIssue `json:"issues"`
	Done     bool          `json:"done"`
	// Stopped says the import ended at a rejected record (without
	// onerror=skip) or at Error.
	Stopped bool   `json:"stopped"`
	Error   string `json:"error,omitempty"`
}

// status returns the job's status. REQUIRES: j.mu held.
func (j *importJob) status() importStatus {
	return importStatus{ID: j.id, Received: j.received, Lines: j.line, Imported: j.imported, Rejected: j.rejected,
		Issues: append([]importIssue{}, j.issues...), Done: j.done, Stopped: j.stopped, Error: j.fatal}
}

// importBody is the data of the import page.
type importBody struct {
	Name string
}

func (c *Console) importPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	d := &pageData{Title: "Import into " + name, Table: name, Tab: "import"}
	if !c.requireTable(w, r, d, c.store(r).Table(name), name) {
		return
	}
	d.Body = importBody{Name: name}
	c.render(w, r, http.StatusOK, "import", d)
}

// startImport begins an import: format (jsonl or csv), mode (insert,
// upsert or upsert-merge) and onerror (stop or skip). It answers
// {"id": ...} for the chunks to name.
func (c *Console) startImport(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	bad := func(status int, msg string) { writeJSON(w, status, map[string]string{"error": msg}) }
	format, mode, onError := r.PostFormValue("format"), r.PostFormValue("mode"), r.PostFormValue("onerror")
	if format != "jsonl" && format != "csv" {
		bad(http.StatusBadRequest, fmt.Sprintf("unknown format %q: want jsonl or csv", format))
		return
	}
	action, ok := importModes[mode]
	if !ok {
		bad(http.StatusBadRequest, fmt.Sprintf("unknown mode %q: want insert, upsert or upsert-merge", mode))
		return
	}
	if onError != "stop" && onError != "skip" {
		bad(http.StatusBadRequest, fmt.Sprintf("unknown onerror %q: want stop or skip", onError))
		return
	}
	if err := mustExist(r.Context(), t, name); err != nil {
		bad(statusOf(err), errorText(err))
		return
	}
	s := sessionFrom(r.Context())
	c.sweepImports()
	j := &importJob{id: randomToken()[:16], owner: s, table: t, format: format, action: action, skip: onError == "skip",
		mem: c.memory(s), used: c.o.Clock(), rowKeys: map[string]bool{}}
	j.acct = accountKey(s)
	c.liveMu.Lock()
	switch {
	case s.imports >= maxImportsPerSession:
		c.liveMu.Unlock()
		bad(http.StatusTooManyRequests, fmt.Sprintf("this session runs %d imports already", maxImportsPerSession))
		return
	case len(c.imports) >= c.maxImports:
		c.liveMu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		bad(http.StatusServiceUnavailable, fmt.Sprintf("the console runs %d imports already, its most: try again when one ends "+
			"(an import left without a chunk for %s ends)", len(c.imports), importIdle))
		return
	case c.accountImports[j.acct] >= c.accountShare(c.maxImports):
		c.liveMu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		bad(http.StatusServiceUnavailable, fmt.Sprintf("this account's sessions run %d imports already, its share: try again when one ends "+
			"(an import left without a chunk for %s ends)", c.accountImports[j.acct], importIdle))
		return
	}
	s.imports++
	c.accountImports[j.acct]++
	c.imports[j.id] = j
	j.idle = time.AfterFunc(importIdle, c.sweepImports)
	c.liveMu.Unlock()
	c.logChange(r, "import started", "table", name, "format", format, "mode", mode, "onerror", onError)
	writeJSON(w, http.StatusCreated, map[string]string{"id": j.id})
}

// importChunk takes the chunk of the file at ?offset=N (the received count
// of the last answer), ?last=1 for the file's end, and answers once its
// complete records are committed. A chunk at another offset is refused
// with 409 and the status, so the browser resumes where the import is.
func (c *Console) importChunk(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	c.liveMu.Lock()
	j := c.imports[r.PathValue("id")]
	c.liveMu.Unlock()
	if j == nil || j.owner != s || j.table.Name() != r.PathValue("table") {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such import in this session: start it again"})
		return
	}
	if !j.mu.TryLock() {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "a chunk of this import is being taken: send one at a time"})
		return
	}
	defer j.mu.Unlock()
	defer c.touchImport(j)
	j.used = c.o.Clock()
	offset, err := strconv.ParseInt(r.FormValue("offset"), 10, 64)
	if err != nil || offset != j.received || j.done {
		writeJSON(w, http.StatusConflict, j.status())
		return
	}
	// The chunk's memory: the chunk, the unfinished record and the two
	// joined, and the transactions' work; between chunks, the
	// unfinished record only.
	n := int64(maxChunk)
	if r.ContentLength >= 0 && r.ContentLength < n {
		n = r.ContentLength
	}
	if !j.reserve(r.Context(), 2*(int64(cap(j.carry))+n)+importWork) {
		errNoMemory.write(c, w, r)
		return
	}
	defer func() { j.shrink(int64(cap(j.carry))) }()
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxChunk))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": fmt.Sprintf("a chunk must be at most %d bytes", maxChunk)})
		return
	}
	before := j.imported
	j.feed(r.Context(), data, r.FormValue("last") == "1")
	if j.imported > before || j.done {
		c.logChange(r, "import chunk", "table", j.table.Name(), "imported", j.imported-before,
			"rejected", j.rejected, "done", j.done)
	}
	writeJSON(w, http.StatusOK, j.status())
}

// touchImport restarts j's idle timer after a chunk.
func (c *Console) touchImport(j *importJob) {
	c.liveMu.Lock()
	j.idle.Reset(importIdle)
	c.liveMu.Unlock()
}

// sweepImports ends the imports that are done or have had no chunk for
// importIdle, releasing what they hold; an import taking a chunk is left
// alone.
func (c *Console) sweepImports() {
	now := c.o.Clock()
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	for id, j := range c.imports {
		if !j.mu.TryLock() {
			continue
		}
		if j.done || now.Sub(j.used) >= importIdle {
			if !j.done {
				j.stop(fmt.Sprintf("the import ended after %s without a chunk: start it again", importIdle))
			}
			j.carry = nil
			j.shrink(0)
			j.idle.Stop()
			delete(c.imports, id)
			j.owner.imports--
			c.accountImports[j.acct]--
		}
		j.mu.Unlock()
	}
}

// reserve grows the job's reservation to n bytes, waiting a bounded time;
// false when the budget has no room. REQUIRES: j.mu held.
func (j *importJob) reserve(ctx context.Context, n int64) bool {
	if j.mem == nil || n <= j.held {
		return true
	}
	if !j.mem.Reserve(ctx, n-j.held) {
		return false
	}
	j.held = n
	return true
}

// shrink releases the job's reservation down to n bytes. REQUIRES: j.mu
// held.
func (j *importJob) shrink(n int64) {
	if j.mem != nil && n < j.held {
		j.mem.Release(j.held - n)
		j.held = n
	}
}

// feed takes the next chunk of the file: it splits off complete records,
// decodes and commits them, and keeps an incomplete last record for the
// next chunk (or, at the end, takes it as it is). REQUIRES: j.mu held.
func (j *importJob) feed(ctx context.Context, data []byte, last bool) {
	j.received += int64(len(data))
	buf := append(j.carry, data...)
	for !j.done {
		var n int
		if j.format == "csv" {
			n = entitycsv.RecordEnd(buf)
		} else if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			n = i + 1
		} else {
			n = -1
		}
		if n < 0 {
			if !last || len(buf) == 0 {
				break
			}
			n = len(buf)
		}
		rec := buf[:n]
		buf = buf[n:]
		start := j.line + 1
		j.line += bytes.Count(rec, []byte{'\n'})
		if rec[len(rec)-1] != '\n' {
			j.line++
		}
		j.record(ctx, rec, start)
	}
	if !j.done && len(buf) > maxImportRecord {
		j.stop(fmt.Sprintf("line %d: a record longer than %d MiB", j.line+1, maxImportRecord>>20))
	}
	j.carry = append([]byte(nil), buf...)
	// Commit what the chunk completed: after a rejected record (without
	// skip), the records before it.
	j.flush(ctx)
	if last && !j.done {
		j.done = true
	}
	if j.done {
		j.carry = nil
	}
}

// record decodes one record, starting on line, and queues its entity.
func (j *importJob) record(ctx context.Context, rec []byte, line int) {
	if line == 1 {
		rec = bytes.TrimPrefix(rec, []byte("\ufeff"))
	}
	if len(bytes.TrimSpace(rec)) == 0 {
		return
	}
	e := &tablestore.Entity{}
	if j.format == "csv" {
		row, err := entitycsv.ParseRecord(rec)
		if j.cols == nil {
			if err == nil {
				j.cols, err = entitycsv.ParseHeader(row.Fields)
			}
			if err != nil {
				j.stop(fmt.Sprintf("line %d: %s", line, errorText(err)))
			}
			return
		}
		if err == nil {
			e, err = j.cols.Entity(row)
		}
		if err != nil {
			j.reject(line, err)
			return
		}
	} else if err := e.UnmarshalJSON(rec); err != nil {
		j.reject(line, err)
		return
	}
	if len(j.batch) > 0 && (j.batch[0].e.PartitionKey != e.PartitionKey || len(j.batch) == tablestore.MaxTransactionActions ||
		j.batchLen+len(rec) > batchBytes || j.rowKeys[e.RowKey]) {
		j.flush(ctx)
		if j.done {
			return
		}
	}
	j.batch = append(j.batch, pendingEntity{e: e, line: line})
	j.batchLen += len(rec)
	j.rowKeys[e.RowKey] = true
}

// flush commits the queued entities in one transaction. A record the store
// rejects is reported with its line: without skip, the records before it
// are committed and the import stops; with skip, it is left out and the
// rest committed.
func (j *importJob) flush(ctx context.Context) {
	defer func() {
		j.batch, j.batchLen = j.batch[:0], 0
		clear(j.rowKeys)
	}()
	for len(j.batch) > 0 {
		err := j.submit(ctx, j.batch)
		if err == nil {
			j.imported += int64(len(j.batch))
			return
		}
		var be *tablestore.BatchError
		if !errors.As(err, &be) || be.Index < 0 || be.Index >= len(j.batch) || storeFault(be.Err) {
			j.stop(errorText(err))
			return
		}
		bad := j.batch[be.Index]
		j.reject(bad.line, be.Err)
		if !j.skip {
			if be.Index > 0 {
				if err := j.submit(ctx, j.batch[:be.Index]); err != nil {
					j.stop(errorText(err))
					return
				}
				j.imported += int64(be.Index)
			}
			return
		}
		j.batch = append(j.batch[:be.Index], j.batch[be.Index+1:]...)
	}
}

func (j *importJob) submit(ctx context.Context, batch []pendingEntity) error {
	actions := make([]tablestore.TransactionAction, len(batch))
	for i, p := range batch {
		actions[i] = tablestore.TransactionAction{Type: j.action, Entity: p.e}
	}
	return j.table.SubmitTransaction(ctx, actions)
}

// storeFault reports whether a transaction failed for a reason of the
// store or table rather than of its entity.
func storeFault(err error) bool {
	switch tablestore.ErrorCode(err) {
	case edm.CodeTableNotFound, edm.CodeInternalError, edm.CodeServerBusy,
		edm.CodeOperationTimedOut, "":
		return true
	}
	return false
}

// reject reports a record the import leaves out; without skip, the import
// stops there.
func (j *importJob) reject(line int, err error) {
	j.rejected++
	if len(j.issues) < maxIssues {
		j.issues = append(j.issues, importIssue{Line: line, Code: tablestore.ErrorCode(err), Message: errorText(err)})
	}
	if !j.skip {
		j.done, j.stopped = true, true
	}
}

// stop ends the import with an error that is not one record's.
func (j *importJob) stop(msg string) {
	j.done, j.stopped, j.fatal = true, true, msg
}
