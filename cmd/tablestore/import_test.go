package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// typedLines are JSON lines with every EDM type and the awkward cases:
// quotes, commas, line breaks, empty and spaced strings, a property
// stored with two types, an entity without properties, non-ASCII keys.
var typedLines = []string{
	`{"PartitionKey":"a","RowKey":"1","B":true,"D":2.5,"E":"","G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833","I":-5,"L@odata.type":"Edm.Int64","L":"9223372036854775807","N@odata.type":"Edm.Double","N":"NaN","S":"x, \"q\"\nline","T@odata.type":"Edm.DateTime","T":"2026-01-02T03:04:05.1234567Z","X@odata.type":"Edm.Binary","X":"AQID"}`,
	`{"PartitionKey":"a","RowKey":"2","D":1e+300,"I@odata.type":"Edm.Int64","I":"7","P@odata.type":"Edm.Double","P":"-Infinity","S":"  spaced  ","X@odata.type":"Edm.Binary","X":""}`,
	`{"PartitionKey":"b","RowKey":"1"}`,
	`{"PartitionKey":"b, c","RowKey":"é ü \"z\"","D":-0.125,"S":"日本"}`,
}

func TestJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in := writeFile(t, dir, "in.jsonl", strings.Join(typedLines, "\n")+"\n")
	ok(t, "import", "--store", store, "First", in)
	out1 := filepath.Join(dir, "out1.jsonl")
	ok(t, "export", "--store", store, "First", out1)
	ok(t, "import", "--store", store, "Second", out1)
	out2 := filepath.Join(dir, "out2.jsonl")
	ok(t, "export", "--store", store, "Second", out2)
	b1, err := os.ReadFile(out1)
	require.NoError(t, err)
	b2, err := os.ReadFile(out2)
	require.NoError(t, err)
	require.Equal(t, string(b1), string(b2))
	// The input is already in export's form (properties in name order).
	require.Equal(t, strings.Join(typedLines, "\n")+"\n", string(b1))

	// --system adds the engine's fields.
	r := ok(t, "export", "--store", store, "Second", "--system")
	require.Equal(t, len(typedLines), strings.Count(r.stdout, `"odata.etag":`))
	require.Equal(t, len(typedLines), strings.Count(r.stdout, `"Timestamp":`))
}

func TestCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in := writeFile(t, dir, "in.jsonl", strings.Join(typedLines, "\n")+"\n")
	ok(t, "import", "--store", store, "First", in)
	csv1 := filepath.Join(dir, "out1.csv")
	ok(t, "export", "--store", store, "First", csv1)
	b, err := os.ReadFile(csv1)
	require.NoError(t, err)
	require.Equal(t, `PartitionKey,RowKey,B:Edm.Boolean,D:Edm.Double,E:Edm.String,G:Edm.Guid,I:Edm.Int32,I:Edm.Int64,L:Edm.Int64,N:Edm.Double,P:Edm.Double,S:Edm.String,T:Edm.DateTime,X:Edm.Binary
a,1,true,2.5,"",c9da6455-213d-42c9-9a79-3e9149a57833,-5,,9223372036854775807,NaN,,"x, ""q""
line",2026-01-02T03:04:05.1234567Z,AQID
a,2,,1e+300,,,,7,,,-Infinity,"  spaced  ",,""
b,1,,,,,,,,,,,,
"b, c","é ü ""z""",,-0.125,,,,,,,,日本,,
`, string(b))

	ok(t, "import", "--store", store, "Second", csv1)
	csv2 := filepath.Join(dir, "out2.csv")
	ok(t, "export", "--store", store, "Second", csv2)
	b2, err := os.ReadFile(csv2)
	require.NoError(t, err)
	require.Equal(t, string(b), string(b2))
	j1 := ok(t, "export", "--store", store, "First").stdout
	j2 := ok(t, "export", "--store", store, "Second").stdout
	require.Equal(t, j1, j2)

	// Fixed columns: a property without a column fails the export.
	r := cli(t, "export", "--store", store, "First", "--format", "csv", "--columns", "PartitionKey,RowKey,S")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "has no column")
	r = ok(t, "export", "--store", store, "First", "--format", "csv", "--columns", "PartitionKey,RowKey,S", "--filter", "PartitionKey eq 'b'")
	require.Equal(t, "PartitionKey,RowKey,S:Edm.String\nb,1,\n", r.stdout)
}

