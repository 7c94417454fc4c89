package driver

import "testing"

// TestIndexStateNames: every state has its name, ParseIndexState
// inverts String, and other values and names are unknown.
func TestIndexStateNames(t *testing.T) {
	want := map[IndexState]string{IndexBuilding: "building", IndexReady: "ready", 0: "unknown", IndexReady + 1: "unknown"}
	for s, name := range want {
		if got := s.String(); got != name {
			t.Errorf("IndexState(%d).String() = %q, want %q", uint8(s), got, name)
		}
		if got, ok := ParseIndexState(name); ok != (name != "unknown") || ok && got != s {
			t.Errorf("ParseIndexState(%q) = %d, %v", name, got, ok)
		}
	}
}
