// Command dispatcher consumes domain events for delivery to merchants.
package main

import "github.com/convida/convida/pkg/program"

const about = `Usage: dispatcher [--help]

The dispatcher consumes the events topic and delivers each event to the
merchant's subscribed webhook endpoints (signed, retried per
WEBHOOK_RETRY_SCHEDULE), and consumes the redemptions topic to carry out
redemptions on Guru or Yampi. /healthz, /readyz and /metrics are on
METRICS_ADDR. It runs until SIGINT or SIGTERM.`

func main() {
	program.Main("dispatcher", about, program.RunDispatcher)
}
