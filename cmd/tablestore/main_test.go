package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// binaryDir holds the command, built once by the first test that runs
// it as a process (fuzzing workers never build it).
var (
	binaryDir  string
	binaryOnce sync.Once
	binary     string
	binaryErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// buildBinary builds the command with go build and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		if binaryDir, binaryErr = os.MkdirTemp("", "tablestore-cli-test-"); binaryErr != nil {
			return
		}
		binary = filepath.Join(binaryDir, "tablestore")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binaryErr)
	return binary
}

// result is one in-process run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command in-process with args, as if piped (no terminal).
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return cliInput(t, "", args...)
}

// cliInput is cli with standard input.
func cliInput(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	io := &stdio{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}
	code := run(context.Background(), args, io)
	return result{code, out.String(), errb.String()}
}

// ok runs args and requires success.
func ok(t *testing.T, args ...string) result {
	t.Helper()
	r := cli(t, args...)
	require.Equal(t, exitOK, r.code, "tablestore %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
	return r
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// readEntities opens store and returns every entity of table, in order.
func readEntities(t *testing.T, store, table string) []*tablestore.Entity {
	t.Helper()
	db, err := tablestore.Open(store, nil)
	require.NoError(t, err)
	defer db.Close()
	var all []*tablestore.Entity
	for e, err := range db.Table(table).Query(context.Background(), tablestore.Query{}) {
		require.NoError(t, err)
		all = append(all, e)
	}
	return all
}

// keys returns "pk/rk" of each entity.
func keys(es []*tablestore.Entity) []string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.PartitionKey+"/"+e.RowKey)
	}
	return ks
}

func TestExitCodes(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	for _, tc := range []struct {
		args []string
		code int
		err  string // a piece of stderr
	}{
		{nil, exitUsage, "Usage: tablestore <command>"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"query", "--store", store, "--bogus", "People"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"query", "--store", store}, exitUsage, "want TABLE"},
		{[]string{"get", "--store", store, "People", "a"}, exitUsage, "want TABLE PARTITIONKEY ROWKEY"},
		{[]string{"tables", "--store", store, "shuffle"}, exitUsage, `unknown tables action "shuffle"`},
		{[]string{"tables", "--store", store}, exitFail, "does not exist"}, // a bare tables lists
		{[]string{"put", "--store", store, "--mode", "sideways", "People", "{}"}, exitUsage, "unknown --mode"},
		{[]string{"import", "--store", store, "--format", "xml", "People", "x.xml"}, exitUsage, "unknown --format"},
		{[]string{"query", "People"}, exitUsage, "no store"},
		{[]string{"tables", "--store", store, "create", "People"}, exitOK, ""},
		{[]string{"tables", "--store", store, "create", "People"}, exitFail, "TableAlreadyExists"},
		{[]string{"tables", "--store", store, "create", "--if-not-exists", "People"}, exitOK, ""},
		{[]string{"tables", "--store", store, "create", "x"}, exitFail, "OutOfRangeInput"},
		{[]string{"get", "--store", store, "People", "a", "b"}, exitFail, "ResourceNotFound"},
		{[]string{"get", "--store", store, "Nobody", "a", "b"}, exitFail, "TableNotFound"},
		{[]string{"query", "--store", store, "People", "--filter", "Age gt"}, exitFail, "InvalidInput"},
		{[]string{"put", "--store", store, "People", `{"PartitionKey":"a"}`}, exitFail, "PropertiesNeedValue"},
		{[]string{"tables", "--store", "AccountName=x;DefaultEndpointsProtocol=https", "list"}, exitFail, "InvalidInput"},
		{[]string{"query", "--store", store, "People"}, exitOK, ""},
	} {
		r := cli(t, tc.args...)
		require.Equal(t, tc.code, r.code, "tablestore %s\nstderr: %s", strings.Join(tc.args, " "), r.stderr)
		require.Contains(t, r.stderr, tc.err, "tablestore %s", strings.Join(tc.args, " "))
	}
}

func TestHelp(t *testing.T) {
	r := ok(t, "--help")
	for _, c := range commands() {
		require.Contains(t, r.stdout, "  "+c.name+" ")
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			r := ok(t, args...)
			require.Empty(t, r.stderr, args)
			require.Equal(t, 1, strings.Count(r.stdout, "Usage: tablestore "+c.name), args)
			require.Contains(t, r.stdout, "Example:\n  tablestore "+c.name, args)
			require.NotEmpty(t, strings.TrimSpace(c.summary))
		}
	}
}

// TestHelpAligned: every summary in the command list starts at the same
// column, whatever the length of the command's name.
func TestHelpAligned(t *testing.T) {
	r := ok(t, "--help")
	col := -1
	for _, c := range commands() {
		i := strings.Index(r.stdout, "\n  "+c.name+" ")
		require.GreaterOrEqual(t, i, 0, c.name)
		line, _, _ := strings.Cut(r.stdout[i+1:], "\n")
		at := strings.Index(line, c.summary)
		if col < 0 {
			col = at
		}
		require.Equal(t, col, at, "%q", line)
	}
}

