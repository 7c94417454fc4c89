package tablestoretest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/entitycsv"
)

// update is the -tablestoretest.update flag: Golden rewrites its files
// instead of comparing.
var update = flag.Bool("tablestoretest.update", false, "rewrite the golden files Golden compares tables with")

// load writes the entities of r into table, creating it if needed; an
// entity that exists is replaced. r holds JSON lines in the form
// `tablestore export` writes (Azure's JSON wire format with odata.type
// annotations, one entity a line, blank lines skipped), Azure's JSON
// otherwise laid out (a query's answer {"value":[...]}, an array of
// entities, or entities one after another), or CSV with a typed header
// (entitycsv: `tablestore export --format csv`, or Storage Explorer's
// export with its NAME@type columns). Errors name the line.
func load(ctx context.Context, db *tablestore.DB, table string, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	t, err := db.CreateTableIfNotExists(ctx, table)
	if err != nil {
		return err
	}
	put := func(e *tablestore.Entity) error {
		e.Timestamp, e.ETag = time.Time{}, ""
		return t.Upsert(ctx, e, tablestore.Replace)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case len(trimmed) == 0:
		return nil
	case trimmed[0] == '{' || trimmed[0] == '[':
		return loadJSON(data, put)
	}
	cr := entitycsv.NewReader(bytes.NewReader(data))
	for {
		e, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err == nil {
			err = put(e)
		}
		if err != nil {
			return fmt.Errorf("csv: %w", err)
		}
	}
}

// loadJSON puts every entity of data: JSON values one after another,
// each an entity, an array of entities, or an object whose "value" is
// one (a query's answer).
func loadJSON(data []byte, put func(*tablestore.Entity) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		at := dec.InputOffset()
		var v json.RawMessage
		if err := dec.Decode(&v); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("line %d: %w", lineAt(data, dec.InputOffset()), err)
		}
		rest := data[at:]
		line := lineAt(data, at+int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))))
		entities, where := []json.RawMessage{v}, fmt.Sprintf("line %d", line)
		var page struct {
			Value        []json.RawMessage `json:"value"`
			PartitionKey *string
		}
		switch {
		case v[0] == '[':
			if err := json.Unmarshal(v, &entities); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		case json.Unmarshal(v, &page) == nil && page.Value != nil && page.PartitionKey == nil:
			entities = page.Value
		}
		for i, raw := range entities {
			var e tablestore.Entity
			err := e.UnmarshalJSON(raw)
			if err == nil {
				err = put(&e)
			}
			if err != nil && v[0] == '{' && len(page.Value) == 0 {
				return fmt.Errorf("%s: %w", where, err)
			} else if err != nil {
				return fmt.Errorf("%s, entity %d: %w", where, i+1, err)
			}
		}
	}
}

// lineAt is the line of data that offset falls on, from 1.
func lineAt(data []byte, offset int64) int {
	return 1 + bytes.Count(data[:min(offset, int64(len(data)))], []byte{'\n'})
}

// dump writes table's entities as `tablestore export` does: one JSON
// line each, in key order, without Timestamp and ETag.
func dump(ctx context.Context, db *tablestore.DB, table string) ([]byte, error) {
	var b bytes.Buffer
	for e, err := range db.Table(table).Query(ctx, tablestore.Query{}) {
		if err != nil {
			return nil, err
		}
		e.Timestamp, e.ETag = time.Time{}, ""
		j, err := e.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// golden compares table with the file at path, or with
// -tablestoretest.update writes the table there.
func golden(t testing.TB, db *tablestore.DB, table, path string) {
	t.Helper()
	got, err := dump(context.Background(), db, table)
	if err != nil {
		t.Fatalf("tablestoretest: golden %s: read table %s: %v", path, table, err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("tablestoretest: golden: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("tablestoretest: golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tablestoretest: golden file %s does not exist; run the test with -tablestoretest.update to write it", path)
	}
	if err != nil {
		t.Fatalf("tablestoretest: golden: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tablestoretest: table %s differs from %s (-tablestoretest.update rewrites it):\n%s", table, path, lineDiff(string(want), string(got)))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+), at
// most 20 of them.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range w {
		inW[l]++
	}
	for _, l := range g {
		inG[l]++
	}
	var b strings.Builder
	n := 0
	for _, l := range w {
		if inG[l] > 0 {
			inG[l]--
			continue
		}
		if n++; n <= 20 {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if inW[l] > 0 {
			inW[l]--
			continue
		}
		if n++; n <= 20 {
			b.WriteString("+ " + l + "\n")
		}
	}
	if n == 0 {
		b.WriteString("(same lines in another order)\n")
	} else if n > 20 {
		fmt.Fprintf(&b, "... and %d more lines\n", n-20)
	}
	return b.String()
}

// Load writes the entities of r into table (created if needed): JSON
// lines as `tablestore export` writes them, Azure's JSON wire format
// with "Name@odata.type" annotations, so every property keeps its type.
// Entities that exist are replaced. It fails the test on error, naming
// the line.
func (s *Server) Load(table string, r io.Reader) {
	s.t.Helper()
	if err := s.kit.Load(table, r); err != nil {
		s.t.Fatalf("tablestoretest: load %s: %v", table, err)
	}
}

// Golden compares table's entities, in the form `tablestore export`
// writes (Timestamps and ETags left out), with the file at path, and
// fails t with the lines that differ. With the -tablestoretest.update
// flag (go test ./... -tablestoretest.update) it writes the file
// instead.
func (s *Server) Golden(t testing.TB, table, path string) {
	t.Helper()
	golden(t, s.DB(), table, path)
}

// Load writes JSON lines, in the form Server.Load takes, into table of
// db (created if needed), replacing entities that exist. The error names
// the line. `tablestore serve --seed` loads its files with it.
func Load(ctx context.Context, db *tablestore.DB, table string, r io.Reader) error {
	return load(ctx, db, table, r)
}
