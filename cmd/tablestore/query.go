package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
	"github.com/tablestore/tablestore/filter"
)

// maxPage is the largest page a query reads (Azure's limit on $top).
const maxPage = 1000

func queryCommand() *command {
	return &command{
		name:    "query",
		args:    "TABLE",
		summary: "query a table with an OData $filter",
		help: `query prints the entities matching --filter (Azure's OData $filter; all
entities without it), in (PartitionKey, RowKey) order, or with --index in
that secondary index's order (its values, then the keys). It prints at most
--top entities (default 1000) and, when more match, the --continuation to
pass for the next ones on standard error; --all prints every match.

On a terminal the result is an aligned table (long values shortened);
otherwise, or with --json, one entity per line in Azure's JSON wire format
with its odata.etag and Timestamp.

When the filter compares a property with a literal of a type it never
has in the first page read (Amount gt '5' where Amount is an Int32), or
names a property seen there only in another case (status for Status),
a warning goes to standard error: such a filter is valid and, as on
Azure, matches nothing (or, for ne, lt and le against another type,
everything). With no entity returned, the warning is based on the
sample that explain reads.

--stats prints, on standard error after the results, what the query read:
pages, entities examined (matching or not), secondary index entries read,
entities returned, and its plan's kind and the index it reads, if any
(see explain).`,
		example: `tablestore query --store data People --filter "PartitionKey eq 'Sales' and Age ge 40" --select Name,Age
tablestore query --store data People --all --json > people.jsonl`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			filter := fs.String("filter", "", "OData $filter expression (default: every entity)")
			var sel stringList
			fs.Var(&sel, "select", "properties to return, comma-separated or repeated (default all)")
			top := fs.Int("top", maxPage, "the most entities to print")
			all := fs.Bool("all", false, "print every matching entity (overrides --top)")
			asJSON := fs.Bool("json", false, "JSON lines even on a terminal")
			cont := fs.String("continuation", "", "resume after a previous query's last entity")
			index := fs.String("index", "", "read through this secondary index, in its order (values, then keys)")
			stats := fs.Bool("stats", false, "print what the query read on standard error: pages, entities examined, index entries, plan")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 1, 1, "TABLE"); err != nil {
					return err
				}
				if *top < 1 && !*all {
					return usagef("--top must be at least 1")
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				out := bufio.NewWriterSize(io.stdout, 64<<10)
				var w entityWriter = &jsonLineWriter{w: out}
				if io.outTerminal && !*asJSON {
					w = &tableWriter{w: out, maxCell: 40}
				}
				q := tablestore.Query{Filter: *filter, Select: sel, Continuation: *cont, Index: *index}
				var st *queryStats
				if *stats {
					st = &queryStats{}
				}
				seen := &firstPage{}
				next, err := queryEntities(ctx, db.Table(args[0]), q, *top, *all, teeWriter{w, seen}, st)
				if ferr := w.flush(); err == nil {
					err = ferr
				}
				if ferr := out.Flush(); err == nil {
					err = ferr
				}
				if err == nil && next != "" {
					fmt.Fprintf(io.stderr, "more entities match: add --continuation %s (or --all)\n", next)
				}
				if err == nil && *filter != "" {
					err = printWarnings(ctx, io.stderr, db.Table(args[0]), q, seen.entities)
				}
				if err == nil && st != nil {
					err = st.print(ctx, io.stderr, db.Table(args[0]), q)
				}
				return err
			}
		},
	}
}

// firstPage keeps the first maxPage entities a query printed, for the
// filter's warnings.
type firstPage struct{ entities []*tablestore.Entity }

// teeWriter writes to w and keeps the first page in seen.
type teeWriter struct {
	w    entityWriter
	seen *firstPage
}

func (t teeWriter) write(e *tablestore.Entity) error {
	if len(t.seen.entities) < maxPage {
		t.seen.entities = append(t.seen.entities, e)
	}
	return t.w.write(e)
}

func (t teeWriter) flush() error { return t.w.flush() }

