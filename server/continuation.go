package server

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
)

// Continuation headers carry each key in an opaque, ASCII-only form shaped
// like Azure's ("1!8!U21pdGg"): version, length of the payload, base64url
// of the key. It keeps any key (empty, non-ASCII, with quotes) intact in a
// header, and is never empty, so a client always sees that more remains.

func encodeNextKey(k string) string {
	p := base64.RawURLEncoding.EncodeToString([]byte(k))
	return "1!" + strconv.Itoa(len(p)) + "!" + p
}

// decodeNextKey reverses encodeNextKey; a value not in that form is taken
// as the key itself.
func decodeNextKey(s string) string {
	rest, ok := strings.CutPrefix(s, "1!")
	if !ok {
		return s
	}
	n, p, ok := strings.Cut(rest, "!")
	if !ok {
		return s
	}
	if l, err := strconv.Atoi(n); err != nil || l != len(p) {
		return s
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return s
	}
	return string(b)
}

// continuationFromQuery turns the NextPartitionKey/NextRowKey query
// parameters into the library's token. Errors: InvalidInput.
func continuationFromQuery(npk, nrk string) (string, error) {
	if npk == "" && nrk == "" {
		return "", nil
	}
	return tablestore.ContinuationFromNext(decodeNextKey(npk), decodeNextKey(nrk))
}