// TestCSVSpreadsheetSafe checks --csv-spreadsheet-safe: cells a
// spreadsheet would run as formulas are written after a quote, numbers
// stay, and the default export keeps every cell exact.
func TestCSVSpreadsheetSafe(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in := writeFile(t, dir, "in.jsonl", `{"PartitionKey":"=1+2","RowKey":"@r","I":-5,"S":"+cmd|' /C calc'!A0","T":"\tx"}`+"\n")
	ok(t, "import", "--store", store, "Sheet", in)
	r := ok(t, "export", "--store", store, "Sheet", "--format", "csv")
	require.Equal(t, "PartitionKey,RowKey,I:Edm.Int32,S:Edm.String,T:Edm.String\n=1+2,@r,-5,+cmd|' /C calc'!A0,\tx\n", r.stdout)
	r = ok(t, "export", "--store", store, "Sheet", "--format", "csv", "--csv-spreadsheet-safe")
	require.Equal(t, "PartitionKey,RowKey,I:Edm.Int32,S:Edm.String,T:Edm.String\n'=1+2,'@r,-5,'+cmd|' /C calc'!A0,'\tx\n", r.stdout)
	r = cli(t, "export", "--store", store, "Sheet", "--csv-spreadsheet-safe")
	require.Equal(t, exitUsage, r.code, "JSON has no formulas to neutralize")
	require.Contains(t, r.stderr, "for CSV only")
}

func TestCSVBadInput(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	for _, tc := range []struct {
		csv  string
		code int
		err  string
	}{
		{"PartitionKey,RowKey,Age:Edm.Int32\na,1,5\na,2,five\na,3,6\n", exitFail, "line 3: InvalidInput"},
		{"PartitionKey,RowKey,Age:Edm.Int32\na,1,5\na,2,3000000000\n", exitFail, "line 3: InvalidInput"},
		{"PartitionKey,RowKey,When:Edm.DateTime\na,1,2026-01-01T00:00:00Z\na,2,1500-01-01T00:00:00Z\n", exitFail, "line 3: OutOfRangeInput"},
		{"PartitionKey,RowKey,Name\na,1,x\na,2,\"x\"y\n", exitFail, "line 3: InvalidInput: malformed csv"},
		{"PartitionKey,RowKey,Name\na,1,x\na,2\n", exitFail, "line 3: InvalidInput: the row has 2 fields, the header 3"},
		{"PartitionKey,RowKey,Name\na,1,\"x\nb,2,y\n", exitFail, "line 2: InvalidInput: malformed csv: a quoted field is not closed"},
		{"PartitionKey,Name\na,x\n", exitFail, "line 1: header: PartitionKey and RowKey columns are required"},
		{"PartitionKey,RowKey,Age:Edm.Integer\n", exitFail, `unknown type "Edm.Integer"`},
	} {
		in := writeFile(t, dir, "in.csv", tc.csv)
		r := cli(t, "import", "--store", store, "People", in)
		require.Equal(t, tc.code, r.code, tc.csv)
		require.Contains(t, r.stderr, tc.err, tc.csv)
		if tc.code == exitFail && strings.Contains(tc.err, "line 3") {
			// Line 2 is committed, nothing at or after line 3.
			require.Equal(t, []string{"a/1"}, keys(readEntities(t, store, "People")), tc.csv)
			require.Contains(t, r.stderr, "every line up to 2 committed or rejected, nothing at or after line 3")
		}
		ok(t, "tables", "--store", store, "delete", "--if-not-exists", "People")
		os.Remove(in + resumeSuffix)
	}
}

