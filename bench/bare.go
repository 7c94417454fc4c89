package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/tablestore/tablestore/tablestoretest/azurite"
)

// The transport floor under the server mode's request phases ($batch,
// gets, single inserts): a child process that serves HTTP through
// server.NewHTTPServer, as tablestore serve does, with a handler that
// reads each request's body and answers with the bytes tablestore
// answered to the same kind of request, and does nothing else. Its CPU
// per request is what the transport alone costs on this machine:
// net/http, the loopback TCP and the scheduling of the goroutines that
// carry them. tablestore's CPU over the library floor, less this, is
// its handler's own work and how that work interleaves with the
// transport.

// bareServeArg makes this program serve the transport floor: the
// argument after it names a file of bareAnswers; it prints "listening
// ADDR" and serves until interrupted.
const bareServeArg = "-bare-serve"

// The captured $batch goes to srvCaptureTable, apart from the data set,
// which the floors count; the captured $batch and insert write the
// partitions captureBatchPK and captureInsertPK. Each name is as long as
// the load's (srvTable, partitionKey, the insert phase's partitions), so
// the captured answers, which carry them, are as long as the load's.
const (
	srvCaptureTable = "bcapt"
	captureBatchPK  = "c0000000"
	captureInsertPK = "ins-c-00"
)

// bareAnswer is one captured answer, without the headers net/http
// writes itself (Date, Content-Length, Connection).
type bareAnswer struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// bareAnswers are the transport floor's answers: Batch to a POST to
// $batch; to a GET of a table's entities, the page of Pages its
// continuation (NextPartitionKey and NextRowKey, joined by a newline)
// names; to another GET, Get, with the RowKey GetRowKey in its body
// replaced by the one the request's path names (the get phases check
// it); Insert to any other request (the tables' creation included).
type bareAnswers struct {
	Batch     bareAnswer            `json:"batch"`
	Get       bareAnswer            `json:"get"`
	Insert    bareAnswer            `json:"insert"`
	Pages     map[string]bareAnswer `json:"pages,omitempty"`
	GetRowKey string                `json:"getRowKey"`
	// getAt is where GetRowKey starts in Get's body.
	getAt int
}

// maxCapturedPaging is the largest data set whose pages are captured for
// the transport floor: they are held in memory twice, here and in its
// server.
const maxCapturedPaging = 200_000

// captureBareAnswers makes t, a tablestore server after its phases,
// answer one request of each kind and returns the answers: a $batch of
// batchSize new entities into srvCaptureTable, a get of the data set's
// first entity, an insert of a new entity into srvInsTable and, for a
// data set of at most maxCapturedPaging entities, every page of a pass
// through it at no metadata.
func captureBareAnswers(t *srvTarget, entities int) (*bareAnswers, error) {
	conn, err := t.conn()
	if err != nil {
		return nil, err
	}
	defer conn.close()
	keep := func(r restResponse, what string, want int) (bareAnswer, error) {
		if r.status != want {
			return bareAnswer{}, fmt.Errorf("capturing %s: status %d: %.200s", what, r.status, r.body)
		}
		h := r.header.Clone()
		for _, k := range []string{"Date", "Content-Length", "Connection", "Keep-Alive"} {
			delete(h, k)
		}
		return bareAnswer{Status: r.status, Header: h, Body: append([]byte(nil), r.body...)}, nil
	}
	a := &bareAnswers{}
	r, err := conn.do("POST", "/Tables", "", acceptNoMeta, []string{"Prefer: return-no-content"}, "application/json",
		[]byte(`{"TableName":"`+srvCaptureTable+`"}`))
	if err != nil {
		return nil, err
	}
	if r.status != 204 {
		return nil, fmt.Errorf("create table %s: status %d: %.200s", srvCaptureTable, r.status, r.body)
	}
	ents := make([][]byte, batchSize)
	var rec record
	for i := range ents {
		genRecordKeys(&rec, i, captureBatchPK, rowKey(i))
		if ents[i], err = recordEntity(&rec).MarshalJSON(); err != nil {
			return nil, err
		}
	}
	body, ctype := batchBody(t.endpoint, srvCaptureTable, ents, 0)
	if r, err = conn.do("POST", "/$batch", "", acceptMinMeta, nil, ctype, body); err != nil {
		return nil, err
	}
	if ok, failed := batchStatuses(r.body); ok != batchSize || failed != 0 {
		return nil, fmt.Errorf("capturing a $batch: %d sub-responses ok, %d failed", ok, failed)
	}
	if a.Batch, err = keep(r, "a $batch", 202); err != nil {
		return nil, err
	}
	a.GetRowKey = rowKey(0)
	if r, err = conn.do("GET", entityPath(srvTable, partitionKey(0), a.GetRowKey), "", acceptNoMeta, nil, "", nil); err != nil {
		return nil, err
	}
	if a.Get, err = keep(r, "a get", 200); err != nil {
		return nil, err
	}
	genRecordKeys(&rec, 0, captureInsertPK, rowKey(0))
	if body, err = recordEntity(&rec).MarshalJSON(); err != nil {
		return nil, err
	}
	if r, err = conn.do("POST", "/"+srvInsTable, "", acceptNoMeta, []string{"Prefer: return-no-content"}, "application/json", body); err != nil {
		return nil, err
	}
	if a.Insert, err = keep(r, "an insert", 204); err != nil {
		return nil, err
	}
	if entities <= maxCapturedPaging {
		// One pass of the data set's pages at no metadata.
		a.Pages = map[string]bareAnswer{}
		npk, nrk := "", ""
		for {
			q := "$top=" + strconv.Itoa(pageTop)
			if npk != "" {
				q += "&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(nrk)
			}
			key := npk + "\n" + nrk
			if r, err = conn.do("GET", "/"+srvTable+"()", q, acceptNoMeta, nil, "", nil); err != nil {
				return nil, err
			}
			if a.Pages[key], err = keep(r, "a page", 200); err != nil {
				return nil, err
			}
			npk, nrk = r.header.Get("x-ms-continuation-NextPartitionKey"), r.header.Get("x-ms-continuation-NextRowKey")
			if npk == "" {
				break
			}
			if len(a.Pages) > entities/pageTop+1 {
				return nil, fmt.Errorf("capturing the pages: more than %d", len(a.Pages))
			}
		}
	}
	return a, a.locate()
}

