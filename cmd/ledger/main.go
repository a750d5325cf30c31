// Command ledger applies wallet commands: the only writer of wallet tables.
package main

import "github.com/convida/convida/pkg/program"

const about = `Usage: ledger [--help]

The ledger consumes ledger.commands and applies each batch of wallet
commands in one PostgreSQL transaction, the only writer of wallet tables;
it relays the resulting events and commits the offsets after the
transaction. Beside it, the recorder consumes inbound.deliveries and
writes the ingest's delivery records to inbound_deliveries in batches.
/healthz, /readyz and /metrics are on METRICS_ADDR. It runs until SIGINT
or SIGTERM.`

func main() {
	program.Main("ledger", about, program.RunLedger, program.RunRecorder)
}
