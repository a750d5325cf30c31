package kafkabus

import (
	"context"
	"time"

	"github.com/convida/convida/pkg/retry"
)

// backoff returns a fresh wait sequence for one retrying loop of the
// partition: capped exponential with equal jitter (retry.Backoff) from
// RetryBackoff up to MaxRetryBackoff, so retries of many partitions spread
// out without ever collapsing to zero.
func (p *partition) backoff() *retry.Backoff {
	return &retry.Backoff{Base: p.cfg.RetryBackoff, Max: p.cfg.MaxRetryBackoff}
}

// sleep waits for d or until ctx ends, reporting whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool { return retry.Sleep(ctx, d) == nil }
