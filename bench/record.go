package main

import (
	"fmt"
	"math"
	"time"
)

// partitionSize is the number of entities in each partition of the main
// data set, so a partition scan returns exactly this many whole entities.
const partitionSize = 1000

// filterBuckets is the number of distinct values of the Bucket property;
// the filter scan asks for one of them, so it matches 1/filterBuckets of
// the entities.
const filterBuckets = 100

// filterBucket is the Bucket value the filter scan selects.
const filterBucket = 42

// baseTime is the Created value of entity 0; entity i is i seconds later.
var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

var cities = [...]string{
	"Lisbon", "Porto", "Madrid", "Sevilla", "Milano", "Torino", "Napoli",
	"Paris", "Lyon", "Berlin", "Hamburg", "Vienna", "Prague", "Warsaw",
	"Krakow", "Oslo", "Bergen", "Dublin", "Cork", "Helsinki",
}

// record is one generated entity: its keys and its ten typed properties
// (four strings, two Int32, one Int64, one Double, one Boolean and one
// DateTime). Every side stores the same logical record.
type record struct {
	PK, RK  string
	Name    string
	Email   string
	City    string
	Note    string
	Count   int32
	Bucket  int32
	Score   int64
	Amount  float64
	Active  bool
	Created int64 // DateTime as ticks (100 ns units since 0001-01-01 UTC)
}

// propertyCount is the number of user properties of a record.
const propertyCount = 10

// mix scrambles i so that Bucket values are spread evenly but not in key
// order (a filter match is not a contiguous key range).
func mix(i uint64) uint64 {
	i ^= i >> 33
	i *= 0xff51afd7ed558ccd
	i ^= i >> 33
	i *= 0xc4ceb9fe1a85ec53
	i ^= i >> 33
	return i
}

// partitionKey returns the PartitionKey of partition p of the main data set.
func partitionKey(p int) string { return fmt.Sprintf("p%07d", p) }

// rowKey returns the RowKey of row r of a partition.
func rowKey(r int) string { return fmt.Sprintf("r%07d", r) }

// genRecord fills rec with entity i of the main data set: partition
// i/partitionSize, row i%partitionSize.
func genRecord(rec *record, i int) {
	genRecordKeys(rec, i, partitionKey(i/partitionSize), rowKey(i%partitionSize))
}

// genRecordKeys fills rec with the properties of entity i under the given
// keys.
func genRecordKeys(rec *record, i int, pk, rk string) {
	h := mix(uint64(i))
	rec.PK = pk
	rec.RK = rk
	rec.Name = fmt.Sprintf("customer-%09d", i)
	rec.Email = fmt.Sprintf("user%09d@example.com", i)
	rec.City = cities[h%uint64(len(cities))]
	rec.Note = fmt.Sprintf("note %016x %016x", h, ^h)
	rec.Count = int32(i % 1000)
	rec.Bucket = int32((h >> 20) % filterBuckets)
	rec.Score = int64(h >> 1)
	rec.Amount = float64(i%100000) * 1.25
	rec.Active = h&1 == 0
	rec.Created = timeToTicks(baseTime.Add(time.Duration(i) * time.Second))
}

// bucketOf returns the Bucket property of entity i without building it.
func bucketOf(i int) int32 { return int32((mix(uint64(i)) >> 20) % filterBuckets) }

// countMatches returns how many of the first n entities have
// Bucket == filterBucket: the expected result of the filter scan.
func countMatches(n int) int {
	c := 0
	for i := 0; i < n; i++ {
		if bucketOf(i) == filterBucket {
			c++
		}
	}
	return c
}

// ticksAtUnixEpoch is the tick count of 1970-01-01T00:00:00Z.
const ticksAtUnixEpoch = 621355968000000000

// timeToTicks converts t to .NET ticks (100 ns units since 0001-01-01 UTC).
func timeToTicks(t time.Time) int64 {
	return ticksAtUnixEpoch + t.Unix()*10_000_000 + int64(t.Nanosecond()/100)
}

// ticksToTime converts .NET ticks to a UTC time.
func ticksToTime(ticks int64) time.Time {
	d := ticks - ticksAtUnixEpoch
	return time.Unix(d/10_000_000, (d%10_000_000)*100).UTC()
}

// sameRecord reports whether a and b hold the same keys and properties
// (used by tests and sanity checks; NaN never occurs in generated data).
func sameRecord(a, b *record) bool {
	return *a == *b && !math.IsNaN(a.Amount)
}
