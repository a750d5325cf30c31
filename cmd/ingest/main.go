// Command ingest receives the Guru and Yampi webhooks and turns paid and
// refunded orders into ledger commands.
package main

import "github.com/convida/convida/pkg/program"

func main() { program.Main("ingest", program.RunIngest) }
