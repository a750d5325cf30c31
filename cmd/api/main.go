// Command api serves the member-facing and administrative API, and runs the
// bootstrap commands: merchant create, key create, key revoke.
package main

import (
	"context"
	"os"

	"github.com/convida/convida/pkg/program"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "merchant" || os.Args[1] == "key") {
		cfg, err := program.LoadConfig(os.Getenv)
		if err != nil {
			program.Exit("api", err)
		}
		if err := program.Bootstrap(context.Background(), cfg, os.Args[1:], os.Stdout); err != nil {
			program.Exit("api", err)
		}
		return
	}
	program.Main("api", program.RunAPI)
}
