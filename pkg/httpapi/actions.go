package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
)

// ActionsConfig wires the wallet actions, which are ledger commands: the
// API publishes the command and waits for the ledger's outcome. This file
// holds what they share; approve and reject are in referrals.go, the two
// redeem operations in redemptions.go.
type ActionsConfig struct {
	Commands    CommandPublisher
	Waiter      *ledger.Waiter
	Redemptions RedemptionFinder
	Referrals   ReferralFinder
	// Timeout is how long an action waits for its outcome (default 10 s,
	// decision 19); a redemption still pending then is answered 202.
	Timeout time.Duration
}

// CommandPublisher publishes ledger commands (acknowledged by the broker).
type CommandPublisher = ledger.CommandPublisher

func (s *Server) actionTimeout() time.Duration {
	if s.cfg.Actions.Timeout > 0 {
		return s.cfg.Actions.Timeout
	}
	return 10 * time.Second
}

// requestKey makes command ids: the Idempotency-Key when the client sent
// one (so a retry maps to the same command even without Redis, and the
// ledger applies it once), a fresh random id otherwise.
func requestKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("Idempotency-Key")); k != "" {
		return "key:" + k
	}
	return uuid.NewString()
}

// run publishes cmd and waits for its outcome (ledger.Issue, the path
// every edge shares).
func (s *Server) run(ctx context.Context, cmd ledger.Command, timeout time.Duration) (*ledger.Outcome, bool, error) {
	return ledger.Issue(ctx, s.cfg.Actions.Waiter, s.cfg.Actions.Commands, cmd, timeout)
}

// decider carries out approve and reject as the dashboard does too.
func (s *Server) decider() ledger.Decider {
	return ledger.Decider{Commands: s.cfg.Actions.Commands, Waiter: s.cfg.Actions.Waiter,
		Referrals: s.cfg.Actions.Referrals, Timeout: s.actionTimeout()}
}
