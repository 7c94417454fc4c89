package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeGracefulShutdown starts `tablestore serve` on a loopback port,
// begins a request whose body is still being sent, stops the server with
// SIGTERM, finishes the body, and requires the request to complete, the
// process to exit 0 after logging each request, and the store to hold
// the entity when reopened.
func TestServeGracefulShutdown(t *testing.T) {
	bin := buildBinary(t)
	store := filepath.Join(t.TempDir(), "store")
	cmd := exec.Command(bin, "serve", "--dir", store, "--create", "--addr", "127.0.0.1:0", "--anonymous", "--log-level", "info", "--admin-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var addr, adminAddr string
	var before []string
	timeout := time.After(30 * time.Second)
	for addr == "" || adminAddr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server ended: %q", before)
			}
			before = append(before, l)
			if m := regexp.MustCompile(`^serve: listening on (\S+)$`).FindStringSubmatch(l); m != nil {
				addr = m[1]
			}
			if m := regexp.MustCompile(`^serve: admin listening on (\S+) `).FindStringSubmatch(l); m != nil {
				adminAddr = m[1]
			}
		case <-timeout:
			t.Fatal("the server did not start")
		}
	}
	require.Equal(t, "serve: created a new store in "+store, before[0])

	// Another process cannot open the store; it is told how to reach it.
	out, err := exec.Command(bin, "stats", "--store", store).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "store "+store+" is open in another process")
	require.Contains(t, string(out), `--store "UseDevelopmentStorage=true"`)
	base := "http://" + addr + "/devstoreaccount1"
	post := func(path string, body io.Reader) *http.Response {
		req, err := http.NewRequest("POST", base+path, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	require.Equal(t, http.StatusCreated, post("/Tables", strings.NewReader(`{"TableName":"People"}`)).StatusCode)

	// A request in flight across the signal.
	pr, pw := io.Pipe()
	done := make(chan *http.Response, 1)
	go func() { done <- post("/People", pr) }()
	_, err = pw.Write([]byte(`{"PartitionKey":"a","RowKey":"1",`))
	require.NoError(t, err)
	// The server is reading the body: its gauge counts the request.
	require.True(t, waitForCondition(20*time.Second, 10*time.Millisecond, func() bool {
		return inFlight(adminAddr) >= 1
	}), "the request never showed in tablestore_requests_in_flight")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	// The shutdown has begun once the listener refuses new connections.
	var log []string
	for stopping := false; !stopping; {
		select {
		case l := <-lines:
			log = append(log, l)
			stopping = strings.HasPrefix(l, "serve: stopping: ")
		case <-time.After(20 * time.Second):
			t.Fatalf("no stopping line after SIGTERM: %q", log)
		}
	}
	require.True(t, waitForCondition(20*time.Second, 10*time.Millisecond, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}), "the listener still accepts connections after SIGTERM")
	_, err = pw.Write([]byte(`"N":5}`))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	select {
	case resp := <-done:
		require.Equal(t, http.StatusCreated, resp.StatusCode)
	case <-time.After(20 * time.Second):
		t.Fatal("the request in flight did not finish")
	}

	for l := range lines {
		log = append(log, l)
	}
	require.NoError(t, cmd.Wait(), strings.Join(log, "\n"))
	all := strings.Join(log, "\n")
	require.Contains(t, all, "serve: stopped; closing the store")
	require.Regexp(t, `level=INFO msg=request method=POST path=/devstoreaccount1/Tables status=201`, all)
	require.Regexp(t, `level=INFO msg=request method=POST path=/devstoreaccount1/People status=201`, all)

	got := readEntities(t, store, "People")
	require.Len(t, got, 1)
	require.Equal(t, int32(5), got[0].Properties["N"])
}

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve"},
		{"serve", "--in-memory", "--dir", "x"},
		{"serve", "--dir", "x", "--store", "y"},
		{"serve", "--in-memory", "--log-level", "loud"},
		{"serve", "--in-memory", "--key", "not base64!"},
		{"serve", "--in-memory", "--memory-budget", "lots"},
		{"serve", "--in-memory", "--memory-limit", "-5MiB"},
		{"serve", "--in-memory", "--memory-limit", "sometimes"},
		{"serve", "--in-memory", "--max-requests", "0"},
		{"serve", "--in-memory", "--min-body-rate", "0"},
		{"serve", "--in-memory", "--body-grace", "0s"},
		{"serve", "--in-memory", "--replicate-to", "mirror"},
		{"serve", "--dir", "x", "--replicate-table", "Orders"},
		{"serve", "--dir", "x", "--replicate-state", "x.json"},
		{"serve", "--dir", "x", "--accounts", "a:a2V5", "--replicate-to", "mirror"},
	} {
		r := cli(t, args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "64KiB": 64 << 10, "256MiB": 256 << 20, "1GiB": 1 << 30, "3MB": 3 << 20, "10B": 10} {
		var b byteSize
		require.NoError(t, b.Set(in), in)
		require.Equal(t, want, int64(b), in)
	}
	for _, in := range []string{"", "x", "-1", "1TiB", "99999999999GiB"} {
		var b byteSize
		require.Error(t, b.Set(in), in)
	}
	require.Equal(t, "256MiB", formatBytes(256<<20))
	require.Equal(t, "1000B", formatBytes(1000))
}

