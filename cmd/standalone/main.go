// Command standalone runs the whole of Convida in one process, with an
// embedded Kafka-protocol broker, for local use and evaluation.
package main

import (
	"os"

	"github.com/convida/convida/pkg/program"
)

const about = `Usage: standalone [--help]

Standalone runs the whole of Convida in one process for local use: the API,
the ingest, the ledger, the dispatcher and the scheduler, with an embedded
persistent broker unless KAFKA_BROKERS is set, a SECRETS_KEY generated and
kept in DATA_DIR unless set, and a demo merchant created on first run (its
credentials kept in DATA_DIR/demo-merchant.json). It prints the URLs and
runs until SIGINT or SIGTERM.`

func main() {
	if program.WantsHelp(os.Args[1:]) {
		program.Help(os.Stdout, "standalone", about)
		return
	}
	if err := program.Standalone(os.Stdout); err != nil {
		program.Exit("standalone", err)
	}
}