// TestSuggestions: a bare tables lists, and mistyped commands, flags
// and tables get the nearest name; a bad duration gets its form; a file
// as --store is InvalidInput; serve names --create.
func TestSuggestions(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	ok(t, "tables", "--store", store, "create", "Orders", "People")
	r := ok(t, "tables", "--store", store)
	require.Equal(t, "Orders\nPeople\n", r.stdout)

	for _, tc := range []struct {
		args []string
		code int
		hint string
	}{
		{[]string{"qeury"}, exitUsage, `Did you mean "query"?`},
		{[]string{"query", "--store", store, "Orders", "--where", "x"}, exitUsage, "Did you mean --filter?"},
		{[]string{"query", "--store", store, "Orders", "--fitler=x"}, exitUsage, "Did you mean --filter?"},
		{[]string{"query", "--store", store, "Ordres"}, exitFail, `Did you mean table "Orders"?`},
		{[]string{"get", "--store", store, "Peeple", "a", "b"}, exitFail, `Did you mean table "People"?`},
		{[]string{"ttl", "--store", store, "Orders", "--default", "5x"}, exitUsage, "--default takes a duration: a number and a unit (ns, us, ms, s, m, h), such as 90s, 15m, 36h"},
		{[]string{"tables", "--store", writeFile(t, dir, "afile", "x"), "list"}, exitFail, `InvalidInput: not a store: "` + filepath.Join(dir, "afile") + `" is not a directory`},
		{[]string{"serve", "--dir", filepath.Join(dir, "none"), "--addr", "127.0.0.1:0"}, exitFail, "add --create to make a new store there"},
	} {
		r := cli(t, tc.args...)
		require.Equal(t, tc.code, r.code, "tablestore %s\nstderr: %s", strings.Join(tc.args, " "), r.stderr)
		require.Contains(t, r.stderr, tc.hint, "tablestore %s", strings.Join(tc.args, " "))
	}
	for _, args := range [][]string{{"frobnicate"}, {"query", "--store", store, "Zebra"}, {"query", "--store", store, "Orders", "--bogus"}} {
		require.NotContains(t, cli(t, args...).stderr, "Did you mean", args)
	}
}

func TestNearest(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"qeury", "query"}, {"tabels", "tables"}, {"Ordres", "Orders"}, {"orders", "Orders"},
		{"xyz", ""}, {"query", ""}, {"sevre", "serve"}, {"replciate", "replicate"},
	} {
		require.Equal(t, tc.want, nearest(tc.name, []string{"query", "tables", "Orders", "serve", "replicate"}), tc.name)
	}
}

func TestEntityCommands(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	ok(t, "tables", "--store", store, "create", "People", "Orders")
	require.Equal(t, "Orders\nPeople\n", ok(t, "tables", "--store", store, "list").stdout)
	require.Equal(t, "People\n", ok(t, "tables", "--store", store, "list", "pe").stdout)

	etag := strings.TrimSpace(ok(t, "put", "--store", store, "People", `{"PartitionKey":"Sales","RowKey":"0042","Name":"Ana","Age":41}`).stdout)
	require.True(t, strings.HasPrefix(etag, `W/"datetime'`), etag)
	r := cliInput(t, "{\"PartitionKey\":\"Sales\",\"RowKey\":\"0043\",\"Name\":\"Bo\"}\n\n{\"PartitionKey\":\"HR\",\"RowKey\":\"1\"}\n",
		"put", "--store", store, "People", "-")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, 2, strings.Count(r.stdout, "\n"))

	r = ok(t, "get", "--store", store, "People", "Sales", "0042", "--select", "Name")
	require.Contains(t, r.stdout, `"Name":"Ana"`)
	require.NotContains(t, r.stdout, `"Age"`)

	// merge with a stale ETag fails and changes nothing; with the right one it merges.
	r = cli(t, "put", "--store", store, "People", "--mode", "merge", "--if-match", `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`,
		`{"PartitionKey":"Sales","RowKey":"0042","Age":42}`)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "UpdateConditionNotSatisfied")
	ok(t, "put", "--store", store, "People", "--mode", "merge", "--if-match", etag, `{"PartitionKey":"Sales","RowKey":"0042","Age":42}`)
	r = ok(t, "get", "--store", store, "People", "Sales", "0042")
	require.Contains(t, r.stdout, `"Age":42`)
	require.Contains(t, r.stdout, `"Name":"Ana"`)

	r = ok(t, "query", "--store", store, "People", "--filter", "PartitionKey eq 'Sales'", "--select", "Name")
	require.Equal(t, 2, strings.Count(r.stdout, "\n"), r.stdout)
	require.Contains(t, r.stdout, `"Name":"Bo"`)

	// --top caps the output and hands out the continuation.
	r = ok(t, "query", "--store", store, "People", "--top", "2")
	require.Equal(t, 2, strings.Count(r.stdout, "\n"))
	require.Contains(t, r.stderr, "--continuation ")
	cont := strings.Fields(r.stderr[strings.Index(r.stderr, "--continuation "):])[1]
	r = ok(t, "query", "--store", store, "People", "--continuation", cont)
	require.Contains(t, r.stdout, `"RowKey":"0043"`)
	require.Equal(t, 1, strings.Count(r.stdout, "\n"))
	require.Equal(t, 3, strings.Count(ok(t, "query", "--store", store, "People", "--top", "1", "--all").stdout, "\n"))

	r = ok(t, "explain", "--store", store, "People", "--filter", "PartitionKey eq 'Sales' and Age gt 3")
	require.Equal(t, "plan: partition scan\nranges:\n  PartitionKey = 'Sales'\nresidual: Age gt 3\n", r.stdout)

	ok(t, "delete", "--store", store, "People", "Sales", "0042")
	require.Equal(t, exitFail, cli(t, "delete", "--store", store, "People", "Sales", "0042").code)
	ok(t, "tables", "--store", store, "delete", "Orders")
	require.Equal(t, "People\n", ok(t, "tables", "--store", store, "list").stdout)
}

