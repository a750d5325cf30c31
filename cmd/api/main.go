// Command api serves the member-facing and administrative API, and runs the
// administrative commands: merchant create, key create, key revoke, key
// list, secrets rotate.
package main

import (
	"context"
	"os"

	"github.com/convida/convida/pkg/program"
)

const about = `Usage: api                 serve the API until SIGINT or SIGTERM
       api COMMAND [flags]  run an administrative command and print one JSON object
       api --help           print this help

The api serves the member-facing and administrative HTTP API (/api/v1) on
HTTP_ADDR, with /healthz beside it; /readyz and /metrics are on
METRICS_ADDR, for the operator only.

Commands (api COMMAND --help for their flags):
  merchant create --name NAME --store-url URL [--email E] [--code-prefix P]
  key create --merchant ID
  key revoke --merchant ID --key-prefix P
  key list --merchant ID
  secrets rotate [--batch N]`

func main() {
	if isBootstrap(os.Args[1:]) {
		cfg, err := program.LoadConfig(os.Getenv)
		if err != nil {
			program.Exit("api", err)
		}
		if err := bootstrap(context.Background(), cfg, os.Args[1:], os.Stdout); err != nil {
			program.Exit("api", err)
		}
		return
	}
	program.Main("api", about, program.RunAPI)
}
