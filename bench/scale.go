package main

import (
	"fmt"
	"time"
)

// scale sets how much work each workload does.
type scale struct {
	Name string `json:"name"`
	// Entities is the size of the main data set every read workload
	// runs on (loaded by load-nosync), in partitions of partitionSize.
	Entities int `json:"entities"`
	// SyncLoadEntities are bulk-loaded in synced batches by load-sync.
	SyncLoadEntities int `json:"syncLoadEntities"`
	// WriteDuration is how long each single-insert and read-modify-write
	// run lasts.
	WriteDuration time.Duration `json:"writeDuration"`
	Gets          int           `json:"gets"`
	RangeQueries  int           `json:"rangeQueries"`
	PartScans     int           `json:"partitionScans"`
	// FilterPasses is how many times the filter scan reads the table.
	FilterPasses int `json:"filterPasses"`
	// Pages is how many Top-1000 pages the paging workload reads.
	Pages int `json:"pages"`
	// ResumePage is the page the resume target compares with page 1.
	ResumePage int `json:"resumePage"`
	// ResumeReps is how many times each of the two pages is timed.
	ResumeReps int `json:"resumeReps"`
	// TxnBatches is how many unsynced batches of 100 the transaction
	// target commits per side and round (half of that when synced).
	// Rounds last a fraction of a second: shorter ones were swayed by a
	// single flush or sync.
	TxnBatches int `json:"txnBatches"`
}

var scales = map[string]scale{
	// tiny is a smoke test of the harness, seconds long; its figures are
	// too noisy to mean much.
	"tiny": {Name: "tiny", Entities: 10_000, SyncLoadEntities: 1_000,
		WriteDuration: 300 * time.Millisecond, Gets: 2_000, RangeQueries: 200,
		PartScans: 10, FilterPasses: 1, Pages: 10, ResumePage: 10, ResumeReps: 5, TxnBatches: 50},
	"small": {Name: "small", Entities: 100_000, SyncLoadEntities: 10_000,
		WriteDuration: 2 * time.Second, Gets: 20_000, RangeQueries: 2_000,
		PartScans: 100, FilterPasses: 10, Pages: 100, ResumePage: 100, ResumeReps: 100, TxnBatches: 2000},
	"1m": {Name: "1m", Entities: 1_000_000, SyncLoadEntities: 50_000,
		WriteDuration: 3 * time.Second, Gets: 100_000, RangeQueries: 3_000,
		PartScans: 200, FilterPasses: 1, Pages: 100, ResumePage: 1000, ResumeReps: 100, TxnBatches: 3000},
	"10m": {Name: "10m", Entities: 10_000_000, SyncLoadEntities: 100_000,
		WriteDuration: 5 * time.Second, Gets: 100_000, RangeQueries: 5_000,
		PartScans: 300, FilterPasses: 1, Pages: 100, ResumePage: 1000, ResumeReps: 100, TxnBatches: 3000},
}

// partitions returns the number of partitions of the main data set.
func (s scale) partitions() int { return (s.Entities + partitionSize - 1) / partitionSize }

// resumePage returns the page the resume target uses: ResumePage, or the
// last full page when the data set is smaller.
func (s scale) resumePage() int { return max(2, min(s.ResumePage, s.Entities/1000)) }

func lookupScale(name string) (scale, error) {
	s, ok := scales[name]
	if !ok {
		return scale{}, fmt.Errorf("unknown scale %q (want tiny, small, 1m or 10m)", name)
	}
	if s.Entities%partitionSize != 0 {
		return scale{}, fmt.Errorf("scale %q: entities not a multiple of %d", name, partitionSize)
	}
	return s, nil
}
