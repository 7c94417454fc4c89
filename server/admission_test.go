package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	ctx := context.Background()
	b := newBudget(1000, true) // grants 800, bodies 600
	if b.size != 800 || b.bodySize != 600 {
		t.Fatalf("size %d, bodies %d", b.size, b.bodySize)
	}
	n, ok := b.acquire(ctx, 500, true, 0)
	if !ok || n != 500 {
		t.Fatalf("body 500: %d %v", n, ok)
	}
	// Bodies hold at most their share; other reservations the rest.
	if _, ok := b.acquire(ctx, 200, true, 10*time.Millisecond); ok {
		t.Fatal("a body over the bodies' share was granted")
	}
	if n, ok := b.acquire(ctx, 300, false, 0); !ok || n != 300 {
		t.Fatalf("work 300: %d %v", n, ok)
	}
	if b.tryAcquire(1) {
		t.Fatal("tryAcquire over the budget")
	}
	// A waiter is granted when memory comes back, before its wait ends.
	got := make(chan bool)
	go func() {
		_, ok := b.acquire(ctx, 250, false, 5*time.Second)
		got <- ok
	}()
	waitUntil(t, 5*time.Second, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.waiters) == 1 },
		func() string { return "the waiter did not queue" })
	b.release(300, false)
	if !<-got {
		t.Fatal("the waiter was not granted")
	}
	// A request larger than the budget is clamped, so it runs alone.
	b.release(250, false)
	b.release(500, true)
	if n, ok := b.acquire(ctx, 1<<40, true, 0); !ok || n != 600 {
		t.Fatalf("huge body: %d %v", n, ok)
	}
	b.release(600, true)
	// A wait ended by its context holds nothing.
	b.acquire(ctx, 800, false, 0)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := b.acquire(cctx, 1, false, time.Minute); ok {
		t.Fatal("granted after the context ended")
	}
	b.release(800, false)
	if used, bodies := b.inUse(); used != 0 || bodies != 0 || len(b.waiters) != 0 {
		t.Fatalf("left: %d %d %d waiters", used, bodies, len(b.waiters))
	}
}

// TestBudgetReturnsMemory: once a burst that used an eighth of the budget
// has ended, freed memory is returned to the operating system, once.
func TestBudgetReturnsMemory(t *testing.T) {
	b := newBudget(1000, false)
	ctx := context.Background()
	b.acquire(ctx, 50, false, 0) // under an eighth: no burst
	b.release(50, false)
	b.acquire(ctx, 200, false, 0)
	b.release(200, false)
	trims := func() int { b.mu.Lock(); defer b.mu.Unlock(); return b.trims }
	waitUntil(t, 3*trimDelay, func() bool { return trims() == 1 },
		func() string { return fmt.Sprintf("%d returns of memory after a burst", trims()) })
	time.Sleep(trimDelay + 100*time.Millisecond) // sleep: time for a second return, which must not come
	if trims() != 1 {
		t.Fatalf("%d returns; want 1", trims())
	}
}

