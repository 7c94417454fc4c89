package tablestore

import (
	"strings"
	"testing"
)

// TestActionTypeString checks the names against aztables' TransactionType
// values (constants.go of aztables v1.4.1), and that no message built
// from them reads "a int64"-style.
func TestActionTypeString(t *testing.T) {
	want := map[ActionType]string{
		ActionInsert:        "add",
		ActionUpdateMerge:   "updatemerge",
		ActionUpdateReplace: "updatereplace",
		ActionUpsertMerge:   "insertmerge",
		ActionUpsertReplace: "insertreplace",
		ActionDelete:        "delete",
	}
	for a, name := range want {
		if got := a.String(); got != name {
			t.Errorf("%d: String() = %q, want %q", uint8(a), got, name)
		}
	}
	if got := ActionType(99).String(); got != "ActionType(99)" {
		t.Errorf("unknown action: %q", got)
	}
}

// TestNoArticleErrors checks that a conversion error names the field's
// type without a wrong article ("a int8").
func TestNoArticleErrors(t *testing.T) {
	var v struct{ N int8 }
	err := UnmarshalEntity(&Entity{Properties: map[string]any{"N": int32(1000)}}, &v)
	if err == nil {
		t.Fatal("1000 fits no int8")
	}
	for _, bad := range []string{" a int", " a uint", " a Edm.Int", " a Edm.E"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("message %q contains %q", err, bad)
		}
	}
}
