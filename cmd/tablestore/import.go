package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
)

// importModes maps import's --mode to the transaction action.
var importModes = map[string]tablestore.ActionType{
	"insert":       tablestore.ActionInsert,
	"upsert":       tablestore.ActionUpsertReplace,
	"upsert-merge": tablestore.ActionUpsertMerge,
}

// resumeSuffix names the resume file beside an import's input.
const resumeSuffix = ".tablestore-resume"

// maxReported is how many rejected records --skip-bad lists on stderr.
const maxReported = 20

func importCommand() *command {
	return &command{
		name:    "import",
		args:    "TABLE FILE",
		summary: "load JSON lines or CSV into a table",
		help: `import loads FILE ("-" for standard input) into TABLE, creating the table if
needed. FILE is JSON lines (one entity per line in Azure's JSON wire format,
as export writes it), Azure's JSON as one document (a query's answer
{"value":[...]} or an array of entities; --resume reads it again from the
start, skipping what was handled) or CSV with a typed header (see "CSV
format" below); the format follows the file name (.csv is CSV) unless
--format says.
A --store directory that holds no store becomes a new one (import says so
on standard error).

Lines are written in batches of up to 1,000 entities (--batch) on any
partitions, in any order, with one synced commit per batch, so the input
need not be sorted by PartitionKey. Each entity's write is atomic; nothing
is atomic across entities. --mode says whether an entity that exists fails
(insert, the default) or is replaced (upsert) or merged into
(upsert-merge). A line whose entity appears again later is overwritten or
merged into by the later line, or refused (insert).

With --transactions, consecutive lines with the same PartitionKey are
committed together in entity group transactions of up to 100 entities and
4 MiB instead, each all or nothing (as Azure's batches): for input grouped
by partition whose groups must be written whole. On input that is not
grouped, that is one commit per line, and much slower.

Bad input: a malformed line, an entity that breaks one of Azure's limits,
a value of the wrong type for its CSV column, or (with insert) an entity
that exists is reported with its line number and Azure's error code. By
default import stops there: every line before it is committed, nothing at
or after it. With --skip-bad FILE it writes each rejected line to FILE
(CSV: after the header, so FILE can be fixed and imported) and goes on.
A rejected line never changes what is stored.

Interrupting and resuming: after every commit, import records in
FILE` + resumeSuffix + ` how far the input is committed (the byte offset and
line number after the last committed or rejected line). Ctrl-C (or
SIGTERM) stops after the commit in flight and reports the last committed
line. If an import stops for any reason, run the same command with
--resume to continue after the last committed line: nothing is read or
written twice. A finished import deletes the resume file; an existing one
makes import refuse to start over unless it is deleted. Commits are
synced, so the resume file never claims more than the store holds even
after a crash; with --no-sync that holds only for clean stops.

CSV format: the first line is the header, one column per property, each
NAME:TYPE with TYPE one of Edm.String, Edm.Int32, Edm.Int64, Edm.Double,
Edm.Boolean, Edm.DateTime, Edm.Guid, Edm.Binary (a bare NAME is
Edm.String), and PartitionKey and RowKey columns. A cell holds the value as
Azure's JSON writes it (DateTime 2026-01-02T03:04:05.0000000Z, Binary in
base64, Guid canonical); an empty cell means no such property and a quoted
empty cell ("") the empty string. A name may have one column per type.
Storage Explorer's CSV export reads as it is: a column NAME@type gives,
row by row, the type of column NAME (an empty cell is Edm.String).`,
		example: `tablestore import --store data People people.jsonl
tablestore import --store data People people.csv --mode upsert --skip-bad rejected.csv
tablestore import --store data People people.jsonl --resume`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			format := fs.String("format", "", "json or csv (default: csv for a .csv file, else json)")
			mode := fs.String("mode", "insert", "insert, upsert or upsert-merge")
			resume := fs.Bool("resume", false, "continue an import that stopped, after its last committed line")
			skipBad := fs.String("skip-bad", "", "write rejected lines to this file and go on")
			noSync := fs.Bool("no-sync", false, "do not sync each commit (faster; a crash may lose the newest commits)")
			transactions := fs.Bool("transactions", false, "commit consecutive lines of one PartitionKey in entity group transactions (all or nothing each)")
			batch := fs.Int("batch", 1000, "most entities per commit (not with --transactions)")
			return func(ctx context.Context, args []string) error {
				if err := wantArgs(args, 2, 2, "TABLE FILE"); err != nil {
					return err
				}
				im := &importer{io: io, table: args[0], input: args[1], format: *format,
					mode: *mode, resume: *resume, skipPath: *skipBad, transactions: *transactions, batch: *batch}
				if *batch < 1 || *batch > 100_000 {
					return usagef("--batch %d: want 1 to 100000", *batch)
				}
				action, ok := importModes[im.mode]
				if !ok {
					return usagef("unknown --mode %q: want insert, upsert or upsert-merge", *mode)
				}
				im.action = action
				if im.format == "" {
					im.format = "json"
					if strings.EqualFold(filepath.Ext(im.input), ".csv") {
						im.format = "csv"
					}
				}
				if im.format != "json" && im.format != "csv" {
					return usagef("unknown --format %q: want json or csv", im.format)
				}
				if im.input == "-" && im.resume {
					return usagef("--resume needs a file, not standard input")
				}
				return im.run(ctx, *store, &tablestore.Options{NoSync: *noSync})
			}
		},
	}
}