// TestUploadSlots: when every upload slot is held by a slow body, another
// upload is answered 503 ServerBusy with Retry-After after QueueWait,
// without its body being read, while reads go on being served.
func TestUploadSlots(t *testing.T) {
	s := newNetServer(t, nil, &Options{MaxConcurrentUploads: 2, QueueWait: 200 * time.Millisecond, BodyGracePeriod: 1500 * time.Millisecond})
	cred := sharedKeyCred(true)
	body := []byte(entityJSONBody("slow", "x"))
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slowRequest(s, cred, "POST", "/things", "application/json", body, 300*time.Millisecond, 10*time.Second)
		}()
	}
	defer wg.Wait()
	waitUntil(t, 2*time.Second, func() bool { return len(s.h.uploads) >= 2 },
		func() string { return "the slow bodies did not take the upload slots" })
	res := slowRequest(s, cred, "POST", "/things", "application/json", body, 100*time.Millisecond, 5*time.Second)
	if res.status != http.StatusServiceUnavailable || res.code != "ServerBusy" || res.sent > 3 || res.after > time.Second {
		t.Errorf("third upload: %+v; want 503 ServerBusy after QueueWait", res)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	if status, _, out := s.do(t, c, cred, "GET", "/Tables", nil, nil); status != http.StatusOK {
		t.Errorf("a read while uploads are full: %d %s", status, out)
	}
	// Retry-After comes with it.
	r, _ := http.NewRequest("POST", s.url+"/things", strings.NewReader(entityJSONBody("b", "1")))
	r.Header.Set("Content-Type", "application/json")
	cred.sign(r)
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("busy upload: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestMemoryBudgetBusy: a body that finds no memory within QueueWait is
// answered 503 ServerBusy; reads still find theirs; once memory is back
// the same request succeeds.
func TestMemoryBudgetBusy(t *testing.T) {
	s := newNetServer(t, nil, &Options{MemoryBudget: 1 << 20, QueueWait: 100 * time.Millisecond}) // bodies: 600 KiB
	cred := sharedKeyCred(true)
	c := &http.Client{Timeout: 5 * time.Second}
	held, ok := s.h.mem.acquire(context.Background(), 500<<10, true, 0)
	if !ok {
		t.Fatal("cannot hold memory")
	}
	big := `{"PartitionKey":"m","RowKey":"1"`
	for _, name := range []string{"A", "B", "C", "D", "E", "F", "G"} {
		big += `,"` + name + `":"` + strings.Repeat("x", 30000) + `"`
	}
	big += "}" // 210 KB, more than the 100 KiB the bodies' share has left
	if status, code, _ := s.do(t, c, cred, "POST", "/things", strings.NewReader(big), nil); status != http.StatusServiceUnavailable || code != "ServerBusy" {
		t.Errorf("body beyond the budget: %d %s", status, code)
	}
	if status, _, out := s.do(t, c, cred, "GET", "/things()", nil, nil); status != http.StatusOK {
		t.Errorf("a read with the bodies' share full: %d %s", status, out)
	}
	s.h.mem.release(held, true)
	if status, code, out := s.do(t, c, cred, "POST", "/things", strings.NewReader(big), nil); status != http.StatusCreated {
		t.Errorf("after memory came back: %d %s %.200s", status, code, out)
	}
	waitIdle(t, s.h)
}

// TestQueryPageBudget: a query page ends early, with a continuation, at
// pageBytes of JSON; following the continuations returns every entity
// once.
func TestQueryPageBudget(t *testing.T) {
	s := newNetServer(t, nil, nil)
	cred := sharedKeyCred(true)
	c := &http.Client{Timeout: 10 * time.Second}
	// 200 entities of 60 KB: 12 MB, about three pages of 4 MiB.
	for i := 0; i < 200; i += 50 {
		var ents []string
		for j := i; j < i+50; j++ {
			ents = append(ents, `{"PartitionKey":"q","RowKey":"`+strings.Repeat("0", 3-len(itoa(j)))+itoa(j)+`","A":"`+strings.Repeat("a", 30000)+`","B":"`+strings.Repeat("b", 30000)+`"}`)
		}
		if status, out := postBatch(t, s.h, batchOf(ents...), false); status != http.StatusAccepted || strings.Contains(out, "odata.error") {
			t.Fatalf("load: %d %.300s", status, out)
		}
	}
	seen, pages := 0, 0
	path := "/things()"
	for {
		r, _ := http.NewRequest("GET", s.url+path, nil)
		r.Header.Set("Accept", "application/json;odata=nometadata")
		cred.sign(r)
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		_, _ = ioCopy(&out, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("page %d: %d %.200s", pages, resp.StatusCode, out.String())
		}
		if out.Len() > pageBytes+70000 {
			t.Errorf("page %d is %d bytes", pages, out.Len())
		}
		n := strings.Count(out.String(), `"PartitionKey":"q"`)
		if n == 0 {
			t.Fatalf("page %d is empty", pages)
		}
		seen += n
		pages++
		npk, nrk := resp.Header.Get("x-ms-continuation-NextPartitionKey"), resp.Header.Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			break
		}
		path = "/things()?NextPartitionKey=" + npk + "&NextRowKey=" + nrk
	}
	if seen != 200 || pages < 3 {
		t.Fatalf("%d entities in %d pages", seen, pages)
	}
	waitIdle(t, s.h)
}

func ioCopy(w *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	var buf [32 << 10]byte
	var n int64
	for {
		m, err := resp.Body.Read(buf[:])
		w.Write(buf[:m])
		n += int64(m)
		if err != nil {
			return n, nil
		}
	}
}
