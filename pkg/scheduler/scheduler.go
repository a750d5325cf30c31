// Package scheduler runs the periodic work of the service on one leader at
// a time: it releases expired warranties by publishing release commands to
// the ledger, and re-publishes outbox rows whose relay did not happen.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/referral"
)

// Store finds due work.
type Store interface {
	// DueReferrals returns up to limit pending referrals whose warranty
	// expired at or before now, oldest first, skipping the ids in skip and
	// those held for review (a fraud rule flagged them: only approve or
	// reject decides them).
	DueReferrals(ctx context.Context, now time.Time, limit int, skip []uuid.UUID) ([]referral.Due, error)
}

// Leader is a cluster-wide lock: TryLead reports whether this process is
// the leader now (acquiring the lock if free).
type Leader interface {
	TryLead(ctx context.Context) (bool, error)
}

// CommandPublisher publishes ledger commands.
type CommandPublisher interface {
	PublishCommands(ctx context.Context, cmds []ledger.Command) error
}

// OutboxSweeper relays stranded outbox rows.
type OutboxSweeper interface {
	Sweep(ctx context.Context, now time.Time, grace time.Duration, limit int) (int, error)
}

// Task is extra periodic work run by the leader on every tick (the webhook
// dispatcher's due retries plug in here).
type Task func(ctx context.Context, now time.Time) error

// DefaultOutboxGrace is how old an unrelayed outbox row must be before the
// sweep publishes it, unless Scheduler.OutboxGrace says otherwise.
const DefaultOutboxGrace = 30 * time.Second

// Scheduler is the periodic loop.
type Scheduler struct {
	Store     Store
	Leader    Leader
	Publisher CommandPublisher
	Outbox    OutboxSweeper
	Tasks     []Task
	Log       *zap.Logger
	Now       func() time.Time
	Interval  time.Duration // default 5 s
	// OutboxGrace is how old an unrelayed outbox row must be before the
	// sweep publishes it (DefaultOutboxGrace; the ledger relays at once).
	OutboxGrace time.Duration
	// BatchSize bounds the release commands of one tick (default 1000).
	BatchSize int

	// recent holds release commands published lately, so a backlog that
	// the ledger has not applied yet is not published again every tick.
	recent map[uuid.UUID]time.Time
}

// Run ticks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("scheduler tick failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick does one round of work if this process leads; it is what Run calls
// and what tests call with an injected clock. It runs the releases, the
// outbox sweep and every task even when one of them fails, so that a
// failing sweep never starves the webhook retries, and returns their
// errors joined.
func (s *Scheduler) Tick(ctx context.Context) error {
	lead, err := s.Leader.TryLead(ctx)
	if err != nil || !lead {
		return err
	}
	now := s.Now()
	var errs []error
	if _, err := s.ReleaseDue(ctx, now); err != nil {
		errs = append(errs, fmt.Errorf("release due referrals: %w", err))
	}
	grace := s.OutboxGrace
	if grace == 0 {
		grace = DefaultOutboxGrace
	}
	n, err := s.Outbox.Sweep(ctx, now, grace, 500)
	if err != nil {
		errs = append(errs, fmt.Errorf("outbox sweep: %w", err))
	}
	if n > 0 {
		s.Log.Info("outbox sweep relayed stranded events", zap.Int("events", n))
	}
	for i, task := range s.Tasks {
		if err := task(ctx, now); err != nil {
			errs = append(errs, fmt.Errorf("task %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// ReleaseDue publishes a release command for every referral due at now and
// returns how many it published. The command id is derived from the
// referral, so publishing twice is harmless.
func (s *Scheduler) ReleaseDue(ctx context.Context, now time.Time) (int, error) {
	if s.recent == nil {
		s.recent = map[uuid.UUID]time.Time{}
	}
	limit := s.BatchSize
	if limit <= 0 {
		limit = 1000
	}
	total := 0
	for {
		due, err := s.Store.DueReferrals(ctx, now, limit, s.recentIDs(now))
		if err != nil || len(due) == 0 {
			return total, err
		}
		cmds := make([]ledger.Command, len(due))
		for i, d := range due {
			cmds[i] = ledger.Command{
				ID: "release:" + d.ReferralID.String(), Type: ledger.CmdRelease,
				MerchantID: d.MerchantID, MemberID: d.MemberID, ReferralID: d.ReferralID, IssuedAt: now,
			}
		}
		if err := s.Publisher.PublishCommands(ctx, cmds); err != nil {
			return total, err
		}
		for _, d := range due {
			s.recent[d.ReferralID] = time.Now()
		}
		total += len(due)
		if len(due) < limit {
			return total, nil
		}
	}
}

// recentIDs returns the referrals released within the last minute (by the
// wall clock: the injected clock may jump) and forgets older ones.
func (s *Scheduler) recentIDs(_ time.Time) []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(s.recent))
	for id, at := range s.recent {
		if time.Since(at) > time.Minute {
			delete(s.recent, id)
			continue
		}
		ids = append(ids, id)
	}
	return ids
}