func TestQueryTable(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	ok(t, "tables", "--store", store, "create", "People")
	ok(t, "put", "--store", store, "People", `{"PartitionKey":"a","RowKey":"1","Name":"Ana","Note":"two\nlines"}`)
	ok(t, "put", "--store", store, "People", `{"PartitionKey":"a","RowKey":"22","Age":41}`)
	var out bytes.Buffer
	io := &stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &bytes.Buffer{}, outTerminal: true}
	require.Equal(t, exitOK, run(context.Background(), []string{"query", "--store", store, "People"}, io))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^PartitionKey  RowKey  Timestamp\s+Age  Name  Note$`, lines[0])
	require.Regexp(t, `^a             1       \S+  \s+Ana   two\\nlines$`, lines[1])
	require.Regexp(t, `^a             22      \S+  41$`, lines[2])
	// Columns line up. The value is looked up from the end: the Timestamp
	// column may contain the same digits.
	require.Equal(t, strings.Index(lines[0], "Age"), strings.LastIndex(lines[2], "41"))
}

// A write refused on a full disk exits with its own status and says what
// to do; other failures exit 1.
func TestFailureExitStatus(t *testing.T) {
	var b strings.Builder
	full := fmt.Errorf("import: %w", tablestore.ErrNoSpace)
	require.Equal(t, exitNoSpace, reportFailure(&b, "import", full))
	require.Contains(t, b.String(), "disk is full")
	b.Reset()
	require.Equal(t, exitFail, reportFailure(&b, "import", errors.New("boom")))
	require.Equal(t, "tablestore import: boom\n", b.String())
}

// TestEmptyKeyCommands: put, get and delete take the empty keys Azure
// allows, given as empty arguments.
func TestEmptyKeyCommands(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	ok(t, "tables", "--store", store, "create", "People")
	ok(t, "put", "--store", store, "People", `{"PartitionKey":"","RowKey":"","Name":"Ana"}`)
	require.Contains(t, ok(t, "get", "--store", store, "People", "", "").stdout, `"Name":"Ana"`)
	require.Contains(t, ok(t, "query", "--store", store, "People", "--filter", "PartitionKey eq ''").stdout, `"Name":"Ana"`)
	ok(t, "delete", "--store", store, "People", "", "")
	r := cli(t, "get", "--store", store, "People", "", "")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "ResourceNotFound")
}

// TestFilterWarningsCLI: query and explain keep their results (none) and
// write the filter's warnings on standard error; a filter that can match
// warns of nothing.
func TestFilterWarningsCLI(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	ok(t, "tables", "--store", store, "create", "Orders")
	ok(t, "put", "--store", store, "Orders", `{"PartitionKey":"a","RowKey":"1","Amount":5,"Status":"new"}`)
	typeWarning := "warning: Amount is compared (gt) with a literal of type Edm.String but was seen only as Edm.Int32"
	r := ok(t, "query", "--store", store, "Orders", "--filter", "Amount gt '5'")
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, typeWarning)
	r = ok(t, "explain", "--store", store, "Orders", "--filter", "Amount gt '5'")
	require.NotContains(t, r.stdout, "warning")
	require.Contains(t, r.stdout, "residual: Amount gt '5'")
	require.Contains(t, r.stderr, typeWarning)
	r = ok(t, "query", "--store", store, "Orders", "--filter", "status eq 'new'")
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "warning: property status was never seen, but Status was")
	// From the page read: the first disjunct matches, the second cannot.
	r = ok(t, "query", "--store", store, "Orders", "--filter", "Amount eq 5 or Amount eq 5L")
	require.Contains(t, r.stdout, `"Amount":5`)
	require.Contains(t, r.stderr, "warning: Amount is compared (eq) with a literal of type Edm.Int64")
	r = ok(t, "query", "--store", store, "Orders", "--filter", "Amount gt 1")
	require.NotEmpty(t, r.stdout)
	require.Empty(t, r.stderr)
}
