package azure_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/server"
)

// TestFeedLag measures how long a change takes from its commit to a
// follower in another process, over loopback: a store on disk (synced
// commits) served by the REST handler, writers inserting through the
// remote driver at TABLESTORE_FEED_LAG_RATE writes per second (default
// 1000), and this test binary run again as the follower, reading the
// feed with Changes and Follow through the remote driver. The lag of a
// change is its receipt time less its commit Timestamp (taken when the
// commit starts, so it includes the commit's own sync). It runs with
// TABLESTORE_FEED_LAG=1 and reports p50, p99 and the maximum; the goal
// is p50 <= 5 ms and p99 <= 50 ms.
func TestFeedLag(t *testing.T) {
	if os.Getenv("TABLESTORE_FEED_LAG") != "1" {
		t.Skip("a measurement: runs with TABLESTORE_FEED_LAG=1")
	}
	rate := envInt(t, "TABLESTORE_FEED_LAG_RATE", 1000)
	seconds := envInt(t, "TABLESTORE_FEED_LAG_SECONDS", 10)
	ctx := context.Background()
	store, err := ts.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, err := server.New(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(h)
	hs.Config = server.NewHTTPServer("", h)
	hs.Start()
	defer hs.Close()
	cs := "DefaultEndpointsProtocol=http;AccountName=" + server.DevAccount + ";AccountKey=" + server.DevKey +
		";TableEndpoint=" + hs.URL + "/" + server.DevAccount
	db, err := azure.Open(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Lag")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := tb.ChangeFeed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := rate * seconds
	cmd := exec.Command(os.Args[0], "-test.run=^TestFeedLagFollower$")
	cmd.Env = append(os.Environ(), "TABLESTORE_FEED_LAG_FOLLOW="+cs+"|"+st.Latest.String()+"|"+strconv.Itoa(total))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the follower did not start: %q", lines.Text())
	}

	// Writers: 8 goroutines, each at rate/8, keys spread over partitions.
	const writers = 8
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second * writers / time.Duration(rate))
			defer tick.Stop()
			for i := w; i < total; i += writers {
				<-tick.C
				e := &ts.Entity{PartitionKey: "p" + strconv.Itoa(i%16), RowKey: fmt.Sprintf("%08d", i), Properties: map[string]any{"N": int64(i)}}
				if err := tb.Insert(ctx, e); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var lags []time.Duration
	for len(lags) < total && lines.Scan() {
		us, err := strconv.ParseInt(lines.Text(), 10, 64)
		if err != nil {
			t.Fatalf("follower line %q", lines.Text())
		}
		lags = append(lags, time.Duration(us)*time.Microsecond)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(lags) != total {
		t.Fatalf("the follower reported %d changes of %d", len(lags), total)
	}
	slices.Sort(lags)
	p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))] }
	t.Logf("%d writes in %v (%.0f/s); commit-to-follower lag over loopback: p50 %v, p99 %v, max %v",
		total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), p(0.50), p(0.99), lags[len(lags)-1])
	if p(0.50) > 5*time.Millisecond || p(0.99) > 50*time.Millisecond {
		t.Errorf("lag over the goal (p50 <= 5ms, p99 <= 50ms)")
	}
}

// TestFeedLagFollower is TestFeedLag's follower process: it follows the
// feed and prints, per change, its lag in microseconds.
func TestFeedLagFollower(t *testing.T) {
	spec := os.Getenv("TABLESTORE_FEED_LAG_FOLLOW")
	if spec == "" {
		t.Skip("TestFeedLag's follower process")
	}
	parts := strings.SplitN(spec, "|", 3)
	from, err := ts.ParseCursor(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	total, _ := strconv.Atoi(parts[2])
	db, err := azure.Open(parts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, "ready")
	w.Flush()
	n := 0
	for c, err := range db.Table("Lag").Changes(context.Background(), ts.ChangesQuery{From: from, Follow: true}) {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(w, time.Since(c.Timestamp).Microseconds())
		if n++; n == total {
			break
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
}
