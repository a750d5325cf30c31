// Command ingest receives the platforms' sale webhooks and turns paid and
// refunded orders into ledger commands.
package main

import "github.com/convida/convida/pkg/program"

const about = `Usage: ingest [--help]

The ingest receives the platforms' sale webhooks (listed below) on
INGEST_ADDR (/api/webhooks/{platform}/{merchant id}), authenticates them,
and publishes paid and refunded orders as ledger commands; /healthz is
beside them, /readyz and /metrics are on METRICS_ADDR. It runs until
SIGINT or SIGTERM.`

func main() { program.Main("ingest", about, program.RunIngest) }
