package server

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// batchBoundary is the outer boundary of the test batches.
const batchBoundary = "batch_b0"

// buildBatch returns a $batch body of exactly total bytes: ops inserts
// into table things, all with PartitionKey pk, RowKey "000".."ops-1",
// and two String properties A and B of 'x' sized to reach total. It fails
// t when total cannot be reached with strings of at most 32,768
// characters.
func buildBatch(t testing.TB, pk string, ops, total int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("--" + batchBoundary + "\r\nContent-Type: multipart/mixed; boundary=changeset_c0\r\n\r\n")
	part := func(i, a, c int) {
		b.WriteString("--changeset_c0\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString("POST http://127.0.0.1/devstoreaccount1/things HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n")
		fmt.Fprintf(&b, `{"PartitionKey":%q,"RowKey":"%03d","A":"%s","B":"%s"}`, pk, i, strings.Repeat("x", a), strings.Repeat("x", c))
		b.WriteString("\r\n")
	}
	tail := "--changeset_c0--\r\n--" + batchBoundary + "--\r\n"
	// Measure the envelope with empty strings, then share the rest.
	probe := b.Len()
	for i := 0; i < ops; i++ {
		part(i, 0, 0)
	}
	fixed := b.Len() - probe + len(tail) + probe
	fill := total - fixed
	if fill < 0 || fill > ops*2*32768 {
		t.Fatalf("a batch of %d operations cannot be %d bytes", ops, total)
	}
	b.Truncate(probe)
	for i := 0; i < ops; i++ {
		share := fill / ops
		if i < fill%ops {
			share++
		}
		part(i, share/2, share-share/2)
	}
	b.WriteString(tail)
	if b.Len() != total {
		t.Fatalf("batch is %d bytes, want %d", b.Len(), total)
	}
	return b.Bytes()
}
