package compat

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/tablestoretest"
)

// azureCLI returns the az command (Debian's package azure-cli). Without
// it the test is skipped, unless TABLESTORE_REQUIRE_AZ is set (CI
// installs the package), when it fails.
func azureCLI(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("az"); err == nil {
		return p
	}
	if os.Getenv("TABLESTORE_REQUIRE_AZ") != "" {
		t.Fatal("no az command (apt-get install azure-cli)")
	}
	t.Skip("no az command (apt-get install azure-cli)")
	return ""
}

// runAz runs `az storage ARGS --connection-string CS` with its own
// configuration directory and no telemetry, bounded at a minute, and
// decodes its JSON output into out (when out is not nil).
func runAz(t *testing.T, az, cs string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, az, append(append([]string{"storage"}, args...), "--connection-string", cs, "--output", "json")...)
	cmd.Env = append(os.Environ(), "AZURE_CONFIG_DIR="+t.TempDir(), "AZURE_CORE_COLLECT_TELEMETRY=false",
		"AZURE_CORE_ONLY_SHOW_ERRORS=true", "AZURE_CORE_NO_COLOR=true")
	got, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("az storage %s: %v\n%s%s", strings.Join(args, " "), err, got, stderr)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("az storage %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, got)
		}
	}
}

// TestAzureCLIProbe drives the Azure CLI's table commands (create, insert,
// merge, query, delete) against the Storage server and the Cosmos DB
// flavor, each through its connection string. A query shows the flavor:
// Storage answers in key order ("10" before "2"), Cosmos in the order
// written.
func TestAzureCLIProbe(t *testing.T) {
	az := azureCLI(t)
	for _, tc := range []struct {
		name  string
		cs    func() string
		order []string
	}{
		{"storage", func() string { return tablestoretest.NewServer(t).ConnectionString() }, []string{"10", "2"}},
		{"cosmos", func() string { return tablestoretest.NewCosmosServer(t).CosmosConnectionString() }, []string{"2", "10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.cs()
			var created struct{ Created bool }
			runAz(t, az, cs, &created, "table", "create", "--name", "azprobe")
			if !created.Created {
				t.Fatal("table create: not created")
			}
			for _, rk := range []string{"2", "10"} {
				runAz(t, az, cs, nil, "entity", "insert", "-t", "azprobe", "-e", "PartitionKey=p", "RowKey="+rk, "n=1")
			}
			runAz(t, az, cs, nil, "entity", "merge", "-t", "azprobe", "-e", "PartitionKey=p", "RowKey=2", "m=2")
			var page struct {
				Items []map[string]any
			}
			runAz(t, az, cs, &page, "entity", "query", "-t", "azprobe")
			var order []string
			for _, e := range page.Items {
				order = append(order, e["RowKey"].(string))
			}
			if strings.Join(order, ",") != strings.Join(tc.order, ",") {
				t.Fatalf("query order %v, want %v", order, tc.order)
			}
			var merged map[string]any
			runAz(t, az, cs, &merged, "entity", "show", "-t", "azprobe", "--partition-key", "p", "--row-key", "2")
			if merged["m"] != float64(2) || merged["n"] != float64(1) {
				t.Fatalf("merged entity %v: want n=1 and m=2", merged)
			}
			runAz(t, az, cs, nil, "entity", "delete", "-t", "azprobe", "--partition-key", "p", "--row-key", "2")
			runAz(t, az, cs, &page, "entity", "query", "-t", "azprobe")
			if len(page.Items) != 1 {
				t.Fatalf("after the delete the query gives %d entities, want 1", len(page.Items))
			}
		})
	}
}