// startServeBin starts tablestore serve on a free loopback port with args
// and returns the process, its base URL (with the account) and its
// standard error lines.
func startServeBin(t *testing.T, args ...string) (*exec.Cmd, string, <-chan string) {
	t.Helper()
	bin := buildBinary(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads the log this far
			}
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the server exited before listening")
			}
			if m := regexp.MustCompile(`^serve: listening on (\S+)$`).FindStringSubmatch(l); m != nil {
				return cmd, "http://" + m[1] + "/devstoreaccount1", lines
			}
		case <-timeout:
			t.Fatal("the server did not start")
		}
	}
}

// TestServeKillUnderLoad kills tablestore serve with SIGKILL while
// clients write single entities and batches, restarts it on the same
// store, and at the end checks the store: every write the server
// acknowledged is there, and every batch, acknowledged or not, is there
// whole or not at all.
//
// The short form (CI) runs 2 cycles of 1 s of load; the long form sets
// TABLESTORE_SERVE_CRASH_CYCLES (e.g. 20) and TABLESTORE_SERVE_CRASH_LOAD
// (e.g. 5s):
//
//	TABLESTORE_SERVE_CRASH_CYCLES=20 TABLESTORE_SERVE_CRASH_LOAD=5s go test -run TestServeKillUnderLoad -v -timeout 30m
func TestServeKillUnderLoad(t *testing.T) {
	cycles, load := 2, time.Second
	if v := os.Getenv("TABLESTORE_SERVE_CRASH_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		cycles = n
	}
	if v := os.Getenv("TABLESTORE_SERVE_CRASH_LOAD"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		load = d
	}
	store := filepath.Join(t.TempDir(), "store")
	type batch struct {
		id   string
		rows int
	}
	var mu sync.Mutex
	var tried, acked []batch // single writes are batches of one row without the envelope
	var singles []string
	for cycle := 0; cycle < cycles; cycle++ {
		cmd, base, _ := startServeBin(t, "--dir", store, "--create", "--anonymous", "--log-level", "none")
		c := &http.Client{Timeout: 10 * time.Second}
		if cycle == 0 {
			resp, err := c.Post(base+"/Tables", "application/json", strings.NewReader(`{"TableName":"Load"}`))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusCreated, resp.StatusCode)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("c%02dw%dn%05d", cycle, w, n)
					if n%2 == 0 {
						body := fmt.Sprintf(`{"PartitionKey":"single","RowKey":%q,"Cycle":%d}`, id, cycle)
						resp, err := c.Post(base+"/Load", "application/json", strings.NewReader(body))
						if err != nil {
							return // the server is gone
						}
						resp.Body.Close()
						if resp.StatusCode == http.StatusCreated {
							mu.Lock()
							singles = append(singles, id)
							mu.Unlock()
						}
						continue
					}
					rows := 5 + (n*7+w)%40
					mu.Lock()
					tried = append(tried, batch{id, rows})
					mu.Unlock()
					resp, err := c.Post(base+"/$batch", "multipart/mixed; boundary=batch_k", strings.NewReader(loadBatch(id, rows)))
					if err != nil {
						return
					}
					out, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusAccepted && !strings.Contains(string(out), "odata.error") {
						mu.Lock()
						acked = append(acked, batch{id, rows})
						mu.Unlock()
					}
				}
			}(w)
		}
		time.Sleep(load) // sleep: the load runs this long before the kill; that duration is what the test sets
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		close(stop)
		wg.Wait()
	}
	got := map[string]int{} // rows per partition
	cycleOf := map[string]int32{}
	for _, e := range readEntities(t, store, "Load") {
		got[e.PartitionKey]++
		if e.PartitionKey == "single" {
			cycleOf[e.RowKey] = e.Properties["Cycle"].(int32)
		} else {
			require.Equal(t, e.PartitionKey, e.Properties["Batch"], "row %s/%s", e.PartitionKey, e.RowKey)
		}
	}
	for _, id := range singles {
		_, ok := cycleOf[id]
		require.True(t, ok, "acknowledged insert %s is missing", id)
	}
	for _, b := range acked {
		require.Equal(t, b.rows, got[b.id], "acknowledged batch %s", b.id)
	}
	half := 0
	for _, b := range tried {
		if n := got[b.id]; n != 0 && n != b.rows {
			half++
			t.Errorf("batch %s holds %d of its %d rows", b.id, n, b.rows)
		}
		delete(got, b.id)
	}
	delete(got, "single")
	require.Empty(t, got, "partitions no batch wrote")
	t.Logf("%d cycles: %d single inserts and %d of %d batches acknowledged, all present; no half batch", cycles, len(singles), len(acked), len(tried))
	require.NotEmpty(t, acked)
}