// badLines mixes good lines with each kind of bad one; bad[i] is the
// line number and code of each bad line.
func badLines() (string, []string) {
	big := strings.Repeat("x", 64<<10+1)
	lines := []string{
		`{"PartitionKey":"p","RowKey":"1","V":1}`,
		`{"PartitionKey":"p","RowKey":"2","V":2}`,
		`{"PartitionKey":"p","RowKey":"3","V":`, // malformed
		`{"PartitionKey":"p","RowKey":"4","V":4}`,
		`{"PartitionKey":"p","RowKey":"5","V":"` + big + `"}`, // breaks a limit, inside a group
		`{"PartitionKey":"p","RowKey":"6","V":6}`,
		`{"PartitionKey":"q","RowKey":"old","V":99}`, // exists already: insert rejects it
		`{"PartitionKey":"q","RowKey":"7","V":7}`,
		`{"PartitionKey":"q","RowKey":"8","V@odata.type":"Edm.Int64","V":"x"}`, // wrong type
		`{"PartitionKey":"q","RowKey":"9","V":9}`,
	}
	return strings.Join(lines, "\n") + "\n", []string{
		"line 3: InvalidInput", "line 5: PropertyValueTooLarge", "line 7: EntityAlreadyExists", "line 9: InvalidInput"}
}

func TestImportBadInput(t *testing.T) {
	for _, mode := range [][]string{nil, {"--transactions"}} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) { testImportBadInput(t, mode) })
	}
}

func testImportBadInput(t *testing.T, mode []string) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	content, bad := badLines()
	in := writeFile(t, dir, "in.jsonl", content)
	ok(t, "tables", "--store", store, "create", "People")
	ok(t, "put", "--store", store, "People", `{"PartitionKey":"q","RowKey":"old","V":1}`)
	before := readEntities(t, store, "People")

	// Stop at the first bad line: lines 1-2 committed, nothing after.
	r := cli(t, append([]string{"import", "--store", store, "People", in}, mode...)...)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, bad[0])
	require.Contains(t, r.stderr, "nothing at or after line 3; run again with --resume to continue from line 3")
	require.Equal(t, []string{"p/1", "p/2", "q/old"}, keys(readEntities(t, store, "People")))

	// Resume with --skip-bad: everything good goes in, each bad line is
	// reported and set aside, the stored entity rejected by line 7 is
	// unchanged.
	skip := filepath.Join(dir, "rejected.jsonl")
	r = cli(t, append([]string{"import", "--store", store, "People", in, "--resume", "--skip-bad", skip}, mode...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, b := range bad {
		require.Contains(t, r.stderr, "rejected "+b+":")
	}
	require.Contains(t, r.stderr, "4 rejected")
	got := readEntities(t, store, "People")
	require.Equal(t, []string{"p/1", "p/2", "p/4", "p/6", "q/7", "q/9", "q/old"}, keys(got))
	old := got[len(got)-1]
	require.Equal(t, before[0].ETag, old.ETag)
	require.Equal(t, int32(1), old.Properties["V"])
	rejected, err := os.ReadFile(skip)
	require.NoError(t, err)
	lines := strings.Split(content, "\n")
	require.Equal(t, strings.Join([]string{lines[2], lines[4], lines[6], lines[8]}, "\n")+"\n", string(rejected))
	_, err = os.Stat(in + resumeSuffix)
	require.ErrorIs(t, err, os.ErrNotExist, "a finished import removes its resume file")

	// A new run empties the skip file first; into an empty table, line 7
	// goes in.
	ok(t, "tables", "--store", store, "delete", "People")
	r = cli(t, append([]string{"import", "--store", store, "People", in, "--skip-bad", skip}, mode...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "3 rejected")
	require.Equal(t, 7, len(readEntities(t, store, "People")))
	rejected, err = os.ReadFile(skip)
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{lines[2], lines[4], lines[8]}, "\n")+"\n", string(rejected))
}