// printWarnings writes on w, one "warning: " line each, the comparisons
// of q's filter that cannot tell read apart (filter.Warnings),
// or with nothing read those of q's plan, from the sample Plan reads.
func printWarnings(ctx context.Context, w io.Writer, t *tablestore.Table, q tablestore.Query, read []*tablestore.Entity) error {
	var warnings []string
	if len(read) > 0 {
		f, err := filter.Compile(q.Filter, nil)
		if err != nil {
			return err
		}
		var seen filter.Seen
		for _, e := range read {
			for name, v := range e.Properties {
				seen.AddValue(name, v)
			}
		}
		warnings = filter.Warnings(f.Root, &seen)
	} else {
		p, err := t.Plan(ctx, q)
		if err != nil {
			return err
		}
		warnings = p.Warnings
	}
	for _, s := range warnings {
		if _, err := fmt.Fprintf(w, "warning: %s\n", s); err != nil {
			return err
		}
	}
	return nil
}

// queryStats adds up what a query's pages read.
type queryStats struct {
	pages, returned int64
	// examined and indexEntries are -1 when the store cannot tell.
	examined, indexEntries int64
}

// add counts one page.
func (s *queryStats) add(p *tablestore.Page) {
	s.examined = addCost(s.examined, p.Examined)
	s.indexEntries = addCost(s.indexEntries, p.IndexEntries)
	s.pages++
	s.returned += int64(len(p.Entities))
}

// addCost adds a page's figure to a total; -1 (unknown) is sticky.
func addCost(total int64, n int) int64 {
	if total < 0 || n < 0 {
		return -1
	}
	return total + int64(n)
}

// print writes the figures and q's plan on w, q being the query as given
// (before any page's continuation).
func (s *queryStats) print(ctx context.Context, w io.Writer, t *tablestore.Table, q tablestore.Query) error {
	// n of one or many things, "unknown" for -1.
	of := func(n int64, one, many string) string {
		switch n {
		case -1:
			return "unknown " + many
		case 1:
			return "1 " + one
		}
		return count(n) + " " + many
	}
	fmt.Fprintf(w, "stats: %s, %s examined, %s read, %s returned\n", of(s.pages, "page", "pages"),
		of(s.examined, "entity", "entities"), of(s.indexEntries, "index entry", "index entries"), count(s.returned))
	p, err := t.Plan(ctx, q)
	if err != nil {
		return err
	}
	// The kind is the plan without indexes; the text's first line names
	// the index, its properties and, for Query.Index, its order.
	line := fmt.Sprintf("plan: %s", p.Kind)
	if p.Index != "" {
		first, _, _ := strings.Cut(p.String(), "\n")
		line += " through " + strings.TrimPrefix(first, "plan: ")
	}
	_, err = fmt.Fprintln(w, line)
	return err
}

// queryEntities writes up to limit entities matching q (all of them if
// all) and returns the continuation of the rest; st, when not nil,
// counts what the pages read.
func queryEntities(ctx context.Context, t *tablestore.Table, q tablestore.Query, limit int, all bool, w entityWriter, st *queryStats) (string, error) {
	left := limit
	for {
		q.Top = maxPage
		if !all && left < maxPage {
			q.Top = left
		}
		page, err := t.QueryPage(ctx, q)
		if err != nil {
			return "", err
		}
		if st != nil {
			st.add(page)
		}
		for _, e := range page.Entities {
			if err := w.write(e); err != nil {
				return "", err
			}
		}
		left -= len(page.Entities)
		if page.Continuation == "" {
			return "", nil
		}
		if !all && left == 0 {
			return page.Continuation, nil
		}
		q.Continuation = page.Continuation
	}
}

// entityWriter prints query results.
type entityWriter interface {
	write(e *tablestore.Entity) error
	flush() error
}

// jsonLineWriter writes one entity per line in Azure's JSON form.
type jsonLineWriter struct{ w io.Writer }

func (j *jsonLineWriter) write(e *tablestore.Entity) error {
	b, err := e.MarshalJSON()
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = j.w.Write(b)
	return err
}

func (j *jsonLineWriter) flush() error { return nil }

// tableWriter prints entities as an aligned table, in blocks of up to
// maxPage rows, each with its own header and column widths.
type tableWriter struct {
	w       io.Writer
	maxCell int // longest cell, in runes
	rows    []*tablestore.Entity
	printed bool
}

func (t *tableWriter) write(e *tablestore.Entity) error {
	t.rows = append(t.rows, e)
	if len(t.rows) == maxPage {
		return t.flush()
	}
	return nil
}

