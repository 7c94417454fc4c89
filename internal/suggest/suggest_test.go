package suggest

import "testing"

func TestNearest(t *testing.T) {
	ops := []string{"InsertEntity", "QueryEntities", "QueryEntity", "EntityGroupTransaction", "CreateTable"}
	for _, tc := range []struct{ name, want string }{
		{"InsertEntiy", "InsertEntity"},
		{"insertentity", "InsertEntity"},
		{"QueryEntites", "QueryEntities"},
		{"QueryEntity", ""}, // a candidate itself
		{"Batch", ""},       // nothing close
		{"CraeteTable", "CreateTable"},
	} {
		if got := Nearest(tc.name, ops); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