func TestImportResumeFile(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in := writeFile(t, dir, "in.jsonl", `{"PartitionKey":"p","RowKey":"1"}`+"\n"+`{"PartitionKey":"p","RowKey":"2","V":`+"\n")
	r := cli(t, "import", "--store", store, "People", in)
	require.Equal(t, exitFail, r.code)
	// A leftover resume file blocks a fresh start.
	r = cli(t, "import", "--store", store, "People", in)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "add --resume to continue it, or delete the file")
	// Resume settings must match.
	r = cli(t, "import", "--store", store, "People", in, "--resume", "--mode", "upsert")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "resume with the same")
	// Fix the bad line (at or after the resume point) and resume.
	require.NoError(t, os.WriteFile(in, []byte(`{"PartitionKey":"p","RowKey":"1"}`+"\n"+`{"PartitionKey":"p","RowKey":"2","V":2}`+"\n"), 0o644))
	ok(t, "import", "--store", store, "People", in, "--resume")
	require.Equal(t, []string{"p/1", "p/2"}, keys(readEntities(t, store, "People")))
	r = cli(t, "import", "--store", store, "People", in, "--resume")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "nothing to resume")
	// Standard input: no resume file.
	r = cliInput(t, `{"PartitionKey":"p","RowKey":"3"}`+"\n", "import", "--store", store, "People", "-")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Len(t, readEntities(t, store, "People"), 3)
}

// TestImportSplitsGroups checks the transaction boundaries: a RowKey
// repeated inside a partition's run (upsert: the later line wins) and
// groups that reach 100 actions or 4 MiB.
func TestImportSplitsGroups(t *testing.T) {
	for _, mode := range [][]string{nil, {"--transactions"}} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) { testImportSplitsGroups(t, mode) })
	}
}

func testImportSplitsGroups(t *testing.T, mode []string) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	var b strings.Builder
	fmt.Fprintln(&b, `{"PartitionKey":"p","RowKey":"1","V":1}`)
	fmt.Fprintln(&b, `{"PartitionKey":"p","RowKey":"1","V":2}`)
	// 250 entities of about 60 KiB in one partition: over 4 MiB per 100.
	big := strings.Repeat("y", 30<<10) // 60 KiB by Azure's UTF-16 measure
	for i := range 250 {
		fmt.Fprintf(&b, `{"PartitionKey":"big","RowKey":"%03d","S":"%s"}`+"\n", i, big)
	}
	in := writeFile(t, dir, "in.jsonl", b.String())
	ok(t, append([]string{"import", "--store", store, "People", in, "--mode", "upsert"}, mode...)...)
	got := readEntities(t, store, "People")
	require.Len(t, got, 251)
	require.Equal(t, "p", got[250].PartitionKey)
	require.Equal(t, int32(2), got[250].Properties["V"])
}

func TestCopy(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	in := writeFile(t, dir, "in.jsonl", strings.Join(typedLines, "\n")+"\n")
	ok(t, "import", "--store", src, "People", in)
	var b strings.Builder
	for i := range 1234 {
		fmt.Fprintf(&b, `{"PartitionKey":"p%02d","RowKey":"%05d","N":%d}`+"\n", i%7, i, i)
	}
	ok(t, "import", "--store", src, "Numbers", writeFile(t, dir, "n.jsonl", b.String()))
	ok(t, "tables", "--store", src, "create", "Empty")

	r := ok(t, "copy", src, dst)
	require.Contains(t, r.stderr, "copy: 3 table(s), 1,238 entities")
	require.Equal(t, ok(t, "tables", "--store", src, "list").stdout, ok(t, "tables", "--store", dst, "list").stdout)
	for _, table := range []string{"People", "Numbers", "Empty"} {
		require.Equal(t, ok(t, "export", "--store", src, table).stdout, ok(t, "export", "--store", dst, table).stdout, table)
	}
	// Copying again with insert fails at the first entity; upsert is idempotent.
	r = cli(t, "copy", src, dst, "Numbers")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "EntityAlreadyExists")
	ok(t, "copy", src, dst, "Numbers", "--mode", "upsert")
	require.Equal(t, ok(t, "export", "--store", src, "Numbers").stdout, ok(t, "export", "--store", dst, "Numbers").stdout)
	// A filtered copy of one table into a third store.
	third := filepath.Join(dir, "third")
	ok(t, "copy", src, third, "Numbers", "--filter", "PartitionKey eq 'p03'")
	require.Equal(t, ok(t, "export", "--store", src, "Numbers", "--filter", "PartitionKey eq 'p03'").stdout,
		ok(t, "export", "--store", third, "Numbers").stdout)
	r = cli(t, "copy", src, third, "Missing")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "TableNotFound")
}

