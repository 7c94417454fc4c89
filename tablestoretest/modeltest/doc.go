// Package modeltest is a harness for drivers: it runs a seeded random
// workload against a store and against a plain in-memory reference model
// of the tablestore contract, and demands that every result and every
// error agree. It drives the store only through package tablestore's
// public API, so any store a *tablestore.DB can open checks itself with
// it: the embedded engine from the root package's tests, the remote Azure
// driver from its module, or a driver written outside this repository:
//
//	func TestModel(t *testing.T) {
//		open := func(t *testing.T, clock func() time.Time) *tablestore.DB {
//			db, err := tablestore.OpenDriver(mydriver.Open(...), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return db
//		}
//		modeltest.Run(t, open, modeltest.Config{Name: "mydriver", Seed: 1, Ops: 2000})
//	}
//
// # Stages
//
// The harness is split by stage:
//
//   - generate.go: Generate turns a Config (its seed above all) into
//     operations. It reads no store, no clock and no map in iteration
//     order, so the same seed gives the same operations byte for byte.
//   - op.go and parse.go: an Op prints as one line of text (Op.String)
//     and parses back (ParseOp); a Log is a seed and a list of them.
//     Everything an operation does is in its line, including choices
//     made at random, and values the store decides (ETags, Timestamps)
//     appear as names the runner resolves: "if-match=v2" is the third
//     version of the entity, "{stamp 7}" in a filter a Timestamp the
//     store gave.
//   - exec.go, compare.go and typed.go: the runner runs each operation on
//     the store and on the model and compares results (entities, values
//     by type, pages, ETags by behaviour, the typed paths against the map
//     paths) and errors (code, sentinel, failing index of a
//     transaction).
//   - reopen.go: a reopen closes the store and opens it again through the
//     Opener, then compares every table; it checks durability across
//     Close for a store on disk, and that no state lives in a remote
//     driver's client.
//   - run.go: Run and Replay, the runner's loop over a Log, and what a
//     failure leaves behind.
//
// # Failures and replay
//
// At the first divergence the run fails with the seed, the operation,
// the ones before it, and the path of a file holding the operations up to
// the failing one (in os.TempDir(), or the directory the flag
// -modeltest.logdir names). The flag -modeltest.replay=FILE makes Run
// replay such a file instead of generating a workload, so a failure
// reproduces without its seed, and a log can be cut down by hand to the
// operations that matter. A log is text: lines starting with "#" are
// comments, the first other line is "seed N" (it seeds the clock given to
// the Opener), and each further line is one operation, for example
//
//	insert table="alpha" kept entity=("p1","r05"){"Count":int32(3) "Name":"héllo"}
//	query table="ALPHA" filter="PartitionKey eq 'p1' and Timestamp ge {stamp 2}" top=5 reverse
//
// The flags are registered on the default flag set when the package is
// initialized, as go test expects of flags a test binary accepts.
//
// # Extensions
//
// The workload also runs tablestore's extensions to Azure's API, each
// family switched off by its quirk for a service that lacks it
// (Quirks.NoIndexes, NoChangeFeed, NoTTL): create-index and drop-index
// (then the index listings compare), queries read through an index in
// its order (index= on a query line) and equalities the planner serves
// from one; enable-feed, disable-feed and read-changes, which reads the
// feed from the beginning and again from one change's cursor and
// compares both with the changes the model recorded (operation, keys,
// version, image, commit); set-ttl and advance, which moves the store's
// clock (through Config.Advance for a store with its own clock) and then
// compares every table with a TTL. Clock moves are whole hours and TTL
// defaults odd half hours, so no expiry falls near an instant the
// workload reaches; expiry properties hold DateTimes years away from
// the clock. A table has a feed or a TTL, never both: the store records
// an expiry when its sweeper removes the entity, a moment the model
// cannot know.
//
// Store-specific departures from Azure's behaviour that a remote service
// cannot avoid are switched off one by one with Quirks.
package modeltest
