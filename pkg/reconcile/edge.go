package reconcile

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
)

// What the API and the dashboard need of reconciliation: their
// "reconcile now" and the list of runs.

// Starter begins a run for the leading scheduler to carry out
// (Reconciler.Begin, with claimed false).
type Starter interface {
	Begin(ctx context.Context, merchantID uuid.UUID, in merchant.Integration, from, to time.Time, claimed bool) (Run, error)
}

var _ Starter = (*Reconciler)(nil)

// Runs pages the runs of a merchant's integration, newest first
// (postgres.ReconcileStore).
type Runs interface {
	PageRuns(ctx context.Context, merchantID uuid.UUID, provider string, offset, limit int) ([]Run, int, error)
}
