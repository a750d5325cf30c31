// Command standalone runs the whole of Convida in one process, with an
// embedded Kafka-protocol broker, for local use and evaluation.
package main

import (
	"os"

	"github.com/convida/convida/pkg/program"
)

func main() {
	if err := program.Standalone(os.Stdout); err != nil {
		program.Exit("standalone", err)
	}
}
