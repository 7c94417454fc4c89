package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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
	cmd := exec.Command(bin, "serve", "--dir", store, "--create", "--addr", "127.0.0.1:0", "--anonymous", "--log-level", "info")
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
	var addr string
	var before []string
	timeout := time.After(30 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server ended: %q", before)
			}
			before = append(before, l)
			if m := regexp.MustCompile(`^serve: listening on (\S+)$`).FindStringSubmatch(l); m != nil {
				addr = m[1]
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
	time.Sleep(200 * time.Millisecond) // the server is reading the body
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(200 * time.Millisecond)
	_, err = pw.Write([]byte(`"N":5}`))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	select {
	case resp := <-done:
		require.Equal(t, http.StatusCreated, resp.StatusCode)
	case <-time.After(20 * time.Second):
		t.Fatal("the request in flight did not finish")
	}

	var log []string
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
	} {
		r := cli(t, args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}
