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

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"ab", "ba", 1}, // an adjacent swap is one edit
		{"", "abc", 3},
		{"kitten", "sitting", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