// locate finds GetRowKey in Get's body.
func (a *bareAnswers) locate() error {
	key := `"RowKey":"` + a.GetRowKey + `"`
	i := strings.Index(string(a.Get.Body), key)
	if i < 0 {
		return fmt.Errorf("the captured get holds no %s: %.200s", key, a.Get.Body)
	}
	a.getAt = i + len(`"RowKey":"`)
	return nil
}

// bareBodies holds the request bodies' buffers between requests.
var bareBodies = sync.Pool{New: func() any { return new([]byte) }}

// ServeHTTP reads the request's body whole and answers it.
func (a *bareAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := bareBodies.Get().(*[]byte)
	defer bareBodies.Put(buf)
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	*buf = b
	ans, rk := &a.Insert, ""
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/$batch"):
		ans = &a.Batch
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "()"):
		q := r.URL.Query()
		p, ok := a.Pages[q.Get("NextPartitionKey")+"\n"+q.Get("NextRowKey")]
		if !ok {
			http.Error(w, "no such page", http.StatusNotFound)
			return
		}
		ans = &p
	case r.Method == http.MethodGet:
		ans = &a.Get
		rk = a.GetRowKey
		if _, rest, ok := strings.Cut(r.URL.Path, "RowKey='"); ok {
			if end := strings.IndexByte(rest, '\''); end >= 0 {
				rk = rest[:end]
			}
		}
	}
	h := w.Header()
	for k, v := range ans.Header {
		h[k] = v
	}
	body := ans.Body
	if rk == "" {
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(ans.Status)
		w.Write(body)
		return
	}
	end := a.getAt + len(a.GetRowKey)
	h.Set("Content-Length", strconv.Itoa(len(body)-len(a.GetRowKey)+len(rk)))
	w.WriteHeader(ans.Status)
	w.Write(body[:a.getAt])
	io.WriteString(w, rk)
	w.Write(body[end:])
}

// runBareServe serves the answers in file on a loopback port until ctx
// ends.
func runBareServe(ctx context.Context, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	a := &bareAnswers{}
	if err := json.Unmarshal(b, a); err != nil {
		return err
	}
	if err := a.locate(); err != nil {
		return err
	}
	return serveLoopback(ctx, a)
}

// startBare writes a to a file in dir and starts the transport floor's
// server on it, a child process of this program with env added to this
// process's environment.
func startBare(ctx context.Context, a *bareAnswers, dir string, env ...string) (*srvTarget, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	file := dir + "/bare-answers.json"
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, bareServeArg, file)
	how := "net/http through server.NewHTTPServer, answering tablestore's captured bytes"
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
		how += ", environment " + strings.Join(env, " ")
	}
	s, host, err := startListening(ctx, cmd, how, "transport floor's server")
	if err != nil {
		return nil, err
	}
	return &srvTarget{name: serverBare, how: how, host: host,
		endpoint: "http://" + host + "/" + azurite.Account, pid: s.pid, stop: s.stop}, nil
}
