// Command logdata shows the log data anti-pattern: log messages are read
// by time range, and no table key serves both the writes and that read.
// Keyed by time, every write lands in the current partition (a hot spot);
// keyed by source, a time range must scan every partition. The guide's
// answer is to buffer messages and write them as files named by service
// and hour, found by name prefix, as Storage Analytics does with blobs.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

type message struct {
	at     time.Time
	source string
	level  string
	text   string
}

// messages are one per second from 15:00 to 15:10, from four servers.
func messages() []message {
	start := time.Date(2014, 7, 31, 15, 0, 0, 0, time.UTC)
	var out []message
	for i := range 600 {
		level := "Info"
		if i%7 == 0 {
			level = "Error"
		}
		out = append(out, message{start.Add(time.Duration(i) * time.Second), fmt.Sprintf("web%d", i%4), level, fmt.Sprintf("request %d", i)})
	}
	return out
}

// writeLogFiles buffers messages and writes them in blocks of 100 lines to
// <root>/<service>/yyyy/mm/dd/hhmm/<seq>.log.
func writeLogFiles(root, service string, ms []message) {
	for seq := 0; seq*100 < len(ms); seq++ {
		block := ms[seq*100 : min(len(ms), (seq+1)*100)]
		dir := filepath.Join(root, service, block[0].at.Format("2006/01/02/1500"))
		demo.NoErr(os.MkdirAll(dir, 0o755), "create log directory")
		var b strings.Builder
		for _, m := range block {
			fmt.Fprintf(&b, "%s;%s;%s;%s\n", m.at.Format(time.RFC3339), m.source, m.level, m.text)
		}
		demo.NoErr(os.WriteFile(filepath.Join(dir, fmt.Sprintf("%06d.log", seq+1)), []byte(b.String()), 0o644), "write log block")
	}
}

// readLogFiles lists the files under a name prefix and keeps the lines in
// [from, to) with the given level.
func readLogFiles(prefix string, from, to time.Time, level string) (files, lines int) {
	names, err := filepath.Glob(filepath.Join(prefix, "*.log"))
	demo.NoErr(err, "list log files")
	for _, name := range names {
		f, err := os.Open(name)
		demo.NoErr(err, "open "+name)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			parts := strings.Split(sc.Text(), ";")
			at, err := time.Parse(time.RFC3339, parts[0])
			demo.NoErr(err, "parse log line")
			if !at.Before(from) && at.Before(to) && parts[2] == level {
				lines++
			}
		}
		f.Close()
	}
	return len(names), lines
}

// insertAll writes es in transactions of up to 100 entities of one
// partition and returns how many entities each partition received.
func insertAll(ctx context.Context, t *tablestore.Table, es []*tablestore.Entity) map[string]int {
	byPK := map[string][]tablestore.TransactionAction{}
	for _, e := range es {
		byPK[e.PartitionKey] = append(byPK[e.PartitionKey], tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: e})
	}
	counts := map[string]int{}
	for pk, actions := range byPK {
		counts[pk] = len(actions)
		for len(actions) > 0 {
			n := min(100, len(actions))
			demo.NoErr(t.SubmitTransaction(ctx, actions[:n]), "insert log entities")
			actions = actions[n:]
		}
	}
	return counts
}

func main() {
	ctx := context.Background()
	root := demo.TempDir()
	db := demo.Reopen(filepath.Join(root, "db"))
	ms := messages()
	from := time.Date(2014, 7, 31, 15, 4, 0, 0, time.UTC)
	to := from.Add(2 * time.Minute)
	want := 0
	for _, m := range ms {
		if !m.at.Before(from) && m.at.Before(to) && m.level == "Error" {
			want++
		}
	}
	demo.Say("%d messages; %d errors between 15:04 and 15:06", len(ms), want)

	demo.Step("design 1: PartitionKey = date and hour: the read is cheap, every write hits one partition")
	byTime := demo.CreateTable(ctx, db, "LogByTime")
	var es []*tablestore.Entity
	for i, m := range ms {
		es = append(es, &tablestore.Entity{PartitionKey: m.at.Format("2006010215"), RowKey: fmt.Sprintf("%s_%06d", m.at.Format("0405"), i),
			Properties: map[string]any{"Level": m.level, "Source": m.source, "Message": m.text}})
	}
	partitions := insertAll(ctx, byTime, es)
	demo.Say("writes went to %d partition(s)", len(partitions))
	demo.Check(len(partitions) == 1, "time-keyed writes hit %d partitions", len(partitions))
	got := demo.All(ctx, byTime, tablestore.Query{Filter: "PartitionKey eq '2014073115' and RowKey ge '0400' and RowKey lt '0600' and Level eq 'Error'"}, demo.Range)
	demo.Check(len(got) == want, "design 1 found %d errors, want %d", len(got), want)

	demo.Step("design 2: PartitionKey = source: writes spread, the time range scans every partition")
	bySource := demo.CreateTable(ctx, db, "LogBySource")
	es = nil
	for i, m := range ms {
		es = append(es, &tablestore.Entity{PartitionKey: m.source, RowKey: fmt.Sprintf("%s_%06d", m.at.Format("20060102150405"), i),
			Properties: map[string]any{"Level": m.level, "Message": m.text}})
	}
	partitions = insertAll(ctx, bySource, es)
	demo.Say("writes went to %d partitions", len(partitions))
	demo.Check(len(partitions) == 4, "source-keyed writes hit %d partitions", len(partitions))
	got = demo.All(ctx, bySource, tablestore.Query{Filter: "RowKey ge '20140731150400' and RowKey lt '20140731150600' and Level eq 'Error'"}, demo.TableScan)
	demo.Check(len(got) == want, "design 2 found %d errors, want %d", len(got), want)

	demo.Step("the guide's answer: buffered blocks in files named service/yyyy/mm/dd/hhmm/n.log")
	logs := filepath.Join(root, "logs")
	writeLogFiles(logs, "web", ms)
	prefix := filepath.Join(logs, "web", "2014/07/31/1500")
	files, lines := readLogFiles(prefix, from, to, "Error")
	demo.Say("600 messages written as %d files; the prefix %s finds them", files, strings.TrimPrefix(prefix, root+string(filepath.Separator)))
	demo.Check(files == 6, "wrote %d files, want 6 blocks of 100", files)
	demo.Check(lines == want, "the files hold %d errors in the range, want %d", lines, want)
	demo.Done()
}
