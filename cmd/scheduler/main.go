// Command scheduler releases expired warranties and re-publishes stranded
// outbox events, on one leader at a time.
package main

import "github.com/convida/convida/pkg/program"

func main() { program.Main("scheduler", program.WithOps("scheduler", program.RunScheduler)...) }
