package tablestore

// checkIfMatch checks the syntax of an If-Match value. A well-formed
// value is ETagAny ("*") or an HTTP entity-tag (RFC 9110, section 8.8.3):
// an optional weak prefix W/, then a double-quoted string of visible
// ASCII characters other than '"' (non-ASCII bytes are allowed too, as
// the RFC's obs-text). That covers every ETag this library issues,
// W/"datetime'2026-11-22T10%3A00%3A00.1234567Z'", and every form an Azure
// store has issued (W/"0x8D...", "0x8D..."), so an ETag read from Azure is
// never refused as malformed; it simply does not match ours.
// Errors: InvalidInput for anything else (no quotes, an empty value,
// spaces, a quote inside).
func checkIfMatch(tag ETag) error {
	if tag == ETagAny {
		return nil
	}
	s := string(tag)
	if len(s) >= 2 && s[0] == 'W' && s[1] == '/' {
		s = s[2:]
	}
	ok := len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
	for i := 1; ok && i < len(s)-1; i++ {
		c := s[i]
		ok = c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80
	}
	if !ok {
		return newError(CodeInvalidInput, "the if-match value %s is not an etag: want * or an HTTP entity-tag such as W/\"...\"",
			quoteShort(string(tag)))
	}
	return nil
}
