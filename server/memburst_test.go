package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

// The memory burst: 64 clients each send a 4 MiB $batch at once to a
// handler with default options, in a process tuned as tablestore serve
// tunes it (RecommendedMemoryLimit). The process's peak resident memory
// must stay under the budget plus 100 MB, and fall under 100 MB within
// 30 s of the burst's end. The burst runs in a child process of the test
// binary, so nothing else the tests did counts. TABLESTORE_LONG_MEMORY=N
// repeats the burst N times, each into a new table (each must settle),
// for a long form. The store's block cache, filled by reads, is memory of
// its own (up to tablestore.Options.CacheSize, allocated outside the Go
// heap): these bursts only write.
//
// Reproduce: go test ./server -run TestMemoryBurst -v
const (
	memChildEnv  = "TABLESTORE_MEMBURST_CHILD"
	memLongEnv   = "TABLESTORE_LONG_MEMORY"
	burstClients = 64
	mb           = 1000 * 1000
)

func TestMemoryBurst(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		memoryBurstChild(t)
		return
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory")
	}
	if testing.Short() {
		t.Skip("short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryBurst$", "-test.v", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), memChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var rounds int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "memheap:") {
			t.Log(line)
		}
		if !strings.HasPrefix(line, "memburst:") {
			continue
		}
		t.Log(line)
		f := fields(line)
		budget, peak, settled := f["budget"], f["peak"], f["settled"]
		if f["ok"] != float64(burstClients) {
			t.Errorf("%v of %d batches committed", f["ok"], burstClients)
		}
		if peak > budget+100*mb {
			t.Errorf("peak resident memory %.0f MB is over the budget %.0f MB + 100 MB", peak/mb, budget/mb)
		}
		if settled >= 100*mb {
			t.Errorf("resident memory %.0f MB 30 s after the burst; want under 100 MB", settled/mb)
		}
		rounds++
	}
	if rounds == 0 {
		t.Fatalf("the child reported nothing:\n%s", out)
	}
}

// fields reads "key=value" words, values as numbers (a trailing "s" or
// "MB" is dropped).
func fields(line string) map[string]float64 {
	m := map[string]float64{}
	for _, w := range strings.Fields(line) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			continue
		}
		v = strings.TrimSuffix(v, "s")
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			m[k] = x
		}
	}
	return m
}

