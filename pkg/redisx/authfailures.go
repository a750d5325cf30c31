package redisx

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// AuthFailures limits failed authentications per client (issue 17): a
// client that keeps presenting wrong API keys, webhook tokens or
// signatures is answered 429 before any database work, apart from the
// per-key and per-merchant rate limits. A client is what
// clientip.Resolver.Key names (an IPv4 address, an IPv6 /64), at the
// ingest with the merchant its delivery names.
//
// The request path consults only this process's memory (Blocked): a
// bounded list of blocked clients, each with the time it is blocked until.
// Only a failure goes to Redis (Failed), where it is counted with the GCRA
// of Limiter, so that the failures a client makes at every replica spend
// one allowance; the failure that spends it blocks the client here until
// the allowance would let one more through. Another replica learns at that
// client's next failure, which Redis refuses. While Redis is down failures
// are not counted (fail open: the API and the ingest keep serving), and
// only the blocks already in memory apply.
//
// A nil *AuthFailures limits nothing.
type AuthFailures struct {
	lim     *Limiter
	prefix  string
	limit   redis_rate.Limit
	now     func() time.Time
	blocks  *blockList
	refused prometheus.Counter // nil: not counted
}

// The defaults of AuthFailuresConfig.
const (
	// DefaultAuthFailuresPerMinute is the allowance of failed
	// authentications one client earns per minute: a person who mistyped a
	// key, or a platform whose merchant has not pasted its token yet, stays
	// under it; a guesser gets one try every 3 s.
	DefaultAuthFailuresPerMinute = 20
	// DefaultAuthFailureBurst is how many failures a client may make at
	// once before the first block.
	DefaultAuthFailureBurst = 10
	// DefaultMaxBlocked bounds the clients one process keeps blocked in
	// memory (some 100 bytes each).
	DefaultMaxBlocked = 50_000
	// authFailureTimeout bounds the count of a failure in Redis; past it
	// the failure is not counted.
	authFailureTimeout = 250 * time.Millisecond
)

// AuthFailuresConfig sets up an AuthFailures. Zero values take the
// defaults above.
type AuthFailuresConfig struct {
	// Edge names the edge that authenticates ("api", "ingest"): each
	// edge's failures are counted apart, and it labels the metric.
	Edge      string
	PerMinute int
	Burst     int
	// MaxBlocked bounds the blocked clients kept in memory.
	MaxBlocked int
	// Registry, when set, receives convida_auth_failures_blocked_total,
	// the requests refused because their client is blocked.
	Registry prometheus.Registerer
	Now      func() time.Time
}

// NewAuthFailures returns an AuthFailures that counts in rdb and skips
// Redis while brk is open.
func NewAuthFailures(rdb redis.UniversalClient, brk *Breaker, cfg AuthFailuresConfig) *AuthFailures {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &AuthFailures{
		lim:    NewLimiter(rdb, brk),
		prefix: "authfail:" + cfg.Edge + ":",
		limit: redis_rate.Limit{Rate: positiveOr(cfg.PerMinute, DefaultAuthFailuresPerMinute),
			Burst: positiveOr(cfg.Burst, DefaultAuthFailureBurst), Period: time.Minute},
		now:    cfg.Now,
		blocks: newBlockList(positiveOr(cfg.MaxBlocked, DefaultMaxBlocked)),
	}
	if cfg.Registry != nil {
		a.refused = blockedCounter(cfg.Registry).WithLabelValues(cfg.Edge)
	}
	return a
}

func positiveOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// blockedCounter registers the metric once per registry: the API and the
// ingest of one process (standalone) share it, each with its label.
func blockedCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convida_auth_failures_blocked_total",
		Help: "Requests answered 429 because their client spent its allowance of failed authentications, by edge.",
	}, []string{"edge"})
	var dup prometheus.AlreadyRegisteredError
	if err := reg.Register(vec); errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing
		}
	}
	return vec
}

// Blocked returns how long client stays blocked, 0 when it is not. It
// reads only this process's memory.
func (a *AuthFailures) Blocked(client string) time.Duration {
	if a == nil {
		return 0
	}
	return a.blocks.remaining(client, a.now())
}

// Failed counts one failed authentication of client. When the failure
// spends the client's allowance, or comes after it was spent (at another
// replica, say), the client is blocked here and retryAfter says for how
// long; over tells the second case, which the caller answers 429 rather
// than as a failure. Redis not answering is no failure of the caller: the
// failure is not counted, and (0, false) comes back.
func (a *AuthFailures) Failed(ctx context.Context, client string) (retryAfter time.Duration, over bool) {
	if a == nil {
		return 0, false
	}
	// Counted even when the client hung up: hanging up is no way out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), authFailureTimeout)
	defer cancel()
	res, err := a.lim.allow(ctx, a.prefix+client, a.limit)
	if err != nil {
		return 0, false
	}
	switch {
	case res.Allowed == 0:
		retryAfter, over = max(res.RetryAfter, time.Millisecond), true
	case res.Remaining == 0:
		// This failure spent the allowance: the next is refused until one
		// more is earned, which is ResetAfter less the burst's other slots.
		emission := a.limit.Period / time.Duration(a.limit.Rate)
		retryAfter = max(res.ResetAfter-time.Duration(a.limit.Burst-1)*emission, time.Millisecond)
	default:
		return 0, false
	}
	now := a.now()
	a.blocks.block(client, now.Add(retryAfter), now)
	return retryAfter, over
}

// Refused counts a request refused because its client is blocked.
func (a *AuthFailures) Refused() {
	if a != nil && a.refused != nil {
		a.refused.Inc()
	}
}

// blockList is the clients blocked in this process, each with the time it
// is blocked until; it keeps at most max of them.
type blockList struct {
	max int

	mu    sync.Mutex
	until map[string]time.Time
	swept time.Time // the last time the ended blocks were forgotten
}

func newBlockList(max int) *blockList {
	return &blockList{max: max, until: map[string]time.Time{}}
}

// remaining returns how long client stays blocked at now, 0 when it is not;
// a block that ended is forgotten.
func (b *blockList) remaining(client string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	until, ok := b.until[client]
	if !ok {
		return 0
	}
	if !now.Before(until) {
		delete(b.until, client)
		return 0
	}
	return until.Sub(now)
}

// block blocks client until until, or keeps its later block. A full list
// first forgets the blocks that ended (at most once a second: the sweep
// reads every entry), then, when still full, one block at random: under a
// flood of new clients the list stays bounded, and a client forgotten
// early is blocked again at its next failure, which Redis refuses.
func (b *blockList) block(client string, until, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur, ok := b.until[client]; ok {
		if until.After(cur) {
			b.until[client] = until
		}
		return
	}
	if len(b.until) >= b.max && now.Sub(b.swept) >= time.Second {
		b.swept = now
		for k, u := range b.until {
			if !now.Before(u) {
				delete(b.until, k)
			}
		}
	}
	if len(b.until) >= b.max {
		for k := range b.until {
			delete(b.until, k)
			break
		}
	}
	b.until[client] = until
}

// size is how many clients the list holds.
func (b *blockList) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.until)
}
