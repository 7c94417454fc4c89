package azure

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// A query's resume point is Azure's continuation pair,
// x-ms-continuation-NextPartitionKey and -NextRowKey, which the root
// package puts in its opaque continuation token. The token holds keys
// that follow the key rules (no / \ # ? or control characters), while the
// service's values are its own: Azure's look like "1!8!U21pdGg-", Azurite's
// are base64 and may hold '/'. A value that follows the rules travels
// as it is; any other, and any that starts with '~', travels as '~' and
// its unpadded base64url form.
//
// The key rules also cap a key at 1,024 UTF-16 code units, so a
// continuation value longer than that (a service's encoding of a key of
// about 700 bytes or more) gives a token the library refuses to resume.

const escapeMark = "~"

// encodePosition returns the resume-point form of one continuation value.
func encodePosition(v string) string {
	if plainPosition(v) {
		return v
	}
	return escapeMark + base64.RawURLEncoding.EncodeToString([]byte(v))
}

// decodePosition reverses encodePosition. Errors: InvalidInput for a
// malformed escaped value.
func decodePosition(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, escapeMark)
	if !ok {
		return s, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", &driver.Error{Code: edm.CodeInvalidInput, Message: "malformed continuation token: bad escaped azure continuation value"}
	}
	return string(b), nil
}

func plainPosition(v string) bool {
	if strings.HasPrefix(v, escapeMark) || !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || strings.ContainsRune(`/\#?`, r) {
			return false
		}
	}
	return true
}
