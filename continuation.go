package tablestore

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/tablestore/tablestore/internal/plan"
)

// A continuation token names the next (PartitionKey, RowKey) position a
// query reads and, when the driver gives one, the identity of the table
// the previous page read (the embedded engine's table ID, in decimal); it
// holds no raw stored key and no server state, so tokens never expire,
// and resuming is one seek.
//
// Encoding: base64url without padding of
//
//	version (1 byte: 1 forward, 2 reverse (reading from the position
//	down), 3 forward with a table identity, 4 reverse with one)
//	versions 3 and 4 only: uvarint length of the table identity, its bytes
//	uvarint length of PartitionKey, PartitionKey bytes, RowKey bytes
//	CRC-32C (4 bytes, big-endian) of everything before it
//
// The checksum catches damaged and hand-edited tokens; it is not a secret.
// A forged token that passes it still only names a position: both keys are
// checked against the key rules, so it can move a query forward or back
// within its own table and nowhere else. The identity makes a token from
// a page of another table, or of a table since deleted or re-created
// under the same name, fail with TableNotFound. Nothing ties a token to
// its filter: one from another query of the same table resumes this query
// at the named position (as Azure's NextPartitionKey/NextRowKey would).

const (
	continuationVersion             = 1
	reverseContinuationVersion      = 2
	continuationTableVersion        = 3
	reverseContinuationTableVersion = 4
	maxTableIdentityBytes           = 64
)

// maxContinuationKeyBytes bounds the bytes of each key of a token: 1024
// UTF-16 code units (validateKey's limit) take at most 4 KiB of UTF-8. It
// lets decoding reject an oversized token before any other work.
const maxContinuationKeyBytes = 4 << 10

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// encodeContinuation returns the token for position k of a forward or
// reverse query in the table with identity table ("" for none).
func encodeContinuation(k plan.Key, reverse bool, table string) string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(table)+len(k.PartitionKey)+len(k.RowKey)+4)
	version := byte(continuationVersion)
	if table != "" {
		version = continuationTableVersion
	}
	if reverse {
		version++
	}
	b = append(b, version)
	if table != "" {
		b = binary.AppendUvarint(b, uint64(len(table)))
		b = append(b, table...)
	}
	b = binary.AppendUvarint(b, uint64(len(k.PartitionKey)))
	b = append(b, k.PartitionKey...)
	b = append(b, k.RowKey...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinuation parses a token into its position, its direction and
// its table identity ("" when it has none). Every failure is an
// InvalidInput *Error; it never panics, whatever the input.
func decodeContinuation(tok string) (k plan.Key, reverse bool, table string, err error) {
	bad := func(why string) (plan.Key, bool, string, error) {
		return plan.Key{}, false, "", newError(CodeInvalidInput, "malformed continuation token: %s", why)
	}
	if len(tok) > 2*(2*maxContinuationKeyBytes+maxTableIdentityBytes+24) {
		return bad("too long")
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return bad("not base64url")
	}
	if len(b) < 1+1+4 {
		return bad("too short")
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(sum) {
		return bad("checksum mismatch")
	}
	rest := body[1:]
	switch body[0] {
	case continuationVersion, reverseContinuationVersion:
	case continuationTableVersion, reverseContinuationTableVersion:
		n, w := binary.Uvarint(rest)
		if w <= 0 || n == 0 || n > maxTableIdentityBytes || n > uint64(len(rest)-w) {
			return bad("bad table identity length")
		}
		table, rest = string(rest[w:w+int(n)]), rest[w+int(n):]
	default:
		return bad("unknown version")
	}
	n, w := binary.Uvarint(rest)
	rest = rest[max(w, 0):]
	if w <= 0 || n > uint64(len(rest)) {
		return bad("bad partition key length")
	}
	k = plan.Key{PartitionKey: string(rest[:n]), RowKey: string(rest[n:])}
	if err := checkContinuationKey(k.PartitionKey); err != "" {
		return bad("partition key: " + err)
	}
	if err := checkContinuationKey(k.RowKey); err != "" {
		return bad("row key: " + err)
	}
	return k, body[0] == reverseContinuationVersion || body[0] == reverseContinuationTableVersion, table, nil
}

// checkContinuationKey applies the key rules of validateKey to one key of
// a position, except that a position's key may be empty (Azure's
// NextRowKey may be). Control characters are among the bytes it rejects,
// so a position stays inside its table's key span. It returns why s is not
// acceptable, or "".
func checkContinuationKey(s string) string {
	if s == "" {
		return ""
	}
	if err := validateKey("key", s); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e.Message
		}
		return err.Error()
	}
	return ""
}

// NextPartitionKey returns the PartitionKey of the position the next page
// starts at, Azure's x-ms-continuation-NextPartitionKey; "" when the query
// is complete (or the Continuation is not a valid token).
func (p *Page) NextPartitionKey() string {
	k, ok := p.next()
	if !ok {
		return ""
	}
	return k.PartitionKey
}

// NextRowKey returns the RowKey of the position the next page starts at,
// Azure's x-ms-continuation-NextRowKey; "" when the query is complete.
func (p *Page) NextRowKey() string {
	k, ok := p.next()
	if !ok {
		return ""
	}
	return k.RowKey
}

func (p *Page) next() (plan.Key, bool) {
	if p == nil || p.Continuation == "" {
		return plan.Key{}, false
	}
	k, _, _, err := decodeContinuation(p.Continuation)
	return k, err == nil
}

// ContinuationFromNext returns the token for Azure's continuation pair
// (NextPartitionKey, NextRowKey), such as a client that speaks Azure's
// protocol sends back. Two empty values mean no continuation and give "".
// Keys that break the key rules are InvalidInput.
func ContinuationFromNext(nextPartitionKey, nextRowKey string) (string, error) {
	if nextPartitionKey == "" && nextRowKey == "" {
		return "", nil
	}
	for _, s := range [2]string{nextPartitionKey, nextRowKey} {
		if why := checkContinuationKey(s); why != "" {
			return "", newError(CodeInvalidInput, "invalid continuation key %q: %s", s, why)
		}
	}
	return encodeContinuation(plan.Key{PartitionKey: nextPartitionKey, RowKey: nextRowKey}, false, ""), nil
}
