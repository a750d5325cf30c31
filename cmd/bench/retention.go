package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/retention"
	"github.com/convida/convida/pkg/testenv/backlog"
)

// retentionSweep is the retention sweep run beside a sales run
// (-retention-rows): old rows seeded before the clock starts, then the
// production sweep (program.NewRetention, the default RETENTION_*
// settings, batches of 5,000) started with the first send, paced as the
// scheduler paces it (Every: a tick's 2 s budget per SCHEDULER_INTERVAL),
// or without pause when Every is 0 (-retention-unpaced).
type retentionSweep struct {
	Every   time.Duration
	Seeded  int
	Seeding time.Duration
	Start   time.Time
	Took    time.Duration
	Deleted map[string]int
	Err     error
	done    chan struct{}
}

// backlogAge is how old the seeded rows are: past every default retention
// (the buyers' data's, 365 days, the longest).
const backlogAge = 2 * 365 * 24 * time.Hour

// seedRetention writes rows old rows spread evenly over the tables the
// sweep reads (backlog.Seed), for a merchant of their own so that the
// sales run's verification never sees them, and analyzes them as
// autovacuum would have on a deployment.
func seedRetention(ctx context.Context, s *stack, rows int) (*retentionSweep, error) {
	start := time.Now()
	t, err := seed(ctx, s, 1)
	if err != nil {
		return nil, err
	}
	perKind := (rows + len(retention.Kinds()) - 1) / len(retention.Kinds())
	seeded, err := backlog.Seed(ctx, s.pool, t.MerchantID, t.MemberIDs[0], perKind, time.Now().Add(-backlogAge))
	if err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE inbound_deliveries, webhook_attempts, outbox, processed_commands, audit_events,
  sessions, dashboard_sign_in_attempts, referrals`); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	r := &retentionSweep{Seeding: time.Since(start), done: make(chan struct{})}
	for _, n := range seeded {
		r.Seeded += n
	}
	return r, nil
}

// start runs the sweep from now on in the background; wait waits for it.
func (r *retentionSweep) start(ctx context.Context, s *stack) {
	sweep := program.NewRetention(s.deps)
	r.Start = time.Now()
	go func() {
		defer close(r.done)
		r.Deleted, r.Err = sweep.Sweep(ctx, time.Now(), r.Every)
		r.Took = time.Since(r.Start)
	}()
}

func (r *retentionSweep) wait() { <-r.done }

// deleted is the rows the sweep deleted or cleared in all.
func (r *retentionSweep) deleted() int {
	n := 0
	for _, d := range r.Deleted {
		n += d
	}
	return n
}

// overlap is the share of the window from the first send to the last
// credit during which the sweep ran.
func (r *retentionSweep) overlap(first, last time.Time) float64 {
	window := last.Sub(first)
	if window <= 0 {
		return 0
	}
	from, to := r.Start, r.Start.Add(r.Took)
	if from.Before(first) {
		from = first
	}
	if to.After(last) {
		to = last
	}
	return max(to.Sub(from).Seconds(), 0) / window.Seconds()
}

// print writes the sweep's lines of the report.
func (r *retentionSweep) print(p func(string, ...any), first, last time.Time) {
	p("  retention backlog     %d old rows over %d tables, seeded in %v (not measured)", r.Seeded, len(retention.Kinds()),
		r.Seeding.Round(time.Millisecond))
	if r.Err != nil {
		p("  retention sweep       FAILED after %v: %v", r.Took.Round(time.Millisecond), r.Err)
		return
	}
	kinds := make([]string, 0, len(r.Deleted))
	for kind, n := range r.Deleted {
		kinds = append(kinds, fmt.Sprintf("%s %d", kind, n))
	}
	sort.Strings(kinds)
	p("  retention sweep       %d rows in %v (%.0f rows/s), running during %.0f%% of first send → last credit",
		r.deleted(), r.Took.Round(time.Millisecond), float64(r.deleted())/r.Took.Seconds(), 100*r.overlap(first, last))
	p("                        %s", strings.Join(kinds, ", "))
	if r.Every > 0 {
		p("                        paced as the scheduler runs it: 2 s of work per %v tick", r.Every)
	} else {
		p("                        without pause (-retention-unpaced)")
	}
}
