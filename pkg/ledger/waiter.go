package ledger

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Awaited reports whether an edge may wait for the outcome of a command of
// kind: approve and reject (Decider), redeem and a redemption's result
// (Redeemer). The worker publishes on the fast path only theirs: nobody
// waits for a sale's, a refund's or a release's, and a waiter of any other
// kind still finds its outcome by polling the database.
func Awaited(kind string) bool {
	switch kind {
	case CmdApprove, CmdReject, CmdRedeem, CmdRedemptionResult:
		return true
	}
	return false
}

// OutcomeStore reads recorded outcomes (processed_commands).
type OutcomeStore interface {
	// FindOutcome returns the outcome of the command, or nil when it has
	// not been applied yet.
	FindOutcome(ctx context.Context, merchantID uuid.UUID, commandID string) (*Outcome, error)
}

// OutcomeSubscriber is the fast path of outcomes (Redis pub/sub).
type OutcomeSubscriber interface {
	Subscribe(ctx context.Context, merchantID uuid.UUID, commandID string) (<-chan Outcome, func(), error)
}

// Waiter waits for the outcome of a command: it listens on the fast path
// and polls the database, so neither a lost message nor Redis being down
// can hang a caller beyond its timeout.
type Waiter struct {
	Store OutcomeStore
	Sub   OutcomeSubscriber // optional
	// Poll is the database polling interval (default 200 ms; 50 ms while
	// the fast path is unavailable).
	Poll time.Duration
}

// Wait subscribes to the command's outcome, calls publish (nil when the
// command is published by someone else), and waits up to timeout. found is
// false on timeout; err is publish's error or the store's.
func (w *Waiter) Wait(ctx context.Context, merchantID uuid.UUID, commandID string, timeout time.Duration,
	publish func(context.Context) error) (outcome *Outcome, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var fast <-chan Outcome
	poll := w.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	if w.Sub != nil {
		ch, stop, err := w.Sub.Subscribe(ctx, merchantID, commandID)
		if err == nil {
			fast = ch
			defer stop()
		} else {
			poll = min(poll, 50*time.Millisecond)
		}
	} else {
		poll = min(poll, 50*time.Millisecond)
	}
	if publish != nil {
		if err := publish(ctx); err != nil {
			return nil, false, err
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if o, err := w.Store.FindOutcome(ctx, merchantID, commandID); err != nil && ctx.Err() == nil {
			return nil, false, err
		} else if o != nil {
			return o, true, nil
		}
		select {
		case o := <-fast:
			return &o, true, nil
		case <-tick.C:
		case <-ctx.Done():
			return nil, false, nil
		}
	}
}
