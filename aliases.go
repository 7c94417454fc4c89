package tablestore

import "github.com/tablestore/tablestore/driver"

// Re-exports. A type the root shares with the driver SPI is declared
// once, in driver (the engine fills it in), and named here with an
// alias so users need not import driver for it: one type, two names,
// the same values. Aliases that come with constants of their own (Code,
// GUID, ChangeOp, ImageMode, CommitKind) and the check's CheckReport and
// DamagedFile sit beside those constants and functions instead.

// EngineMetrics are the store engine's operational figures, returned by
// DB.EngineMetrics; the fields are documented on driver.Metrics.
type EngineMetrics = driver.Metrics
