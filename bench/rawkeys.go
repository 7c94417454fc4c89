package main

import "encoding/binary"

// rawTableID is the table ID the raw Pebble side puts in front of its
// keys, following tablestore's key layout.
const rawTableID = 1

// rawKey appends the data key of (pk, rk) in tablestore's layout:
// 8-byte big-endian table ID | PartitionKey | 0x00 | RowKey.
func rawKey(b []byte, pk, rk string) []byte {
	b = binary.BigEndian.AppendUint64(b, rawTableID)
	b = append(b, pk...)
	b = append(b, 0)
	return append(b, rk...)
}

// rawPartitionBounds returns the half-open key range [lo, hi) of
// partition pk: [t|pk|0x00, t|pk|0x01).
func rawPartitionBounds(pk string) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint64(nil, rawTableID)
	lo = append(lo, pk...)
	hi = append(append([]byte(nil), lo...), 1)
	lo = append(lo, 0)
	return lo, hi
}

// rawTableBounds returns the half-open key range [t, t+1) of the table.
func rawTableBounds() (lo, hi []byte) {
	return binary.BigEndian.AppendUint64(nil, rawTableID),
		binary.BigEndian.AppendUint64(nil, rawTableID+1)
}

// splitRawKey returns the PartitionKey and RowKey of a data key.
func splitRawKey(k []byte) (pk, rk []byte, ok bool) {
	if len(k) < 8 {
		return nil, nil, false
	}
	k = k[8:]
	for i, c := range k {
		if c == 0 {
			return k[:i], k[i+1:], true
		}
	}
	return nil, nil, false
}
