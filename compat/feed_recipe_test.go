package compat

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest"
)

// The change feed recipes of docs/extensions.md ("Following a change feed
// from Python and JavaScript"), run as written: compat/recipes holds them
// and the docs quote them whole.

// recipeRunner returns the command line running a recipe, or skips the
// test when its interpreter is missing (fails with TABLESTORE_REQUIRE_PYTHON
// or TABLESTORE_REQUIRE_NODE, as in CI).
func recipeRunner(t *testing.T, lang string) []string {
	t.Helper()
	switch lang {
	case "python":
		if p, err := exec.LookPath("python3"); err == nil {
			return []string{p, filepath.Join("recipes", "follow_feed.py")}
		}
		if os.Getenv("TABLESTORE_REQUIRE_PYTHON") != "" {
			t.Fatal("no python3")
		}
		t.Skip("no python3")
	case "node":
		if p, err := exec.LookPath("node"); err == nil {
			return []string{p, filepath.Join("recipes", "follow-feed.mjs")}
		}
		if os.Getenv("TABLESTORE_REQUIRE_NODE") != "" {
			t.Fatal("no node")
		}
		t.Skip("no node")
	}
	return nil
}

// recipeProcess is a running recipe, its output read line by line.
type recipeProcess struct {
	cmd   *exec.Cmd
	lines chan string
}

func startRecipe(t *testing.T, argv []string, env ...string) *recipeProcess {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &recipeProcess{cmd: cmd, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

// line returns the recipe's next line, failing after a minute.
func (p *recipeProcess) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatal("the recipe ended")
		}
		return l
	case <-time.After(time.Minute):
		t.Fatal("the recipe wrote nothing for a minute")
	}
	return ""
}

// exit waits for the recipe to end and returns its exit code.
func (p *recipeProcess) exit(t *testing.T) int {
	t.Helper()
	for range p.lines {
	}
	err := p.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func TestFeedRecipes(t *testing.T) {
	for _, lang := range []string{"python", "node"} {
		t.Run(lang, func(t *testing.T) {
			argv := recipeRunner(t, lang)
			ctx := context.Background()
			srv := tablestoretest.NewServer(t)
			endpoint := ""
			for _, f := range strings.Split(srv.ConnectionString(), ";") {
				if v, ok := strings.CutPrefix(f, "TableEndpoint="); ok {
					endpoint = v
				}
			}
			tb, err := srv.DB().CreateTable(ctx, "Orders")
			if err != nil {
				t.Fatal(err)
			}
			if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew}); err != nil {
				t.Fatal(err)
			}
			env := []string{"TABLES_ENDPOINT=" + endpoint, "TABLES_ACCOUNT=" + srv.Account(), "TABLES_KEY=" + srv.Key(), "TABLE=Orders"}

			p := startRecipe(t, argv, append(env, "FEED_COUNT=3")...)
			if l := p.line(t); !strings.HasPrefix(l, "ready ") {
				t.Fatalf("first line %q", l)
			}
			for _, rk := range []string{"1", "2", "3"} {
				if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "eu", RowKey: rk}); err != nil {
					t.Fatal(err)
				}
			}
			var cursors []string
			for _, rk := range []string{"1", "2", "3"} {
				f := strings.Fields(p.line(t))
				if len(f) != 4 || f[1] != "insert" || f[2] != "eu" || f[3] != rk {
					t.Fatalf("change line %q, want insert eu %s", f, rk)
				}
				cursors = append(cursors, f[0])
			}
			if code := p.exit(t); code != 0 {
				t.Fatalf("exit %d", code)
			}

			// Resumed after the second change, it goes on with the third.
			p = startRecipe(t, argv, append(env, "FEED_COUNT=1", "FEED_LAST_EVENT_ID="+cursors[1])...)
			if f := strings.Fields(p.line(t)); len(f) != 4 || f[0] != cursors[2] {
				t.Fatalf("resumed: %q, want the change at %s", f, cursors[2])
			}
			if code := p.exit(t); code != 0 {
				t.Fatalf("resumed: exit %d", code)
			}

			// A bad cursor is answered 400 with Azure's error body.
			p = startRecipe(t, argv, append(env, "FEED_FROM=yesterday")...)
			if l := p.line(t); l != "error 400 InvalidInput" {
				t.Fatalf("bad cursor: %q", l)
			}
			if code := p.exit(t); code != 1 {
				t.Fatalf("bad cursor: exit %d", code)
			}
		})
	}
}

// TestFeedRecipesInDocs checks that docs/extensions.md quotes the recipes as
// they are run here.
func TestFeedRecipesInDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "extensions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"follow_feed.py", "follow-feed.mjs"} {
		f, err := os.Open(filepath.Join("recipes", name))
		if err != nil {
			t.Fatal(err)
		}
		src, _ := io.ReadAll(f)
		f.Close()
		if !strings.Contains(string(doc), string(src)) {
			t.Errorf("docs/extensions.md does not quote recipes/%s as it is", name)
		}
	}
}
