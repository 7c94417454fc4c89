package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

func TestChangesCommand(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	ok(t, "tables", "--store", store, "create", "People")
	require.Equal(t, exitUsage, cli(t, "changes", "--store", store, "--images", "all", "--enable", "People").code)
	require.Equal(t, exitFail, cli(t, "changes", "--store", store, "People").code, "the feed is off")
	ok(t, "changes", "--store", store, "--enable", "--images", "new", "--retention", "1h", "People")
	r := ok(t, "changes", "--store", store, "--status", "People")
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.Equal(t, true, st["enabled"])
	require.Equal(t, "new", st["images"])
	require.Equal(t, "1h0m0s", st["retention"])

	write := func(f func(tb *tablestore.Table)) {
		db, err := tablestore.Open(store, nil)
		require.NoError(t, err)
		f(db.Table("People"))
		require.NoError(t, db.Close())
	}
	write(func(tb *tablestore.Table) {
		for i := range 3 {
			require.NoError(t, tb.Insert(context.Background(), &tablestore.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: map[string]any{"Age": int32(30 + i)}}))
		}
		require.NoError(t, tb.Delete(context.Background(), "p", "0", tablestore.ETagAny))
	})
	lines := func(out string) []server.ChangeJSON {
		var ls []server.ChangeJSON
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			var c server.ChangeJSON
			require.NoError(t, json.Unmarshal([]byte(l), &c), l)
			ls = append(ls, c)
		}
		return ls
	}
	all := lines(ok(t, "changes", "--store", store, "People").stdout)
	require.Len(t, all, 4)
	require.Equal(t, "insert", all[0].Op)
	require.Equal(t, "delete", all[3].Op)
	require.Equal(t, "single", all[0].Kind)
	// The line's timestamp and the entity's are one instant, written in
	// the same form (RFC 3339 with Azure's 7 digits).
	var image map[string]any
	require.NoError(t, json.Unmarshal(all[1].Entity, &image))
	lineTS, err := time.Parse(time.RFC3339Nano, all[1].Timestamp)
	require.NoError(t, err)
	imageTS, err := time.Parse(time.RFC3339Nano, image["Timestamp"].(string))
	require.NoError(t, err)
	require.True(t, lineTS.Equal(imageTS), "%v and %v", lineTS, imageTS)
	delete(image, "Timestamp")
	require.Equal(t, map[string]any{"PartitionKey": "p", "RowKey": "1", "odata.etag": all[1].ETag, "Age": float64(31)}, image)
	require.Empty(t, all[3].Entity)

	// A pipeline resumes from the last line it handled.
	rest := lines(ok(t, "changes", "--store", store, "--from", all[1].Cursor, "People").stdout)
	require.Equal(t, all[2:], rest)
	require.Empty(t, lines(ok(t, "changes", "--store", store, "--from", all[3].Cursor, "People").stdout))
	require.Equal(t, all[3:], lines(ok(t, "changes", "--store", store, "--from", all[3].Timestamp, "People").stdout))
	require.Len(t, lines(ok(t, "changes", "--store", store, "--partition", "q", "People").stdout), 0)
	require.Equal(t, exitUsage, cli(t, "changes", "--store", store, "--from", "bogus", "People").code)
	r = cli(t, "changes", "--store", store, "--from", "999.1", "People")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "InvalidInput")

	// --follow writes what there is, waits, and ends cleanly when
	// interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := newWatchedBuffer(), newWatchedBuffer()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"changes", "--store", store, "--follow", "--from", all[1].Cursor, "People"}, &stdio{stdin: strings.NewReader(""), stdout: out, stderr: errb})
	}()
	out.waitFor(t, 30*time.Second, "the changes after the cursor", func(s string) bool { return strings.Count(s, "\n") >= len(all[2:]) })
	select {
	case code := <-done:
		t.Fatalf("--follow ended (%d) before it was interrupted: %s", code, errb.String())
	default:
	}
	cancel()
	require.Equal(t, exitOK, <-done, errb.String())
	require.Equal(t, all[2:], lines(out.String()))

	// An entity that expired: the sweeper's removal is an expire line.
	gone := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	var etag tablestore.ETag
	write(func(tb *tablestore.Table) {
		require.NoError(t, tb.SetTTL(context.Background(), tablestore.TTL{Property: "Until"}))
		e := &tablestore.Entity{PartitionKey: "p", RowKey: "old", Properties: map[string]any{"Until": gone}}
		require.NoError(t, tb.Insert(context.Background(), e))
		etag = e.ETag
		require.Eventually(t, func() bool {
			n, err := tb.ExpiredCount(context.Background())
			require.NoError(t, err)
			return n == 0
		}, 10*time.Second, 5*time.Millisecond)
	})
	exp := lines(ok(t, "changes", "--store", store, "--from", all[3].Cursor, "People").stdout)
	require.Len(t, exp, 2)
	require.Equal(t, "insert", exp[0].Op)
	require.Equal(t, server.ChangeJSON{Cursor: exp[1].Cursor, Seq: exp[1].Seq, Op: "expire", PartitionKey: "p", RowKey: "old",
		Timestamp: exp[1].Timestamp, ETag: string(etag), Expiry: "2001-01-01T00:00:00.0000000Z", Commit: exp[1].Seq, Count: 1, Kind: "sweep"}, exp[1])
	t0, err := time.Parse(time.RFC3339Nano, exp[0].Timestamp)
	require.NoError(t, err)
	t1, err := time.Parse(time.RFC3339Nano, exp[1].Timestamp)
	require.NoError(t, err)
	require.True(t, t1.After(t0), "the sweep's Timestamp is its commit's")

	ok(t, "changes", "--store", store, "--disable", "People")
	require.Equal(t, exitFail, cli(t, "changes", "--store", store, "People").code)
}