// resumeState is the resume file's content: how far an import got.
// Every record before Offset is committed or rejected; none after it is.
type resumeState struct {
	Table     string `json:"table"`
	Format    string `json:"format"`
	Mode      string `json:"mode"`
	Offset    int64  `json:"offset"`    // bytes of input handled
	Line      int    `json:"line"`      // lines of input handled
	Committed int64  `json:"committed"` // entities committed, over all runs
	Rejected  int64  `json:"rejected"`  // records rejected, over all runs
	SkipFile  string `json:"skipFile,omitempty"`
	SkipSize  int64  `json:"skipSize,omitempty"` // bytes of SkipFile written
}

// importer is one run of the import command.
type importer struct {
	io       *stdio
	table    string
	input    string
	format   string
	mode     string
	action   tablestore.ActionType
	resume   bool
	skipPath string
	// transactions selects the committer over the bulk loader; batch is
	// the bulk loader's entities per commit.
	transactions bool
	batch        int

	state      resumeState
	resumeFile *os.File
	resumeLen  int
	skipFile   *os.File
	header     []byte // CSV header line, for the skip file
	prog       *progress
	reported   int
	// runCommitted and runRejected count this run's records.
	runCommitted, runRejected int64
}

// stopError stops an import at a rejected record.
type stopError struct {
	rec *record
	err error
}

func (e *stopError) Error() string { return e.rec.where() + ": " + errorText(e.err) }

// importGCPercent is the garbage collector's target percentage during an
// import.
const importGCPercent = 400