func (t *tableWriter) flush() error {
	if len(t.rows) == 0 {
		if !t.printed {
			_, err := fmt.Fprintln(t.w, "(no entities)")
			t.printed = true
			return err
		}
		return nil
	}
	cols := []string{"PartitionKey", "RowKey", "Timestamp"}
	seen := map[string]bool{}
	var props []string
	for _, e := range t.rows {
		for name := range e.Properties {
			if !seen[name] {
				seen[name] = true
				props = append(props, name)
			}
		}
	}
	slices.Sort(props)
	cols = append(cols, props...)
	cells := make([][]string, len(t.rows))
	width := make([]int, len(cols))
	for i, c := range cols {
		width[i] = utf8.RuneCountInString(c)
	}
	for r, e := range t.rows {
		row := make([]string, len(cols))
		row[0], row[1], row[2] = e.PartitionKey, e.RowKey, formatTime(e.Timestamp)
		for i, name := range props {
			if v, ok := e.Properties[name]; ok {
				row[3+i] = valueText(v)
			}
		}
		for i := range row {
			row[i] = shorten(row[i], t.maxCell)
			width[i] = max(width[i], utf8.RuneCountInString(row[i]))
		}
		cells[r] = row
	}
	if t.printed {
		if _, err := fmt.Fprintln(t.w); err != nil {
			return err
		}
	}
	t.printed = true
	line := func(row []string) error {
		var b strings.Builder
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		_, err := io.WriteString(t.w, strings.TrimRight(b.String(), " ")+"\n")
		return err
	}
	if err := line(cols); err != nil {
		return err
	}
	for _, row := range cells {
		if err := line(row); err != nil {
			return err
		}
	}
	t.rows = t.rows[:0]
	return nil
}

// shorten cuts s to at most n runes, ending in "…" when cut, and makes
// control characters visible so each row stays on one line.
func shorten(s string, n int) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		q := strconv.Quote(s)
		s = q[1 : len(q)-1]
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// valueText is the text form of a property value, as CSV export writes
// it: the forms Azure's JSON uses for each EDM type.
func valueText(v any) string {
	if s, err := entitycsv.FormatValue(v); err == nil {
		return s
	}
	return fmt.Sprint(v)
}

// formatTime writes a DateTime as Azure does: UTC, 7 fraction digits.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return edm.FormatDateTimeJSON(t)
}

func explainCommand() *command {
	return &command{
		name:    "explain",
		args:    "TABLE",
		summary: "show how a query runs",
		help: `explain prints the plan of a query: its kind (point, range, partition
scan, table scan or empty), the key ranges it reads and the residual
filter evaluated on each entity, exactly as Table.Plan's String describes it.
It reads no match, only a sample: the first 100 entities of the plan's
key ranges, whose property names and types (with those of the table's
indexes) decide the warnings it writes on standard error: a comparison
with a literal of a type the property never has there, a property name
seen only in another case.`,
		example: `tablestore explain --store data People --filter "PartitionKey eq 'Sales' and RowKey ge 'A' and RowKey lt 'B'"`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			filter := fs.String("filter", "", "OData $filter expression")
			var sel stringList
			fs.Var(&sel, "select", "properties to return")
			index := fs.String("index", "", "the plan of a read through this secondary index, in its order")
			return func(ctx context.Context, args []string) (err error) {
				if err := wantArgs(args, 1, 1, "TABLE"); err != nil {
					return err
				}
				db, err := openStore(*store, nil)
				if err != nil {
					return err
				}
				defer closeStore(db, &err)
				p, err := db.Table(args[0]).Plan(ctx, tablestore.Query{Filter: *filter, Select: sel, Index: *index})
				if err != nil {
					return err
				}
				s := p.String()
				if i := strings.Index(s, "\nwarning: "); i >= 0 && len(p.Warnings) > 0 {
					s = s[:i]
				}
				if _, err = fmt.Fprintln(io.stdout, strings.TrimRight(s, "\n")); err != nil {
					return err
				}
				for _, w := range p.Warnings {
					if _, err := fmt.Fprintf(io.stderr, "warning: %s\n", w); err != nil {
						return err
					}
				}
				return nil
			}
		},
	}
}
