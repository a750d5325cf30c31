// Package reconcile finds the sales whose webhooks were lost: a run pulls
// a window of one integration's sales from the platform's API
// (pkg/platform) and feeds each through the webhook's own normaliser and
// command ids (inbound.Pulled), so that whichever of the webhook and the
// pull comes second is a duplicate and nothing is credited twice. A sale
// the ledger has not applied (intake.AlreadyApplied) is taken in as the
// ingest takes a webhook's (intake.Intake.Take), with a delivery record of
// source "reconciliation".
//
// Adding a platform's pull is adding one Adapter (source.go).
package reconcile

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/intake"
)

// Statuses of a run.
const (
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Run is one reconciliation of a merchant's integration over [From, To).
type Run struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Provider   string
	Status     string
	From, To   time.Time
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	// Seen counts the sales the pull listed; Missing those no webhook
	// had brought (the ledger had not applied their command), of which
	// Credited were sales and Reversed refunds or chargebacks.
	Seen, Missing, Credited, Reversed int
	Error                             string // why it failed; "" otherwise
}

// MaxError bounds a run's error text.
const MaxError = 1000

// Store keeps the runs and reads what the ledger kept of the sales it
// applied (postgres.ReconcileStore).
type Store interface {
	// StartRun records r running, claimed by its caller (a scheduled
	// run). It is apperr.Conflict when the integration has a run running
	// already: two never overlap.
	StartRun(ctx context.Context, r Run) error
	// RequestRun records r running and unclaimed, for the leading
	// scheduler to claim (a run the API or the dashboard asked for), with
	// its audit event (audit.ReconciliationRequested, by the actor ctx
	// carries) — unless a run of the integration started after since:
	// then nothing is written, and the start of the latest such run is
	// returned. It is apperr.Conflict when a run is running.
	RequestRun(ctx context.Context, r Run, since time.Time) (blockedBy time.Time, err error)
	// Heartbeat writes r's counts and that it is alive at at. It is
	// ErrNotRunning when the row is no longer running (the stale sweep
	// ended it): the run must stop.
	Heartbeat(ctx context.Context, r Run, at time.Time) error
	// FinishRun writes r's end: status, counts, error, finished_at; a run
	// no longer running keeps the end it has.
	FinishRun(ctx context.Context, r Run) error
	intake.Traces
}

// Observer counts what runs find (the scheduler's metrics).
type Observer interface {
	Missing(provider string, n int)
	Succeeded(provider string, at time.Time)
}

// Due is an integration whose scheduled run is due.
type Due struct {
	MerchantID uuid.UUID
	Provider   string
}

// ErrNotRunning is a heartbeat's answer when the run's row is no longer
// running: the stale sweep ended it while its pull went on, which must
// stop.
var ErrNotRunning = errors.New("the run was ended meanwhile (its heartbeat had stopped for too long)")
