package filter_test

import (
	"fmt"
	"time"

	"github.com/tablestore/tablestore/filter"
)

func ExampleBuild() {
	customer := "O'Brien' or PartitionKey ne '" // hostile input stays one string
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f, err := filter.Build("PartitionKey eq %s and Amount ge %s and Total lt %s and Placed ge %s",
		customer, int32(50), int64(1)<<40, since)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f)

	_, err = filter.Build("Amount ge %s", 50) // an int: which EDM type?
	fmt.Println(err)
	// Output:
	// PartitionKey eq 'O''Brien'' or PartitionKey ne ''' and Amount ge 50 and Total lt 1099511627776L and Placed ge datetime'2026-01-02T03:04:05Z'
	// filter: syntax error at position 10: argument 1: a value of type int has no filter literal; convert it to int32 (Edm.Int32) or int64 (Edm.Int64)
	//   Amount ge %s
	//             ^
}
