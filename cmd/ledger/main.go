// Command ledger applies wallet commands: the only writer of wallet tables.
package main

import "github.com/convida/convida/pkg/program"

func main() { program.Main("ledger", program.WithOps("ledger", program.RunLedger)...) }
