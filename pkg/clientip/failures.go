package clientip

import (
	"context"
	"time"
)

// FailureLimit limits failed authentications per client key, the
// contract the API and the ingest share and redisx.AuthFailures keeps. The
// API and the dashboard count per address (Key); the ingest per address
// and merchant, since the platforms post every merchant's webhooks from
// the same few addresses (ingest/failures.go).
// Blocked reads only memory: how long client stays blocked (0: not
// blocked), so it costs a request nothing. Failed counts one failure of
// client and tells whether it is now blocked (retryAfter > 0) and whether
// this failure was already beyond its allowance (over). Refused counts a
// request refused because its client is blocked.
type FailureLimit interface {
	Blocked(client string) time.Duration
	Failed(ctx context.Context, client string) (retryAfter time.Duration, over bool)
	Refused()
}

// NoFailureLimit limits nothing: the edges' FailureLimit when none is
// configured.
type NoFailureLimit struct{}

func (NoFailureLimit) Blocked(string) time.Duration                         { return 0 }
func (NoFailureLimit) Failed(context.Context, string) (time.Duration, bool) { return 0, false }
func (NoFailureLimit) Refused()                                             {}
