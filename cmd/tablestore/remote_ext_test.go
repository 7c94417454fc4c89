package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestCommandsThroughServer runs changes (--follow included), index,
// ttl, stats, explain and replicate with --store a server's connection
// string: the server holds the store's lock, and another process writes
// through it meanwhile.
func TestCommandsThroughServer(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	cs := srv.ConnectionString()
	ok(t, "tables", "--store", cs, "create", "Feed")
	ok(t, "changes", "--store", cs, "--enable", "--images", "new", "Feed")
	var st struct {
		Enabled bool   `json:"enabled"`
		Images  string `json:"images"`
		Latest  string `json:"latest"`
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, "changes", "--store", cs, "--status", "Feed").stdout), &st))
	require.True(t, st.Enabled)
	require.Equal(t, "new", st.Images)

	// A follower in its own goroutine, with its own connection.
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"changes", "--store", cs, "--from", st.Latest, "--follow", "Feed"}, &stdio{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard})
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	ok(t, "put", "--store", cs, "Feed", `{"PartitionKey":"p","RowKey":"1","N":5}`)
	require.True(t, lines.Scan(), "the follower wrote nothing")
	require.Contains(t, lines.Text(), `"op":"insert"`)
	require.Contains(t, lines.Text(), `"rowKey":"1"`)
	ok(t, "put", "--store", cs, "Feed", `{"PartitionKey":"p","RowKey":"2","N":6}`)
	require.True(t, lines.Scan())
	require.Contains(t, lines.Text(), `"rowKey":"2"`)
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Equal(t, exitOK, <-done)

	all := ok(t, "changes", "--store", cs, "Feed").stdout
	require.Equal(t, 2, strings.Count(all, "\n"), all)

	ok(t, "index", "create", "--store", cs, "Feed", "ByN", "N")
	require.Contains(t, ok(t, "index", "list", "--store", cs, "Feed").stdout, "ByN")
	require.Contains(t, ok(t, "explain", "--store", cs, "Feed", "--filter", "PartitionKey eq 'p' and N eq 5").stdout, "ByN")

	require.Contains(t, ok(t, "ttl", "--store", cs, "Feed", "--default", "24h").stdout, "24h")
	require.Contains(t, ok(t, "ttl", "--store", cs, "Feed").stdout, "24h")
	r := cli(t, "ttl", "--store", cs, "Feed", "--property", "Bad Name")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "PropertyNameInvalid")

	require.Contains(t, ok(t, "stats", "--store", cs, "Feed").stdout, "Feed")

	// replicate reads its source through the server.
	r = cli(t, "replicate", "--store", cs, "--to", filepath.Join(t.TempDir(), "x"), "--once", "Feed")
	require.Equal(t, exitUsage, r.code, r.stderr)
	dir := t.TempDir()
	target := filepath.Join(dir, "mirror")
	ok(t, "replicate", "--store", cs, "--state", filepath.Join(dir, "state.json"), "--to", target, "--once", "Feed")
	require.Equal(t, []string{"p/1", "p/2"}, keys(readEntities(t, target, "Feed")))
}

// TestConsoleThroughServer runs the console on a server's connection
// string: its Changes page streams the served store's feed, read through
// the remote driver and the server's feed endpoint, as another client
// writes.
func TestConsoleThroughServer(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	cs := srv.ConnectionString()
	ok(t, "tables", "--store", cs, "create", "Orders")
	ok(t, "changes", "--store", cs, "--enable", "Orders")
	token := "fixed-token-for-the-test-0123"
	_, lines := startProcess(t, []string{consoleTokenEnv + "=" + token}, "console", "--store", cs, "--addr", "127.0.0.1:0")
	start := waitLine(t, lines, `^console: open (http://127\.0\.0\.1:\d+/\?token=\S+)$`)
	base := strings.TrimSuffix(start, "/?token="+token)
	c := newConsoleClient(t, base)
	status, _, _ := c.do("GET", start, "", nil)
	require.Equal(t, http.StatusSeeOther, status)
	events := c.stream("/tables/Orders/changes/stream?from=now")
	require.True(t, strings.HasPrefix(nextEvent(t, events), "ready "))
	ok(t, "put", "--store", cs, "Orders", `{"PartitionKey":"eu","RowKey":"7"}`)
	ev := nextEvent(t, events)
	require.True(t, strings.HasPrefix(ev, "change "), ev)
	require.Contains(t, ev, `"rk":"7"`)
}
