package wire

// AppendEntityPath appends an entity's address relative to the service
// root, table(PartitionKey='pk',RowKey='rk'), and returns the extended
// buffer. Each key is written as an OData string literal (quotes doubled)
// and percent-encoded as url.PathEscape encodes a path segment, except
// that the quotes stay as they are: the form of Azure's Location headers
// and odata.editLink, in which the JavaScript SDK finds RowKey='…'. The
// table is copied as it is. It allocates nothing when dst has room.
//
// The keys' part holds only bytes that need no escaping in a JSON string
// (letters, digits, "-_.~$&+:=@'(),%" and the hex digits of escapes).
func AppendEntityPath(dst []byte, table, pk, rk string) []byte {
	dst = append(dst, table...)
	return appendKeysPath(dst, pk, rk)
}

// EntityPath is AppendEntityPath as a string.
func EntityPath(table, pk, rk string) string {
	return string(AppendEntityPath(make([]byte, 0, len(table)+len(pk)+len(rk)+32), table, pk, rk))
}

// appendKeysPath appends the part of an entity's path after the table.
func appendKeysPath(dst []byte, pk, rk string) []byte {
	dst = append(dst, "(PartitionKey="...)
	dst = appendKeyLiteral(dst, pk)
	dst = append(dst, ",RowKey="...)
	dst = appendKeyLiteral(dst, rk)
	return append(dst, ')')
}

// appendKeyLiteral appends s quoted as an OData literal and
// percent-encoded for a path segment, quotes kept.
func appendKeyLiteral(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			dst = append(dst, '\'', '\'')
		case pathSafe(c):
			dst = append(dst, c)
		default:
			dst = append(dst, '%', hex[c>>4], hex[c&0xf])
		}
	}
	return append(dst, '\'')
}

// pathSafe reports whether url.PathEscape leaves c as it is: the
// unreserved characters and the sub-delimiters a path segment allows
// ("$&+:=@"), but not "/;,?".
func pathSafe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '~', '$', '&', '+', ':', '=', '@':
		return true
	}
	return false
}
