package main

// -encryption: tablestore with Options.Encryption against tablestore
// without it, on the same data set: the unsynced batch-100 load, point
// gets and paging, each read workload run -rounds times with the two
// stores interleaved (best round reported). The goal is encrypted >=
// 0.85x plain on all three.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/tablestore/tablestore"
)

// encSide is one of the two stores of -encryption.
type encSide struct {
	name string
	enc  *tablestore.Encryption
	db   *tablestore.DB
	t    *tablestore.Table
}

func runEncryption(ctx context.Context, c config, dataDir string) error {
	sc := c.scale
	sides := []*encSide{{name: "plain"}, {name: "encrypted", enc: &tablestore.Encryption{Key: bytes.Repeat([]byte{0x5a}, 32)}}}
	open := func(s *encSide) error {
		db, err := tablestore.Open(filepath.Join(dataDir, "enc-"+s.name), &tablestore.Options{NoSync: true, CacheSize: c.cacheSize, BlockSize: c.blockSize, Encryption: s.enc})
		if err != nil {
			return err
		}
		s.db = db
		s.t = db.Table(benchTable)
		return nil
	}
	load := map[string]float64{}
	for _, s := range sides {
		if err := open(s); err != nil {
			return err
		}
		if _, err := s.db.CreateTable(ctx, benchTable); err != nil {
			return err
		}
		recs := make([]record, partitionSize)
		start := time.Now()
		var elapsed time.Duration
		for p := range sc.partitions() {
			for r := range recs {
				genRecord(&recs[r], p*partitionSize+r)
			}
			for i := 0; i < len(recs); i += 100 {
				actions := make([]tablestore.TransactionAction, 0, 100)
				for j := i; j < min(i+100, len(recs)); j++ {
					actions = append(actions, tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: recordEntity(&recs[j])})
				}
				t0 := time.Now()
				if err := s.t.SubmitTransaction(ctx, actions); err != nil {
					return err
				}
				elapsed += time.Since(t0)
			}
		}
		load[s.name] = float64(sc.Entities) / elapsed.Seconds()
		fmt.Fprintf(os.Stderr, "encryption: %s loaded %d entities in %s\n", s.name, sc.Entities, time.Since(start).Round(time.Millisecond))
		// Reopen, so the reads start from the files with a cold cache.
		if err := s.db.Close(); err != nil {
			return err
		}
		if err := open(s); err != nil {
			return err
		}
		defer s.db.Close()
	}
	gets := map[string]float64{}
	paging := map[string]float64{}
	rounds := max(c.rounds, 1)
	for round := range rounds {
		for k := range sides {
			s := sides[(k+round)%len(sides)]
			rng := rand.New(rand.NewPCG(uint64(round), 7))
			for range 2000 { // warm-up
				i := rng.IntN(sc.Entities)
				if _, err := s.t.Get(ctx, partitionKey(i/partitionSize), rowKey(i%partitionSize), nil); err != nil {
					return err
				}
			}
			t0 := time.Now()
			for range sc.Gets {
				i := rng.IntN(sc.Entities)
				if _, err := s.t.Get(ctx, partitionKey(i/partitionSize), rowKey(i%partitionSize), nil); err != nil {
					return err
				}
			}
			gets[s.name] = max(gets[s.name], float64(sc.Gets)/time.Since(t0).Seconds())
			t0 = time.Now()
			n, token := 0, ""
			for range sc.Pages {
				p, err := s.t.QueryPage(ctx, tablestore.Query{Top: 1000, Continuation: token})
				if err != nil {
					return err
				}
				n += len(p.Entities)
				token = p.Continuation
				if token == "" {
					break
				}
			}
			if want := min(sc.Pages*1000, sc.Entities); n != want {
				return fmt.Errorf("%s: paging read %d entities, want %d", s.name, n, want)
			}
			paging[s.name] = max(paging[s.name], float64(n)/time.Since(t0).Seconds())
		}
	}
	// The online rewrite of the encrypted store (Rekey with Rewrite),
	// with a reader paging through it meanwhile.
	enc := sides[1]
	size := dirBytes(filepath.Join(dataDir, "enc-"+enc.name))
	readerDone := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		token := ""
		for {
			select {
			case <-stop:
				readerDone <- nil
				return
			default:
			}
			p, err := enc.t.QueryPage(ctx, tablestore.Query{Top: 1000, Continuation: token})
			if err != nil {
				readerDone <- err
				return
			}
			token = p.Continuation
		}
	}()
	t0 := time.Now()
	files, err := enc.db.Rekey(ctx, &tablestore.RekeyOptions{Rewrite: true})
	rewrite := time.Since(t0)
	close(stop)
	if rerr := <-readerDone; err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	fmt.Printf("encryption at rest, %d entities, best of %d rounds (gets, paging)\n\n", sc.Entities, rounds)
	fmt.Printf("%-22s %14s %14s %8s\n", "workload", "plain", "encrypted", "ratio")
	for _, row := range []struct {
		name string
		m    map[string]float64
	}{{"load-nosync (ent/s)", load}, {"get (gets/s)", gets}, {"paging (ent/s)", paging}} {
		ratio := row.m["encrypted"] / row.m["plain"]
		fmt.Printf("%-22s %14.0f %14.0f %7.2fx\n", row.name, row.m["plain"], row.m["encrypted"], ratio)
	}
	fmt.Printf("\nrewrite (Rekey, Rewrite) of the encrypted store while paging: %d files, %.1f MB in %s: %.0f entities/s, %.1f MB/s\n",
		files, float64(size)/1e6, rewrite.Round(time.Millisecond), float64(sc.Entities)/rewrite.Seconds(), float64(size)/1e6/rewrite.Seconds())
	return nil
}

// dirBytes is the size of the regular files directly in dir.
func dirBytes(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}
