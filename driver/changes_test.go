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
