package main

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestParseSDKFlags(t *testing.T) {
	c, err := parseSDKFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.entities != 100_000 || !slices.Equal(c.servers, []string{"tablestore", "azurite"}) {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = parseSDKFlags([]string{"-entities=2000", "-servers=azurite", "-gets=100"})
	if err != nil {
		t.Fatal(err)
	}
	if c.entities != 2000 || c.gets != 100 || !slices.Equal(c.servers, []string{"azurite"}) {
		t.Fatalf("parsed: %+v", c)
	}
	for _, bad := range [][]string{
		{"-entities=1500"},
		{"-entities=0"},
		{"-servers=cosmos"},
		{"-gets=10"},
		{"-workers=0"},
	} {
		if _, err := parseSDKFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestSDKEntity checks the SDK form of a record: keys, ten properties,
// and the annotated types read back as the SDK's own.
func TestSDKEntity(t *testing.T) {
	var rec record
	genRecord(&rec, 1234)
	body, err := sdkEntity(&rec)
	if err != nil {
		t.Fatal(err)
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatal(err)
	}
	if e.PartitionKey != rec.PK || e.RowKey != rec.RK || len(e.Properties) != propertyCount {
		t.Fatalf("got %s/%s with %d properties: %s", e.PartitionKey, e.RowKey, len(e.Properties), body)
	}
	if got := e.Properties["Score"]; got != aztables.EDMInt64(rec.Score) {
		t.Errorf("Score = %#v, want EDMInt64(%d)", got, rec.Score)
	}
	created, ok := e.Properties["Created"].(aztables.EDMDateTime)
	if !ok || !time.Time(created).Equal(ticksToTime(rec.Created)) {
		t.Errorf("Created = %#v, want %s", e.Properties["Created"], ticksToTime(rec.Created))
	}
	if e.Properties["Name"] != rec.Name {
		t.Errorf("Name = %#v, want %q", e.Properties["Name"], rec.Name)
	}
}

func TestVmHWM(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	v, err := vmHWM(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if v < 1<<20 {
		t.Errorf("peak RSS of this test %d bytes, want at least 1 MiB", v)
	}
	if _, err := vmHWM(-1); err == nil {
		t.Error("vmHWM(-1): no error")
	}
}

func TestCPUSeconds(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	before := cpuSeconds(os.Getpid())
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	if after := cpuSeconds(os.Getpid()); after <= before {
		t.Errorf("cpu seconds %v then %v after a busy loop of %d iterations", before, after, x)
	}
	if cpuSeconds(-1) != 0 {
		t.Error("cpuSeconds(-1) != 0")
	}
}
