// Command standalone runs the whole of Convida in one process, with an
// embedded Kafka-protocol broker, for local use and evaluation.
package main

import (
	"os"

	"github.com/convida/convida/pkg/program"
)

const about = `Usage: standalone          run until SIGINT or SIGTERM
       standalone reset    drop the DATABASE_URL database and remove DATA_DIR (make reset)
       standalone --help   print this help

Standalone runs the whole of Convida in one process for local use: the API,
the ingest, the ledger, the dispatcher and the scheduler, with an embedded
persistent broker unless KAFKA_BROKERS is set, a SECRETS_KEY generated and
kept in DATA_DIR unless set, and a demo merchant created on first run (its
credentials kept in DATA_DIR/demo-merchant.json). It prints the URLs and
runs until SIGINT or SIGTERM. One standalone runs on a DATA_DIR at a time:
a second one, and a reset, are refused while it runs (DATA_DIR/lock names
its process). Started with a DATA_DIR that has no key
file, SECRETS_KEY unset and a database that already has merchants, it
refuses (the database's secrets were sealed with the key of the data
directory it first ran with) and says how to restore the key or start
over with "make reset".`

func main() {
	if program.WantsHelp(os.Args[1:]) {
		program.Help(os.Stdout, "standalone", about)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "reset" {
		if err := program.Reset(os.Stdout); err != nil {
			program.Exit("standalone reset", err)
		}
		return
	}
	if err := program.CheckArgs("standalone", os.Args[1:]); err != nil {
		program.Exit("standalone", err)
	}
	release := holdTerminal()
	err := program.Standalone(os.Stdout)
	release()
	if err != nil {
		program.Exit("standalone", err)
	}
}
