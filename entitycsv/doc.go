// Package entitycsv reads and writes entities in the typed CSV format of
// the tablestore command's import and export and of the web console's
// (RFC 4180 with typed columns):
//
//   - The first record is the header. Each column is NAME or NAME:TYPE,
//     TYPE one of Azure's eight EDM names (Edm.String, Edm.Int32,
//     Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid,
//     Edm.Binary); a bare NAME is Edm.String. PartitionKey and RowKey
//     columns are required. A name may appear once per type, so a
//     property stored with different types in different entities keeps
//     every value (an entity has a value in at most one of them).
//   - A cell holds the value in the text Azure's JSON uses for its type:
//     decimal integers, doubles in Go's shortest form or NaN, Infinity,
//     -Infinity, true/false, DateTime as 2026-01-02T03:04:05.0000000Z,
//     Guid in canonical form, Binary in standard base64.
//   - An empty, unquoted cell means the entity has no such property; a
//     quoted empty cell ("") is the empty string.
//   - Fields are separated by commas and quoted with double quotes (""
//     inside a quoted field is one quote); a quoted field may span lines.
//     Lines end in \n or \r\n.
//
// Reader splits input into records and keeps what a resumable import
// needs (the line each record starts on, the byte offset after it, its
// raw bytes); Header turns a record into a *tablestore.Entity, converting
// each cell straight to its Go type; Encoder and Writer write a header
// and one row per entity (exact by default; with the SpreadsheetSafe
// option, cells a spreadsheet would run as formulas are neutralized).
// RecordEnd and ParseRecord split and parse records held in memory, for
// input that arrives in chunks.
//
// Every error about the input is a *tablestore.Error with Azure's code
// (InvalidInput, OutOfRangeInput, PropertiesNeedValue,
// RequestBodyTooLarge), so errors.Is matches the tablestore sentinels.
// Nothing here panics on any input.
package entitycsv