// memoryBurstChild runs the bursts and prints one memburst line each.
func memoryBurstChild(t *testing.T) {
	debug.SetMemoryLimit(RecommendedMemoryLimit(nil))
	db, err := tablestore.Open(t.TempDir(), &tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := newNetServer(t, db, nil)
	budget := Options{}.withDefaults().MemoryBudget
	body := buildBatch(t, "p00", 100, DefaultMaxBodyBytes)
	// Each client patches its own PartitionKey into the shared body as it
	// streams, so the clients hold one copy between them.
	var offsets []int
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`"PartitionKey":"p00"`))
		if j < 0 {
			break
		}
		offsets = append(offsets, i+j+len(`"PartitionKey":"p`))
		i += j + 1
	}
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv(memLongEnv)); err == nil && n > 0 {
		rounds = n
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: burstClients, MaxIdleConnsPerHost: burstClients}}
	for round := 0; round < rounds; round++ {
		if round > 0 {
			// A new table for the round: the same keys insert again.
			if err := db.DeleteTable(context.Background(), "things"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateTable(context.Background(), "things"); err != nil {
				t.Fatal(err)
			}
		}
		resetPeakRSS(t)
		idle := rss(t, "VmRSS")
		{
			heap := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
			metrics.Read(heap)
			fmt.Printf("memheap: idle_rss=%d go_not_released=%d go_free=%d\n", idle, heap[0].Value.Uint64()-heap[1].Value.Uint64(), heap[2].Value.Uint64())
		}
		var ok, busy atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for c := 0; c < burstClients; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				pk := fmt.Sprintf("%02d", c) // a table per round keeps the keys apart
				for attempt := 0; attempt < 120; attempt++ {
					r, _ := http.NewRequest("POST", s.url+"/$batch", &patchReader{b: body, offsets: offsets, patch: pk})
					r.ContentLength = int64(len(body))
					r.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
					sharedKeyCred(true).sign(r)
					resp, err := client.Do(r)
					if err != nil {
						// A refused upload's connection is closed while the
						// client still sends: it may see the reset before
						// the 503. Clients retry both (azcore does).
						busy.Add(1)
						time.Sleep(time.Second) // sleep: a client's back-off before it retries
						continue
					}
					out, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusServiceUnavailable {
						busy.Add(1)
						time.Sleep(time.Second) // sleep: Retry-After, as a client waits
						continue
					}
					if resp.StatusCode != http.StatusAccepted || bytes.Contains(out, []byte("odata.error")) {
						t.Errorf("client %d: %d %.300s", c, resp.StatusCode, out)
						return
					}
					ok.Add(1)
					return
				}
				t.Errorf("client %d: still busy after 120 attempts", c)
			}(c)
		}
		stop := make(chan struct{})
		var peakLive, peakGo, peakReserved atomic.Uint64
		go func() {
			samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}}
			for {
				metrics.Read(samples)
				maxStore(&peakLive, samples[0].Value.Uint64())
				maxStore(&peakGo, samples[1].Value.Uint64())
				used, _ := s.h.mem.inUse()
				maxStore(&peakReserved, uint64(used))
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		wg.Wait()
		close(stop)
		burst := time.Since(start)
		peak := rss(t, "VmHWM")
		client.CloseIdleConnections()
		var settled int64
		settleStart := time.Now()
		for {
			settled = rss(t, "VmRSS")
			if settled < 100*mb || time.Since(settleStart) > 30*time.Second {
				break
			}
			time.Sleep(250 * time.Millisecond) // sleep: the polling interval of the process's RSS, which has no event
		}
		used, _ := s.h.mem.inUse()
		heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		metrics.Read(heap)
		fmt.Printf("memheap: settled_heap_objects=%d settled_go_mapped=%d settled_go_released=%d\n",
			heap[0].Value.Uint64(), heap[1].Value.Uint64(), heap[2].Value.Uint64())
		fmt.Printf("memburst: round=%d budget=%d limit=%d idle=%d peak=%d settled=%d settle=%.1fs burst=%.1fs ok=%d busy=%d "+
			"peak_reserved=%d peak_live_heap=%d peak_go=%d reserved_after=%d\n",
			round, budget, RecommendedMemoryLimit(nil), idle, peak, settled, time.Since(settleStart).Seconds(), burst.Seconds(),
			ok.Load(), busy.Load(), peakReserved.Load(), peakLive.Load(), peakGo.Load(), used)
	}
	// The batches are all there.
	n := 0
	for _, err := range db.Table("things").Query(context.Background(), tablestore.Query{Select: []string{"RowKey"}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if want := burstClients * 100; n != want {
		t.Errorf("%d entities stored, want %d", n, want)
	}
}

func maxStore(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// patchReader reads b with patch written over it at each offset.
type patchReader struct {
	b       []byte
	offsets []int
	patch   string
	off     int
}

func (p *patchReader) Read(buf []byte) (int, error) {
	if p.off >= len(p.b) {
		return 0, io.EOF
	}
	n := copy(buf, p.b[p.off:])
	for _, o := range p.offsets {
		for k := 0; k < len(p.patch); k++ {
			if i := o + k - p.off; i >= 0 && i < n {
				buf[i] = p.patch[k]
			}
		}
	}
	p.off += n
	return n, nil
}

// rss reads a /proc/self/status field (VmRSS, VmHWM) in bytes.
func rss(t testing.TB, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakRSS sets VmHWM to the current resident size.
func resetPeakRSS(t testing.TB) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak: %v", err)
	}
}

// BenchmarkBatch4MiB is one 4 MiB $batch of 100 inserts through the
// handler: its time and allocations (bodyWorkFactor's source).
//
// Reproduce: go test ./server -run XXX -bench Batch4MiB -benchmem -benchtime 30x
func BenchmarkBatch4MiB(b *testing.B) { benchmarkBatch(b, DefaultMaxBodyBytes) }

// BenchmarkBatch100 is one $batch of 100 inserts of about 300 bytes
// each, a bulk load's request, through the handler: the server's cost
// per loaded entity.
//
// Reproduce: go test ./server -run XXX -bench 'Batch100$' -benchmem
func BenchmarkBatch100(b *testing.B) {
	benchmarkBatch(b, 60_000)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/entity")
}

func benchmarkBatch(b *testing.B, size int) {
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	h := newNetServer(b, db, &Options{Anonymous: true}).h
	body := buildBatch(b, "p00", 100, size)
	var offsets []int
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`"PartitionKey":"p00"`))
		if j < 0 {
			break
		}
		offsets = append(offsets, i+j+len(`"PartitionKey":"p`))
		i += j + 1
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%100 == 0 {
			b.StopTimer()
			if err := db.DeleteTable(context.Background(), "things"); err != nil {
				b.Fatal(err)
			}
			if _, err := db.CreateTable(context.Background(), "things"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		r := httptest.NewRequest("POST", "/devstoreaccount1/$batch", &patchReader{b: body, offsets: offsets, patch: fmt.Sprintf("%02d", i%100)})
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted || bytes.Contains(w.Body.Bytes(), []byte("odata.error")) {
			b.Fatalf("%d %.300s", w.Code, w.Body.String())
		}
	}
}
