package driver

import "testing"

// TestChangeOpString: every operation has its name, the entity writes'
// names follow ActionType's values, and any other value is "unknown".
func TestChangeOpString(t *testing.T) {
	want := map[ChangeOp]string{
		ChangeOp(ActionInsert): "insert",
		ChangeOp(ActionDelete): "delete",
		ChangeDeleteRange:      "deleteRange",
		ChangeDropTable:        "dropTable",
		ChangeExpire:           "expire",
		0:                      "unknown",
		ChangeExpire + 1:       "unknown",
		255:                    "unknown",
	}
	for op, name := range want {
		if got := op.String(); got != name {
			t.Errorf("ChangeOp(%d).String() = %q, want %q", uint8(op), got, name)
		}
	}
}

// TestParseChangeOp: ParseChangeOp inverts ChangeOp's String for every
// operation and refuses other names, "unknown" included.
func TestParseChangeOp(t *testing.T) {
	for op := ChangeOp(1); op <= ChangeExpire; op++ {
		if got, ok := ParseChangeOp(op.String()); !ok || got != op {
			t.Errorf("ParseChangeOp(%q) = %d, %v, want %d", op.String(), got, ok, op)
		}
	}
	for _, s := range []string{"", "unknown", "Insert", "drop"} {
		if got, ok := ParseChangeOp(s); ok {
			t.Errorf("ParseChangeOp(%q) = %d, true", s, got)
		}
	}
}

// TestCommitKindNames: every kind has its name, ParseCommitKind inverts
// String, and other values and names are unknown.
func TestCommitKindNames(t *testing.T) {
	want := map[CommitKind]string{CommitSingle: "single", CommitBulk: "bulk", CommitRangeDelete: "rangeDelete",
		CommitDropTable: "dropTable", CommitSweep: "sweep", CommitSweep + 1: "unknown", 255: "unknown"}
	for k, name := range want {
		if got := k.String(); got != name {
			t.Errorf("CommitKind(%d).String() = %q, want %q", uint8(k), got, name)
		}
		if got, ok := ParseCommitKind(name); ok != (name != "unknown") || ok && got != k {
			t.Errorf("ParseCommitKind(%q) = %d, %v", name, got, ok)
		}
	}
	if _, ok := ParseCommitKind("Single"); ok {
		t.Error("ParseCommitKind matched a name in another case")
	}
}

// TestImageModeNames: every mode has its name, ParseImageMode inverts
// String, and other values and names are unknown.
func TestImageModeNames(t *testing.T) {
	want := map[ImageMode]string{ImagesKeysOnly: "keysOnly", ImagesNew: "new", ImagesNew + 1: "unknown", 255: "unknown"}
	for m, name := range want {
		if got := m.String(); got != name {
			t.Errorf("ImageMode(%d).String() = %q, want %q", uint8(m), got, name)
		}
		if got, ok := ParseImageMode(name); ok != (name != "unknown") || ok && got != m {
			t.Errorf("ParseImageMode(%q) = %d, %v", name, got, ok)
		}
	}
	for _, s := range []string{"", "keys", "New"} {
		if got, ok := ParseImageMode(s); ok {
			t.Errorf("ParseImageMode(%q) = %d, true", s, got)
		}
	}
}
