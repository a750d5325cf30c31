package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

// DueJobs leases jobs that are due (postgres.WebhookStore).
type DueJobs interface {
	ClaimDueJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]webhook.Job, error)
}

// Publisher publishes raw messages (kafkabus.Writer).
type Publisher interface {
	Publish(ctx context.Context, msgs ...kafkabus.Message) error
}

// Waker is the scheduler's task that wakes due retries: it leases the jobs
// whose time has come and publishes them to the events topic as retry
// messages keyed by endpoint, where any dispatcher picks them up. Jobs left
// behind by a crashed dispatcher come back the same way when their lease
// ends.
type Waker struct {
	Jobs      DueJobs
	Publisher Publisher
	Lease     time.Duration // as the dispatchers' Config.Lease
	Limit     int           // jobs per query; default 500
}

// Wake publishes every job due at now and returns how many.
func (w *Waker) Wake(ctx context.Context, now time.Time) (int, error) {
	limit := w.Limit
	if limit <= 0 {
		limit = 500
	}
	total := 0
	for {
		jobs, err := w.Jobs.ClaimDueJobs(ctx, now, w.Lease, limit)
		if err != nil {
			return total, fmt.Errorf("claim due webhook jobs: %w", err)
		}
		if len(jobs) == 0 {
			return total, nil
		}
		msgs := make([]kafkabus.Message, len(jobs))
		for i, j := range jobs {
			if msgs[i], err = topic.RetryMessage(j); err != nil {
				return total, err
			}
		}
		// Unpublished jobs stay leased and come back when the lease ends.
		if err := w.Publisher.Publish(ctx, msgs...); err != nil {
			return total, fmt.Errorf("publish due webhook jobs: %w", err)
		}
		total += len(jobs)
		if len(jobs) < limit {
			return total, nil
		}
	}
}
