package server

import "testing"

// TestHostAccountLabels: the account a Host names, label by label.
func TestHostAccountLabels(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1:10002":                 "",
		"127.0.0.1":                       "",
		"[::1]:10002":                     "",
		"localhost:10002":                 "",
		"acct.table.core.windows.net":     "acct",
		"ACCT.Table.core.windows.net:443": "acct",
		"acct-secondary.table.example":    "acct-secondary",
		"acct.table":                      "",
		"acct.table.":                     "acct",
		"acct.blob.core.windows.net":      "",
		"acct.tables.core.windows.net":    "",
		"table.core.windows.net":          "",
		"":                                "",
	} {
		if got := hostAccount(host); got != want {
			t.Errorf("hostAccount(%q) = %q, want %q", host, got, want)
		}
	}
}
