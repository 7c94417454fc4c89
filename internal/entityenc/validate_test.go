package entityenc

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/limits"
)

// TestValidateDecisions runs testdata/codec_validate: which keys, property
// names and $select lists are accepted, and with which code.
//
//	key which=<PartitionKey|RowKey>   input: one value per line
//	name                              input: one name per line
//	select                            input: the names of one $select
//
// A line that starts with '"' is a Go string literal (for control
// characters and invalid UTF-8); a line `repeat <n> <s>` stands for s
// repeated n times.
func TestValidateDecisions(t *testing.T) {
	datadriven.RunTest(t, "testdata/codec_validate", func(t *testing.T, d *datadriven.TestData) string {
		var lines []string
		if d.Input != "" {
			for _, l := range strings.Split(d.Input, "\n") {
				lines = append(lines, decodeTestLine(t, l))
			}
		}
		var out strings.Builder
		switch d.Cmd {
		case "key":
			var which string
			d.ScanArgs(t, "which", &which)
			for i, l := range lines {
				fmt.Fprintf(&out, "%s: %s\n", shortLine(d.Input, i), errString(ValidateKey(which, l)))
			}
		case "name":
			for i, l := range lines {
				fmt.Fprintf(&out, "%s: %s\n", shortLine(d.Input, i), errString(ValidatePropertyName(l)))
			}
		case "select":
			fmt.Fprintf(&out, "%s\n", errString(ValidateSelect(lines)))
		default:
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		return out.String()
	})
}

func decodeTestLine(t *testing.T, l string) string {
	if strings.HasPrefix(l, `"`) {
		s, err := strconv.Unquote(l)
		require.NoError(t, err, l)
		return s
	}
	if rest, ok := strings.CutPrefix(l, "repeat "); ok {
		n, s, _ := strings.Cut(rest, " ")
		count, err := strconv.Atoi(n)
		require.NoError(t, err, l)
		return strings.Repeat(s, count)
	}
	return l
}

func shortLine(input string, i int) string {
	return strings.Split(input, "\n")[i]
}

// errString prints an error as "Code: message", or "ok".
func errString(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(*Error); ok {
		return string(e.Code) + ": " + e.Message
	}
	return "untyped: " + err.Error()
}

// checkEntityLimits checks a complete entity as the write path does:
// CheckLimits of its property count and its size by Azure's formula.
func checkEntityLimits(pk, rk string, props []driver.Property) error {
	return CheckLimits(len(props), limits.EntitySize(pk, rk, props))
}

func TestCheckEntityLimits(t *testing.T) {
	many := func(n int) []driver.Property {
		props := make([]driver.Property, n)
		for i := range props {
			props[i] = driver.Property{Name: fmt.Sprintf("P%03d", i), Value: edm.Value{Type: edm.TypeInt32}}
		}
		return props
	}
	require.NoError(t, checkEntityLimits("pk", "rk", many(252)))
	err := checkEntityLimits("pk", "rk", many(253))
	require.Equal(t, edm.CodeTooManyProperties, err.(*Error).Code)

	// 16 binary values of 64 KiB: 4 + 2*4 + 16*(8+2*3+4+65536) = 1048876 > 1 MiB.
	big := make([]driver.Property, 16)
	for i := range big {
		big[i] = driver.Property{Name: fmt.Sprintf("B%02d", i), Value: edm.Value{Type: edm.TypeBinary, Bytes: make([]byte, 65536)}}
	}
	require.Equal(t, 1048876, limits.EntitySize("pk", "rk", big))
	err = checkEntityLimits("pk", "rk", big)
	require.Equal(t, edm.CodeEntityTooLarge, err.(*Error).Code)

	// Shrinking the last value to fit exactly at 1 MiB is accepted.
	big[15].Value.Bytes = make([]byte, 65536-(1048876-limits.MaxEntityBytes))
	require.Equal(t, limits.MaxEntityBytes, limits.EntitySize("pk", "rk", big))
	require.NoError(t, checkEntityLimits("pk", "rk", big))
}

// TestPlainKey checks ValidateKey's fast path against its exact checks:
// plainKey may only accept what they accept.
func TestPlainKey(t *testing.T) {
	exact := func(v string) bool {
		for _, r := range v {
			if r >= 0x80 || r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == '#' || r == '?' {
				return false
			}
		}
		return true
	}
	for n := 1; n <= 19; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("k", n))
				b[pos] = byte(c)
				v := string(b)
				require.Equal(t, exact(v), plainKey(v), "%q", v)
				if plainKey(v) {
					require.NoError(t, ValidateKey("RowKey", v))
				}
			}
		}
	}
	require.True(t, plainKey("partition-0001 row_2.x"))
}