func (im *importer) run(ctx context.Context, storeArg string, opts *tablestore.Options) (err error) {
	im.state = resumeState{Table: im.table, Format: im.format, Mode: im.mode, SkipFile: im.skipPath}
	// Parsing makes short-lived garbage at a high rate, in a bounded
	// pipeline: collecting it a fourth as often saves about a fifth of the
	// CPU for some 50 MB. GOGC, when set, wins.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(importGCPercent))
	}
	db, err := openOrCreateStore(storeArg, opts, im.io.stderr, "import")
	if err != nil {
		return err
	}
	defer closeStore(db, &err)
	t, err := ensureTable(ctx, db, im.table)
	if err != nil {
		return err
	}
	in, total, err := im.openInput()
	if err != nil {
		return err
	}
	defer in.Close()
	if im.resumeFile != nil {
		defer im.resumeFile.Close()
	}
	src, err := im.openSource(in)
	if err != nil {
		im.dropNewResumeFile()
		return err
	}
	if err := im.openSkipFile(); err != nil {
		im.dropNewResumeFile()
		return err
	}
	if im.skipFile != nil {
		defer im.skipFile.Close()
	}
	im.prog = startProgress(im.io, "import", 0, total-im.state.Offset)
	var c sink
	if im.transactions {
		c = &committer{ctx: context.WithoutCancel(ctx), table: t, action: im.action,
			committed: im.committed, reject: im.rejected}
	} else {
		c, err = newBulkLoader(context.WithoutCancel(ctx), t,
			tablestore.BulkOptions{Action: im.action, ContinueOnError: im.skipFile != nil, BatchEntities: im.batch},
			im.settle, im.writeState)
		if err != nil {
			return err
		}
	}
	runErr := im.pump(ctx, src, c)
	if runErr == nil {
		runErr = c.flush()
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	summary := "import: committed " + im.prog.summary()
	if im.runRejected > 0 {
		summary += fmt.Sprintf(", %s rejected", count(im.runRejected))
		if im.skipPath != "" {
			summary += " (in " + im.skipPath + ")"
		}
	}
	im.prog.finish(summary)
	if runErr == nil {
		if im.resumeFile != nil {
			if err := os.Remove(im.input + resumeSuffix); err != nil {
				return err
			}
		}
		return nil
	}
	if im.resumeFile != nil {
		if im.runCommitted == 0 && im.runRejected == 0 && !im.resume {
			im.dropNewResumeFile()
			im.resumeFile = nil
		} else if err := im.writeState(); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	return im.explainStop(runErr)
}

// explainStop turns the error that ended the run into the final message:
// what is committed, and how to go on.
func (im *importer) explainStop(runErr error) error {
	where := "no line committed"
	if im.state.Line > 0 {
		where = fmt.Sprintf("every line up to %d committed or rejected", im.state.Line)
	}
	next := ""
	if im.resumeFile != nil {
		next = fmt.Sprintf("; run again with --resume to continue from line %d", im.state.Line+1)
	}
	var se *stopError
	switch {
	case errors.As(runErr, &se):
		return fmt.Errorf("%s: %s\nstopped: %s, nothing at or after line %d%s, or use --skip-bad FILE to set bad lines aside",
			se.rec.where(), errorText(se.err), where, se.rec.line, next)
	case errors.Is(runErr, context.Canceled):
		return fmt.Errorf("interrupted: %s, nothing after it%s", where, next)
	default:
		return fmt.Errorf("%s\nstopped: %s, nothing after it%s", errorText(runErr), where, next)
	}
}

// openInput opens the input and, for a file, its resume state.
func (im *importer) openInput() (io.ReadCloser, int64, error) {
	if im.input == "-" {
		return io.NopCloser(im.io.stdin), 0, nil
	}
	f, err := os.Open(im.input)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	if err := im.openResume(); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, total, nil
}

// openResume loads (with --resume) or creates the resume file.
func (im *importer) openResume() error {
	path := im.input + resumeSuffix
	data, err := os.ReadFile(path)
	switch {
	case err == nil && !im.resume:
		return usagef("%s exists: an earlier import of this file stopped; add --resume to continue it, or delete the file to start over", path)
	case errors.Is(err, os.ErrNotExist) && im.resume:
		return fmt.Errorf("nothing to resume: no %s (the import finished, or never started)", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	if im.resume {
		var st resumeState
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !strings.EqualFold(st.Table, im.table) || st.Format != im.format || st.Mode != im.mode {
			return usagef("%s is for table %s, --format %s, --mode %s: resume with the same", path, st.Table, st.Format, st.Mode)
		}
		prevSkip := st.SkipFile
		im.state = st
		im.state.SkipFile = im.skipPath
		if im.skipPath != prevSkip {
			im.state.SkipSize = 0
		}
	}
	im.resumeFile, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if fi, err := im.resumeFile.Stat(); err == nil {
		im.resumeLen = int(fi.Size())
	}
	return im.writeState()
}

// dropNewResumeFile removes the resume file if this run created it, so a
// run that failed before handling any record leaves nothing behind.
func (im *importer) dropNewResumeFile() {
	if im.resumeFile != nil && !im.resume {
		os.Remove(im.input + resumeSuffix)
	}
}

// openSource positions the input after what is already handled and
// returns the reader of its format.
func (im *importer) openSource(in io.ReadCloser) (source, error) {
	if im.format == "json" {
		br := bufio.NewReaderSize(in, 1<<20)
		head, err := br.Peek(1 << 20)
		if isJSONDocument(head, err != nil) {
			return newDocSource(br, im.state.Offset), nil
		}
		if im.state.Offset == 0 {
			return newJSONSource(br, 0, 0), nil
		}
		if im.state.Offset > 0 {
			if err := seekLineStart(in, im.state.Offset); err != nil {
				return nil, err
			}
		}
		return newJSONSource(in, im.state.Line, im.state.Offset), nil
	}
	r := entitycsv.NewReader(in)
	cols, err := r.ReadHeader()
	if err == io.EOF {
		return nil, errors.New("empty input: a CSV file starts with its header line")
	}
	if err != nil {
		return nil, fmt.Errorf("line 1: %s", csvErrorText(err))
	}
	im.header = append(trimLineEnd(r.Raw()), '\n')
	if im.state.Offset > r.Offset() {
		if err := seekLineStart(in, im.state.Offset); err != nil {
			return nil, err
		}
		r = entitycsv.NewReaderAt(in, im.state.Line, im.state.Offset)
		r.SetHeader(cols)
	} else {
		im.state.Offset, im.state.Line = r.Offset(), r.Line()
	}
	return &csvSource{r: r, cols: cols}, nil
}

// csvErrorText is the text of a CSV header error: the message of a
// *tablestore.Error without its code, as the header is not an entity.
func csvErrorText(err error) string {
	var te *tablestore.Error
	if errors.As(err, &te) && te.Code == edm.CodeInvalidInput {
		return te.Message
	}
	return errorText(err)
}

// seekLineStart moves f to off, which must start a line.
func seekLineStart(f io.Reader, off int64) error {
	s, ok := f.(io.ReadSeeker)
	if !ok {
		return errors.New("cannot resume: the input is not seekable")
	}
	if _, err := s.Seek(off-1, io.SeekStart); err != nil {
		return err
	}
	var b [1]byte
	if _, err := io.ReadFull(s, b[:]); err != nil || b[0] != '\n' {
		return fmt.Errorf("cannot resume: byte offset %d of the input does not start a line (was the file changed before that point?)", off)
	}
	return nil
}

// openSkipFile opens the --skip-bad file: cut back to what the resumed
// run had written, or emptied (with the CSV header) for a new run.
func (im *importer) openSkipFile() error {
	if im.skipPath == "" {
		return nil
	}
	f, err := os.OpenFile(im.skipPath, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	size := im.state.SkipSize
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	im.skipFile = f
	if size == 0 && im.header != nil {
		n, err := f.Write(im.header)
		im.state.SkipSize += int64(n)
		return err
	}
	return nil
}

// pump reads records and hands them to c, in order, until the input
// ends, c stops, or ctx is cancelled. One goroutine reads chunks of
// records; parsers (one per CPU) turn them into entities ahead of the
// commits.
func (im *importer) pump(ctx context.Context, src source, c sink) error {
	type chunk struct {
		recs   []*record
		err    error         // reading stopped here
		parsed chan struct{} // closed when recs are parsed
	}
	const chunkSize = 128
	workers := max(1, runtime.GOMAXPROCS(0))
	// Parsed records queue for up to two commits' worth, so the parsers
	// go on while a commit syncs.
	depth := 2*workers + 2*im.batch/chunkSize
	ordered := make(chan *chunk, depth)
	work := make(chan *chunk, depth)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(ordered)
		defer close(work)
		for {
			ch := &chunk{parsed: make(chan struct{})}
			for len(ch.recs) < chunkSize {
				rec, err := src.next()
				if err != nil {
					if err != io.EOF {
						ch.err = err
					}
					break
				}
				ch.recs = append(ch.recs, rec)
			}
			last := ch.err != nil || len(ch.recs) < chunkSize
			select {
			case ordered <- ch:
			case <-done:
				return
			}
			select {
			case work <- ch:
			case <-done:
				return
			}
			if last {
				return
			}
		}
	}()
	for range workers {
		go func() {
			for ch := range work {
				for _, rec := range ch.recs {
					src.parse(rec)
				}
				close(ch.parsed)
			}
		}()
	}
	for ch := range ordered {
		<-ch.parsed
		for _, rec := range ch.recs {
			select {
			case <-ctx.Done():
				return nil
			default:
			}
			if err := c.add(rec); err != nil {
				return err
			}
		}
		if ch.err != nil {
			if err := c.flush(); err != nil {
				return err
			}
			return ch.err
		}
	}
	return nil
}

// committed advances the resume state past a committed group.
func (im *importer) committed(recs []*record) error {
	last := recs[len(recs)-1]
	im.runCommitted += int64(len(recs))
	im.state.Committed += int64(len(recs))
	return im.advance(last, int64(len(recs)))
}

// advance moves the resume state past rec and counts progress.
func (im *importer) advance(rec *record, entities int64) error {
	im.prog.add(entities, rec.end-im.state.Offset)
	im.state.Offset, im.state.Line = rec.end, rec.lines
	return im.writeState()
}

// settle moves the resume state past rec, written (err nil) or
// rejected (written to the skip file), without recording the state; the
// bulk loader records it once per commit.
func (im *importer) settle(rec *record, err error) error {
	if err != nil {
		return im.skip(rec, err)
	}
	im.runCommitted++
	im.state.Committed++
	im.prog.add(1, rec.end-im.state.Offset)
	im.state.Offset, im.state.Line = rec.end, rec.lines
	return nil
}

// rejected handles a record the input or the store rejected: with
// --skip-bad it is written there and the run goes on; otherwise the run
// stops.
func (im *importer) rejected(rec *record, err error) error {
	if im.skipFile == nil {
		return &stopError{rec: rec, err: err}
	}
	if err := im.skip(rec, err); err != nil {
		return err
	}
	return im.writeState()
}

// skip writes a rejected record to the --skip-bad file, reports it, and
// moves the resume state past it without recording the state.
func (im *importer) skip(rec *record, err error) error {
	if im.reported < maxReported {
		fmt.Fprintf(im.io.stderr, "import: rejected %s: %s\n", rec.where(), errorText(err))
		im.reported++
		if im.reported == maxReported {
			fmt.Fprintf(im.io.stderr, "import: further rejected lines are only written to %s\n", im.skipPath)
		}
	}
	n, werr := im.skipFile.Write(append(rec.raw, '\n'))
	im.state.SkipSize += int64(n)
	if werr != nil {
		return werr
	}
	im.runRejected++
	im.state.Rejected++
	im.prog.add(0, rec.end-im.state.Offset)
	im.state.Offset, im.state.Line = rec.end, rec.lines
	return nil
}

// writeState overwrites the resume file in place with the state, padded
// with spaces to its previous length (one write, no truncation).
func (im *importer) writeState() error {
	if im.resumeFile == nil {
		return nil
	}
	b, err := json.Marshal(&im.state)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	for len(b) < im.resumeLen {
		b = append(b, ' ')
	}
	im.resumeLen = len(b)
	_, err = im.resumeFile.WriteAt(b, 0)
	return err
}
