package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMissingStore runs every command that reads or serves a store on a
// directory that does not exist, and on an empty one: each fails naming
// the path, and nothing is created.
func TestMissingStore(t *testing.T) {
	base := t.TempDir()
	empty := filepath.Join(base, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	for _, store := range []string{filepath.Join(base, "typo"), empty} {
		for _, args := range [][]string{
			{"stats", "--store", store},
			{"tables", "list", "--store", store},
			{"tables", "delete", "--store", store, "People"},
			{"get", "--store", store, "People", "a", "b"},
			{"delete", "--store", store, "People", "a", "b"},
			{"query", "--store", store, "People"},
			{"explain", "--store", store, "People", "--filter", "PartitionKey eq 'a'"},
			{"export", "--store", store, "People"},
			{"backup", "--store", store, filepath.Join(base, "backup")},
			{"copy", store, filepath.Join(base, "dest")},
			{"serve", "--dir", store, "--addr", "127.0.0.1:0"},
		} {
			r := cli(t, args...)
			require.Equal(t, exitFail, r.code, "%v: %s", args, r.stderr)
			require.Contains(t, r.stderr, `no store in "`+store+`"`, args)
			require.Contains(t, r.stderr, "ResourceNotFound", args)
			require.NotContains(t, r.stderr, "created", args)
			ls, err := os.ReadDir(store)
			if store == empty {
				require.NoError(t, err)
				require.Empty(t, ls, "%v wrote into the empty directory", args)
			} else {
				require.ErrorIs(t, err, os.ErrNotExist, "%v created the directory", args)
			}
			for _, other := range []string{"backup", "dest"} {
				_, err := os.Stat(filepath.Join(base, other))
				require.ErrorIs(t, err, os.ErrNotExist, "%v created %s", args, other)
			}
		}
	}
}

// TestCommandsThatCreateStores checks that tables create, put, import and
// copy make a new store where none is and say so on stderr, once.
func TestCommandsThatCreateStores(t *testing.T) {
	base := t.TempDir()
	in := writeFile(t, base, "in.jsonl", `{"PartitionKey":"a","RowKey":"1","N":1}`+"\n")
	created := func(args []string, store string) {
		t.Helper()
		r := ok(t, args...)
		require.Contains(t, r.stderr, ": created a new store in "+store+"\n", args)
		r = ok(t, append(args, "--mode", "upsert")...)
		require.NotContains(t, r.stderr, "created", "%v: the second run finds the store", args)
	}
	s1 := filepath.Join(base, "s1")
	r := ok(t, "tables", "create", "--store", s1, "People")
	require.Equal(t, "tables create: created a new store in "+s1+"\n", r.stderr)
	r = ok(t, "tables", "create", "--store", s1, "Orders")
	require.Empty(t, r.stderr)

	created([]string{"import", "--store", filepath.Join(base, "s2"), "People", in}, filepath.Join(base, "s2"))
	created([]string{"copy", filepath.Join(base, "s2"), filepath.Join(base, "s3")}, filepath.Join(base, "s3"))
	require.Len(t, readEntities(t, filepath.Join(base, "s3"), "People"), 1)

	// put makes the store; the table must still exist.
	s4 := filepath.Join(base, "s4")
	r = cli(t, "put", "--store", s4, "People", `{"PartitionKey":"a","RowKey":"1"}`)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "put: created a new store in "+s4+"\n")
	require.Contains(t, r.stderr, "TableNotFound")
	r = cli(t, "put", "--store", s4, "People", `{"PartitionKey":"a","RowKey":"1"}`)
	require.NotContains(t, r.stderr, "created")
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		r := ok(t, arg)
		require.True(t, strings.HasPrefix(r.stdout, "tablestore "), r.stdout)
		require.Contains(t, r.stdout, runtime.Version())
		require.Empty(t, r.stderr)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	require.Equal(t, "tablestore v1.2.3, revision 0123abcd (2026-01-02T03:04:05Z) +modified, go1.99", formatVersion(bi, "", ""))
	require.Equal(t, "tablestore v2.0.0, revision feed, go1.99", formatVersion(bi, "v2.0.0", "feed"), "the linker's values first")
	bi.Settings = nil
	require.Equal(t, "tablestore v1.2.3, revision unknown, go1.99", formatVersion(bi, "", ""))
	bi.Main.Version = "(devel)"
	require.Equal(t, "tablestore v1.2.4, revision 89ab, go1.99", formatVersion(bi, "v1.2.4", "89ab"))
}

// TestVersionLinked builds the command with -buildvcs=false, as a build
// without VCS information, and the version and revision set by the
// linker as the install docs say: --version shows both.
func TestVersionLinked(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tablestore")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.version=v0.9.1 -X main.revision=0a1b2c3d", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(out), "tablestore v0.9.1, revision 0a1b2c3d, go"), "%s", out)
}
