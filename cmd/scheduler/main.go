// Command scheduler releases expired warranties and re-publishes stranded
// outbox events, on one leader at a time.
package main

import "github.com/convida/convida/pkg/program"

const about = `Usage: scheduler [--help]

The scheduler, on one leader at a time, releases the rewards whose
warranty has expired, re-publishes stranded outbox events and wakes due
webhook retries, every SCHEDULER_INTERVAL. /healthz, /readyz and /metrics
are on METRICS_ADDR. It runs until SIGINT or SIGTERM.`

func main() { program.Main("scheduler", about, program.RunScheduler) }
