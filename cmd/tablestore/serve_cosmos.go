package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/tablestore/tablestore/server"
)

// cosmosFlags are serve's --cosmos flags: the Cosmos DB for Table
// flavor (docs/cosmos.md).
type cosmosFlags struct {
	on                   *bool
	order                *string
	seed                 *uint64
	ruPerSecond          *float64
	ruPerTable           *bool
	chargeHeader         *bool
	storageLimits        *bool
	caseInsensitive      *bool
	cors                 *bool
	storageWire          *bool
	storageContinuation  *bool
	storagePropertyOrder *bool
	storageTimestamps    *bool
}

// cosmosDefaultAddr is where the Cosmos DB emulator serves its Table
// endpoint, serve --cosmos's default.
const cosmosDefaultAddr = "127.0.0.1:8902"

func (c *cosmosFlags) register(fs *flag.FlagSet) {
	c.on = fs.Bool("cosmos", false, "answer as Cosmos DB for Table (its emulator's account, key and port 8902 unless given; see docs/cosmos.md)")
	c.order = fs.String("cosmos-order", "insertion", "with --cosmos: the order of query results and table lists: insertion, seeded or sorted (Storage's key order)")
	c.seed = fs.Uint64("cosmos-seed", 0, "with --cosmos-order seeded: the seed of the order")
	c.ruPerSecond = fs.Float64("cosmos-ru-per-second", 0, "with --cosmos: provisioned request units per second; beyond them requests are answered 429 with x-ms-retry-after-ms (default: unlimited)")
	c.ruPerTable = fs.Bool("cosmos-ru-per-table", false, "with --cosmos-ru-per-second: each table has that throughput (default: the account has it)")
	c.chargeHeader = fs.Bool("cosmos-request-charge", false, "with --cosmos: send each response's request units in x-ms-request-charge")
	c.storageLimits = fs.Bool("cosmos-storage-limits", false, "with --cosmos: keep Storage's RowKey and batch limits instead of Cosmos's 255 bytes and 2 MB")
	c.caseInsensitive = fs.Bool("cosmos-case-insensitive-tables", false, "with --cosmos: find tables whatever the case of their names, as Storage does")
	c.cors = fs.Bool("cosmos-cors", false, "with --cosmos: answer CORS as Storage does")
	c.storageWire = fs.Bool("cosmos-storage-wire", false, "with --cosmos: keep Storage's error bodies, content types, headers and batch parts")
	c.storagePropertyOrder = fs.Bool("cosmos-storage-property-order", false, "with --cosmos: give properties in Storage's order instead of as written")
	c.storageTimestamps = fs.Bool("cosmos-storage-timestamps", false, "with --cosmos: give the entities of a batch one Timestamp instead of one each, increasing")
	c.storageContinuation = fs.Bool("cosmos-storage-continuation", false, "with --cosmos: no continuation on the last page (with --cosmos-order sorted: Storage's key continuation)")
}

var cosmosOrders = map[string]server.Order{"insertion": server.OrderInsertion, "seeded": server.OrderSeeded, "sorted": server.OrderSorted}

// apply checks the flags and gives serve Cosmos's defaults: the
// emulator's port and account, unless --addr or --account are given.
func (c *cosmosFlags) apply(fs *flag.FlagSet, f *serveFlags) error {
	if !*c.on {
		for _, name := range []string{"cosmos-order", "cosmos-seed", "cosmos-ru-per-second", "cosmos-ru-per-table", "cosmos-request-charge",
			"cosmos-storage-limits", "cosmos-case-insensitive-tables", "cosmos-cors", "cosmos-storage-wire", "cosmos-storage-continuation", "cosmos-storage-property-order", "cosmos-storage-timestamps"} {
			if isSet(fs, name) {
				return usagef("--%s needs --cosmos", name)
			}
		}
		return nil
	}
	if _, ok := cosmosOrders[*c.order]; !ok {
		return usagef("unknown --cosmos-order %q: want insertion, seeded or sorted", *c.order)
	}
	if *c.ruPerSecond < 0 {
		return usagef("--cosmos-ru-per-second must not be negative")
	}
	if *c.ruPerTable && *c.ruPerSecond == 0 {
		return usagef("--cosmos-ru-per-table needs --cosmos-ru-per-second")
	}
	if f.multi() {
		return usagef("--cosmos serves one account: not with --accounts or $AZURITE_ACCOUNTS")
	}
	if !isSet(fs, "addr") {
		*f.addr = cosmosDefaultAddr
	}
	if !isSet(fs, "account") {
		*f.account = server.CosmosDevAccount
	}
	return nil
}

// options is the server's Cosmos option; nil without --cosmos.
func (c *cosmosFlags) options() *server.Cosmos {
	if !*c.on {
		return nil
	}
	return &server.Cosmos{
		Order: cosmosOrders[*c.order], Seed: *c.seed,
		RequestUnitsPerSecond: *c.ruPerSecond, ThroughputPerTable: *c.ruPerTable, ChargeHeader: *c.chargeHeader,
		StorageLimits: *c.storageLimits, CaseInsensitiveTables: *c.caseInsensitive, CORS: *c.cors,
		StorageWire: *c.storageWire, StorageContinuation: *c.storageContinuation, StoragePropertyOrder: *c.storagePropertyOrder,
		StorageTimestamps: *c.storageTimestamps,
	}
}

// devKey is the key an account gets when none is given: the Cosmos DB
// emulator's with --cosmos, else Azure's development key.
func (c *cosmosFlags) devKey() string {
	if *c.on {
		return server.CosmosDevKey
	}
	return server.DevKey
}

// printCosmosConnection prints the connection string in the Cosmos DB
// emulator's shape: the service root, addressed by host, at localhost
// when the server listens on loopback (the name the SDKs take for the
// emulator).
func printCosmosConnection(w io.Writer, scheme, account, key string, addr net.Addr) {
	host := dialable(addr)
	if tcp, ok := addr.(*net.TCPAddr); ok && (tcp.IP.IsLoopback() || tcp.IP.IsUnspecified()) {
		host = net.JoinHostPort("localhost", strconv.Itoa(tcp.Port))
	}
	fmt.Fprintf(w, "serve: connection string: DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s://%s/;\n",
		scheme, account, key, scheme, host)
}
