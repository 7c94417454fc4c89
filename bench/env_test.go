package main

import "testing"

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "go run ."},
		{[]string{"-records", "1000", "-http", ""}, "go run . -records 1000 -http ''"},
		{[]string{"-sides", "typed,pebble"}, "go run . -sides typed,pebble"},
		{[]string{"-out", "a b"}, "go run . -out 'a b'"},
		{[]string{"-x", "it's"}, `go run . -x 'it'\''s'`},
		{[]string{"-y", "$HOME"}, "go run . -y '$HOME'"},
	} {
		if got := commandLine("go run .", tc.args); got != tc.want {
			t.Errorf("commandLine(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}
