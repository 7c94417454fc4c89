package azure_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/tablestoretest"
	"github.com/tablestore/tablestore/tablestoretest/azurite"
	"github.com/tablestore/tablestore/tablestoretest/modeltest"
)

// The model-based workload of tablestoretest/modeltest, the one that
// checks the embedded engine, runs here against the remote driver pointed
// at Azurite and at tablestore's own server. TABLESTORE_REMOTE_OPS sets
// the number of operations (default 300); TABLESTORE_SEED replays a seed,
// -modeltest.replay=<path> a saved operation log.

func TestModelAzurite(t *testing.T) {
	cs := azurite.Start(t)
	cfg := remoteConfig(t, "Azurite")
	cfg.Quirks = azuriteQuirks
	cfg.Quirks.NoKeyspaceOps = true // this driver's off tablestore's server; see TestExtensionsNotImplementedElsewhere
	// Azure has no indexes, change feed or expiry; the driver answers
	// NotImplemented for them off tablestore's server.
	cfg.Quirks.NoIndexes, cfg.Quirks.NoChangeFeed, cfg.Quirks.NoTTL = true, true, true
	modeltest.Run(t, opener(cs), cfg)
}

func TestModelServer(t *testing.T) {
	s := tablestoretest.NewServer(t)
	cfg := remoteConfig(t, "Server")
	// Range deletions, reverse reads, segments, indexes, the change feed
	// and expiry go through the extension endpoints; the workload moves
	// the server's clock to expire entities.
	cfg.Advance = s.Clock().Advance
	modeltest.Run(t, opener(s.ConnectionString()), cfg)
}

// azuriteQuirks are Azurite's own bugs (Azurite 3.37.0), each listed in
// the README's divergences; Azure Table Storage and tablestore's server
// have none of them.
var azuriteQuirks = modeltest.Quirks{
	// Entity operations on "BeTa" answer TableNotFound for a table
	// created as "Beta".
	TableNameCase: true,
	// A Double -0.0 reads back as 0 (JavaScript's JSON.stringify).
	NegativeZero: true,
	// Filters on user properties: "Price lt 5L" on a Double Price
	// answers 500; "S ne 5" on a string S matches nothing (Azure: true
	// across types); Guid values do not order.
	PropertyFilters: true,
	// "Timestamp le datetime'…'" compares milliseconds.
	TimestampFilters: true,
}

// opener opens the remote DB; every call reaches the same service, so the
// workload's reopens check that nothing lives in the client.
func opener(connectionString string) modeltest.Opener {
	return func(t *testing.T, _ func() time.Time) *ts.DB {
		db, err := azure.Open(connectionString, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return db
	}
}

func remoteConfig(t *testing.T, name string) modeltest.Config {
	return modeltest.Config{Name: name, Seed: seed(t), Ops: envInt(t, "TABLESTORE_REMOTE_OPS", 300), Reopens: 1}
}

func seed(t *testing.T) int64 {
	s := envInt(t, "TABLESTORE_SEED", 0)
	if s == 0 {
		s = int(time.Now().UnixNano() % (1 << 40))
	}
	t.Logf("seed %d (replay with TABLESTORE_SEED=%d)", s, s)
	return int64(s)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("bad %s %q", name, v)
	}
	return n
}