// loadBatch is a $batch inserting rows entities into table Load, all in
// partition id.
func loadBatch(id string, rows int) string {
	var b strings.Builder
	b.WriteString("--batch_k\r\nContent-Type: multipart/mixed; boundary=changeset_k\r\n\r\n")
	for i := 0; i < rows; i++ {
		b.WriteString("--changeset_k\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString("POST http://127.0.0.1/devstoreaccount1/Load HTTP/1.1\r\nContent-Type: application/json\r\n\r\n")
		fmt.Fprintf(&b, `{"PartitionKey":%q,"RowKey":"r%03d","Batch":%q,"Pad":"%s"}`, id, i, id, strings.Repeat("p", 100+i*13))
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_k--\r\n--batch_k--\r\n")
	return b.String()
}

// inFlight reads tablestore_requests_in_flight from the admin listener's
// /metrics; -1 when it cannot.
func inFlight(adminAddr string) int {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + adminAddr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`(?m)^tablestore_requests_in_flight (\d+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestServeShutdownEndsStreams checks that SIGTERM ends an open change
// feed stream and a long-poll at once, the stream with its final end
// event naming the shutdown, and that serve then exits 0 well within its
// shutdown timeout.
func TestServeShutdownEndsStreams(t *testing.T) {
	cmd, base, lines := startServeBin(t, "--in-memory", "--anonymous", "--shutdown-timeout", "20s")
	do := func(method, path, body string) *http.Response {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		require.NoError(t, err)
		return resp
	}
	resp := do("POST", "/Tables", `{"TableName":"Feed"}`)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	resp = do("PUT", "/$tablestore/tables/Feed/changefeed", `{}`)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	req, err := http.NewRequest("GET", base+"/$tablestore/tables/Feed/changes?from=now&heartbeat=10", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	sc := bufio.NewScanner(stream.Body)
	require.True(t, sc.Scan(), "the stream's first heartbeat")
	poll := make(chan *http.Response, 1)
	go func() {
		r, err := http.Get(base + "/$tablestore/tables/Feed/changes?from=now&wait=60")
		if err != nil {
			r = nil
		}
		poll <- r
	}()
	time.Sleep(200 * time.Millisecond) // sleep: lets the long-poll reach the server, which gives no event for it; the test holds without it

	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var events []string
	for sc.Scan() {
		events = append(events, sc.Text())
	}
	require.Contains(t, strings.Join(events, "\n"), "event: end\ndata: {\"reason\":\"shutdown\"}")
	if r := <-poll; r != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		require.Contains(t, string(b), `"end":"shutdown"`)
	}
	var log []string
	for l := range lines {
		log = append(log, l)
	}
	require.NoError(t, cmd.Wait(), strings.Join(log, "\n"))
	require.Less(t, time.Since(start), 5*time.Second, "serve waited on the streams")
	require.Contains(t, strings.Join(log, "\n"), "serve: stopped; closing the store")
}