// TestInterruptResume runs the built command on a file, interrupts it
// with SIGINT part-way, resumes it, and finds every entity exactly once.
func TestInterruptResume(t *testing.T) {
	binary := buildBinary(t)
	dir := t.TempDir()
	// One entity per partition, so each is its own synced commit and the
	// import takes long enough to interrupt. If it still finishes before
	// the signal, the file grows and the test tries again.
	for n := 2_000; ; n *= 4 {
		if n > 200_000 {
			t.Fatal("the import always finished before it could be interrupted")
		}
		store := filepath.Join(dir, fmt.Sprintf("store%d", n))
		in := filepath.Join(dir, fmt.Sprintf("in%d.jsonl", n))
		f, err := os.Create(in)
		require.NoError(t, err)
		w := bufio.NewWriter(f)
		for i := range n {
			fmt.Fprintf(w, `{"PartitionKey":"p%07d","RowKey":"r","I":%d}`+"\n", i, i)
		}
		require.NoError(t, w.Flush())
		require.NoError(t, f.Close())

		cmd := exec.Command(binary, "import", "--store", store, "People", in)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		// Wait (bounded) until some commits are recorded in the resume
		// file, which announces itself with no event, then interrupt
		// (also when none is recorded in time).
		var st resumeState
		_ = waitForCondition(30*time.Second, 5*time.Millisecond, func() bool {
			b, err := os.ReadFile(in + resumeSuffix)
			return err == nil && json.Unmarshal(b, &st) == nil && st.Committed > 0
		})
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		err = cmd.Wait()
		if err == nil {
			t.Logf("%d entities imported before the interrupt; trying a larger file", n)
			continue
		}
		require.Equal(t, exitFail, cmd.ProcessState.ExitCode(), stderr.String())
		require.Contains(t, stderr.String(), "interrupted: every line up to ")
		b, err := os.ReadFile(in + resumeSuffix)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &st))
		require.Contains(t, stderr.String(), fmt.Sprintf("every line up to %d committed", st.Line))
		first := readEntities(t, store, "People")
		require.Equal(t, int(st.Committed), len(first), "the resume file counts exactly what is stored")
		require.Equal(t, st.Line, len(first), "one entity per line")
		if len(first) == n {
			// Every line was read before the interrupt, and the
			// commit in flight wrote the rest.
			t.Logf("all %d entities committed by the interrupt's last commit; trying a larger file", n)
			continue
		}
		t.Logf("interrupted after %d of %d entities", len(first), n)

		// Resume (insert mode: a line imported twice would fail).
		out, err := exec.Command(binary, "import", "--store", store, "People", in, "--resume").CombinedOutput()
		require.NoError(t, err, string(out))
		all := readEntities(t, store, "People")
		require.Len(t, all, n)
		for i, e := range all {
			require.Equal(t, fmt.Sprintf("p%07d", i), e.PartitionKey)
			require.Equal(t, int32(i), e.Properties["I"])
		}
		_, err = os.Stat(in + resumeSuffix)
		require.ErrorIs(t, err, os.ErrNotExist)
		return
	}
}

// TestProgressLine checks the live line's content on a "terminal".
func TestProgressLine(t *testing.T) {
	p := &progress{label: "import", totalBytes: 1000, start: time.Now().Add(-2 * time.Second)}
	p.add(1500, 250)
	line := p.line()
	require.Contains(t, line, "import: 1,500 entities, 250 B of 1000 B, ")
	require.Contains(t, line, "entities/s, 25%, ")
	require.Contains(t, line, " left")
	_ = context.Background
	_ = tablestore.ETagAny
}

