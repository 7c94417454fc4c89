package lint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// docBudgets are the most lines a page may have: the README, the
// performance page (current results only; earlier runs live in git and
// bench/sample-results) and every other page under docs/.
var docBudgets = map[string]int{
	"README.md":           300,
	"docs/performance.md": 400,
	"docs/*.md":           500,
}

// overBudget reports each page of lines (path to line count) longer than
// its budget: its own entry in budgets, else the pattern that matches it.
func overBudget(lines map[string]int, budgets map[string]int) []string {
	var bad []string
	for path, n := range lines {
		limit, ok := budgets[path]
		if !ok {
			for pattern, l := range budgets {
				if m, _ := filepath.Match(pattern, path); m {
					limit, ok = l, true
				}
			}
		}
		if ok && n > limit {
			bad = append(bad, fmt.Sprintf("%s has %d lines, over its budget of %d: cut repetition or move reference tables to the page they belong to", path, n, limit))
		}
	}
	return bad
}

// TestDocsBudget holds the README and the docs pages to their budgets.
func TestDocsBudget(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		lines[filepath.ToSlash(rel)] = bytes.Count(b, []byte("\n"))
	}
	if len(lines) < 10 {
		t.Fatalf("found %d pages; docs/ has more", len(lines))
	}
	for _, v := range overBudget(lines, docBudgets) {
		t.Error(v)
	}
}

// TestDocsBudgetCatches checks that the budget reports a page over it,
// by its own entry and by the pattern, and passes pages within it.
func TestDocsBudgetCatches(t *testing.T) {
	lines := map[string]int{"README.md": 301, "docs/performance.md": 450, "docs/a.md": 501, "docs/b.md": 500}
	got := overBudget(lines, docBudgets)
	if len(got) != 3 {
		t.Errorf("got %d reports, want README, performance.md and a.md: %q", len(got), got)
	}
	if v := overBudget(map[string]int{"README.md": 300, "docs/performance.md": 400, "docs/b.md": 500}, docBudgets); len(v) != 0 {
		t.Errorf("pages within budget reported: %q", v)
	}
}
