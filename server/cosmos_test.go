package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/tablestore/tablestore"
)

// TestCosmosExchanges replays testdata/cosmos: HTTP exchanges with the
// Cosmos flavor. "new [option...]" starts a fresh store and handler:
// storage-limits, case-insensitive, cors, storage-wire,
// storage-continuation, charge, order=insertion|seeded|sorted, seed=N,
// ru=N (per second), per-table. "request" is as in TestExchanges, signed
// for the Cosmos account; the output shows every response header but
// Date and Content-Length. "advance D" moves the handler's clock.
func TestCosmosExchanges(t *testing.T) {
	var h http.Handler
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	datadriven.RunTest(t, "testdata/cosmos", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "new":
			c := &Cosmos{}
			for _, a := range d.CmdArgs {
				switch a.Key {
				case "storage-limits":
					c.StorageLimits = true
				case "case-insensitive":
					c.CaseInsensitiveTables = true
				case "cors":
					c.CORS = true
				case "storage-wire":
					c.StorageWire = true
				case "storage-continuation":
					c.StorageContinuation = true
				case "charge":
					c.ChargeHeader = true
				case "per-table":
					c.ThroughputPerTable = true
				case "order":
					c.Order = map[string]Order{"insertion": OrderInsertion, "seeded": OrderSeeded, "sorted": OrderSorted}[a.Vals[0]]
				case "seed":
					c.Seed, _ = strconv.ParseUint(a.Vals[0], 10, 64)
				case "ru":
					c.RequestUnitsPerSecond, _ = strconv.ParseFloat(a.Vals[0], 64)
				default:
					t.Fatalf("unknown option %s", a.Key)
				}
			}
			db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			h, err = New(db, &Options{Account: CosmosDevAccount, Keys: []string{CosmosDevKey}, Cosmos: c,
				Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			return ""
		case "advance":
			dur, err := time.ParseDuration(d.CmdArgs[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(dur)
			return ""
		case "request":
			r := parseTestRequest(t, d.Input, d.HasArg("crlf"))
			r.Host = "localhost:8902"
			signLite(r, CosmosDevAccount, CosmosDevKey, time.Now())
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return formatCosmosResponse(w.Result())
		default:
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		}
	})
}

// formatCosmosResponse prints the status, every header but Date and
// Content-Length, and the body, masked as formatResponse masks them.
func formatCosmosResponse(resp *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	var names []string
	for k := range resp.Header {
		if k != "Date" && k != "Content-Length" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\n", k, mask(resp.Header[k][0]))
	}
	body, _ := io.ReadAll(resp.Body)
	if len(body) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(mask(string(body)), "\r\n", "⏎\n"), "\\r\\n", "⏎"))
		if !strings.HasSuffix(string(body), "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
