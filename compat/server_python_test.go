package compat

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/tablestoretest"
)

// pythonWithTables returns Debian's python3 when it has azure-data-tables
// (package python3-azure). Without it the test is skipped, unless
// TABLESTORE_REQUIRE_PYTHON is set (CI installs the package), when it
// fails.
func pythonWithTables(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if p, err := exec.LookPath(py); err == nil {
			if exec.Command(p, "-c", "import azure.data.tables").Run() == nil {
				return p
			}
		}
	}
	if os.Getenv("TABLESTORE_REQUIRE_PYTHON") != "" {
		t.Fatal("no python3 with azure.data.tables (apt-get install python3-azure)")
	}
	t.Skip("no python3 with azure.data.tables (apt-get install python3-azure)")
	return ""
}

// runPython runs compat/python/scenarios.py with env, bounded at two
// minutes, and fails t unless every scenario passed.
func runPython(t *testing.T, py string, env ...string) {
	t.Helper()
	cmd := exec.Command(py, filepath.Join("python", "scenarios.py"))
	cmd.Env = append(os.Environ(), env...)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("python scenarios timed out:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), " 0 failed") {
		t.Fatalf("python scenarios: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestPythonTLS drives azure-data-tables 12.4 (Debian's python3-azure)
// over https, the CA given as connection_verify.
func TestPythonTLS(t *testing.T) {
	py := pythonWithTables(t)
	srv := tablestoretest.NewTLSServerWithOptions(t, nil)
	runPython(t, py, "TABLES_CONNECTION_STRING="+srv.ConnectionString(), "TABLES_CA_FILE="+srv.TLS().CAFile,
		"TABLES_SCENARIOS=tls_basics")
}

// TestPythonEmptyKeys drives azure-data-tables with empty PartitionKey
// and RowKey values, which Azure allows: writes, reads, a transaction, a
// filter on the empty partition and paging across the empty keys.
func TestPythonEmptyKeys(t *testing.T) {
	py := pythonWithTables(t)
	srv := tablestoretest.NewTLSServerWithOptions(t, nil)
	runPython(t, py, "TABLES_CONNECTION_STRING="+srv.ConnectionString(), "TABLES_CA_FILE="+srv.TLS().CAFile,
		"TABLES_SCENARIOS=empty_keys")
}

// TestPythonHealthCheck drives the Azure client libraries' health-check
// query, the filter false, through azure-data-tables on tables and
// entities, with true and folded constants beside it.
func TestPythonHealthCheck(t *testing.T) {
	py := pythonWithTables(t)
	srv := tablestoretest.NewTLSServerWithOptions(t, nil)
	runPython(t, py, "TABLES_CONNECTION_STRING="+srv.ConnectionString(), "TABLES_CA_FILE="+srv.TLS().CAFile,
		"TABLES_SCENARIOS=health_check")
}

// TestPythonCosmos drives azure-data-tables against the Cosmos flavor at
// localhost on a port other than 10002, which the SDK takes for Cosmos
// DB: its Cosmos path (merges as POST with X-HTTP-Method) and the
// differences (order, property order, paging, limits, table name case).
func TestPythonCosmos(t *testing.T) {
	py := pythonWithTables(t)
	srv := tablestoretest.NewCosmosServer(t)
	runPython(t, py, "TABLES_CONNECTION_STRING="+srv.CosmosConnectionString(), "TABLES_SCENARIOS=cosmos,tls_basics")
	merged := false
	for _, r := range srv.Requests() {
		merged = merged || r.Operation == "MergeEntity" && r.Method == http.MethodPost
	}
	if !merged {
		t.Error("the SDK's Cosmos path sent no merge as POST")
	}
}

// TestPythonTestkit drives the test kit's HTTP controls
// (tablestoretest.ControlHandler, as `tablestore serve --testkit` mounts
// them) from Python: snapshot and restore, two injected ServerBusy
// answers the SDK retries, a SAS that expires when the clock moves on,
// Timestamps that follow the clock, and a reset.
func TestPythonTestkit(t *testing.T) {
	py := pythonWithTables(t)
	kit, err := tablestoretest.NewKit(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kit.Close() })
	rest := httptest.NewServer(kit.Handler())
	t.Cleanup(rest.Close)
	ctl := httptest.NewServer(tablestoretest.ControlHandler(kit))
	t.Cleanup(ctl.Close)
	cs := "DefaultEndpointsProtocol=http;AccountName=" + kit.Account() + ";AccountKey=" + kit.Key() +
		";TableEndpoint=" + rest.URL + "/" + kit.Account() + ";"
	runPython(t, py, "TABLES_CONNECTION_STRING="+cs, "TABLES_TESTKIT_URL="+ctl.URL+tablestoretest.ControlPrefix,
		"TABLES_SCENARIOS=testkit")
}
