package main

import "github.com/tablestore/tablestore/internal/suggest"

// flagSynonyms are flag names other tools use, mapped to this command's.
var flagSynonyms = map[string]string{
	"where": "filter", "query": "filter", "limit": "top", "columns": "select",
	"fields": "select", "dir": "store", "db": "store", "path": "store",
}

// nearest is the candidate name most likely meant by a misspelled one
// (suggest.Nearest, which the test kit's fault names use too).
func nearest(name string, candidates []string) string { return suggest.Nearest(name, candidates) }