func TestCSVResume(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in := writeFile(t, dir, "in.csv", "PartitionKey,RowKey,Note,Age:Edm.Int32\na,1,\"two\nlines\",1\na,2,x,two\na,3,y,3\n")
	r := cli(t, "import", "--store", store, "People", in)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "line 4: InvalidInput")
	require.Contains(t, r.stderr, "every line up to 3 committed or rejected, nothing at or after line 4; run again with --resume to continue from line 4")
	require.NoError(t, os.WriteFile(in, []byte("PartitionKey,RowKey,Note,Age:Edm.Int32\na,1,\"two\nlines\",1\na,2,x,2\na,3,y,3\n"), 0o644))
	ok(t, "import", "--store", store, "People", in, "--resume")
	got := readEntities(t, store, "People")
	require.Equal(t, []string{"a/1", "a/2", "a/3"}, keys(got))
	require.Equal(t, "two\nlines", got[0].Properties["Note"])
	require.Equal(t, int32(2), got[1].Properties["Age"])
}

// TestImportUnsorted imports lines whose partitions interleave, in
// batches of 50 entities spanning partitions: a line that exists stops
// the import exactly before it, mid-batch; --resume --skip-bad goes on
// past it and every other refused line, in input order; the result is
// every good line.
func TestImportUnsorted(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	const n, parts = 600, 13
	var b strings.Builder
	exists := map[int]bool{77: true, 78: true, 301: true}
	for i := range n {
		if i == 450 {
			fmt.Fprintln(&b, `{"PartitionKey":"p","RowKey":"bad","V":`) // malformed
		}
		fmt.Fprintf(&b, `{"PartitionKey":"p%02d","RowKey":"r%04d","I":%d}`+"\n", i%parts, i, i)
	}
	in := writeFile(t, dir, "in.jsonl", b.String())
	ok(t, "tables", "--store", store, "create", "People")
	for i := range exists {
		ok(t, "put", "--store", store, "People", fmt.Sprintf(`{"PartitionKey":"p%02d","RowKey":"r%04d","Old":true}`, i%parts, i))
	}

	r := cli(t, "import", "--store", store, "People", in, "--batch", "50")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "line 78: EntityAlreadyExists")
	require.Contains(t, r.stderr, "every line up to 77 committed or rejected, nothing at or after line 78")
	require.Len(t, readEntities(t, store, "People"), 77+3)

	skip := filepath.Join(dir, "rejected.jsonl")
	r = cli(t, "import", "--store", store, "People", in, "--batch", "50", "--resume", "--skip-bad", skip)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "committed 520 entities")
	require.Contains(t, r.stderr, "4 rejected")
	lines := strings.Split(b.String(), "\n")
	rejected, err := os.ReadFile(skip)
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{lines[77], lines[78], lines[301], lines[450]}, "\n")+"\n", string(rejected),
		"rejected lines in input order")
	got := readEntities(t, store, "People")
	require.Len(t, got, n)
	seen := map[int]bool{}
	for _, e := range got {
		var i int
		_, err := fmt.Sscanf(e.RowKey, "r%04d", &i)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("p%02d", i%parts), e.PartitionKey)
		if exists[i] {
			require.Equal(t, true, e.Properties["Old"], "entity %d is left as it was", i)
		} else {
			require.Equal(t, int32(i), e.Properties["I"])
		}
		require.WithinDuration(t, time.Now(), e.Timestamp, time.Minute)
		seen[i] = true
	}
	require.Len(t, seen, n)
}

// TestImportStorageExplorerCSV: a CSV exported by Storage Explorer, its
// types in NAME@type columns, imports with every type.
func TestImportStorageExplorerCSV(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in := writeFile(t, dir, "people.csv", "PartitionKey,RowKey,Timestamp,Age,Age@type,Joined,Joined@type\r\n"+
		"p,1,2024-05-01T10:00:00.123Z,42,Edm.Int64,2020-01-02T03:04:05.000Z,Edm.DateTime\r\n"+
		"p,2,2024-05-01T10:00:00.123Z,7,Edm.Int32,,\r\n")
	ok(t, "tables", "--store", store, "create", "People")
	ok(t, "import", "--store", store, "People", in)
	got := readEntities(t, store, "People")
	require.Len(t, got, 2)
	require.Equal(t, map[string]any{"Age": int64(42), "Joined": time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)}, got[0].Properties)
	require.Equal(t, map[string]any{"Age": int32(7)}, got[1].Properties)
}
