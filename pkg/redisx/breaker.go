package redisx

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// ErrUnavailable is what a call through an open Breaker returns at once,
// without touching Redis.
var ErrUnavailable = errors.New("redisx: redis unavailable (skipped until it answers a PING again)")

// Breaker skips Redis while it is down. One Breaker is shared by every
// Redis user of a process (dedupe, rate limits, idempotency records,
// command results, /readyz): the first call that finds Redis down opens it
// for all of them, so during an outage a request costs no Redis call, no
// dial and no timeout — only ErrUnavailable, which every caller already
// treats as "serve without the fast path".
//
// While open, one goroutine probes Redis every Every (a PING through the
// same client, so that its pool is the one proven to work again) and closes
// the Breaker as soon as a probe answers. Requests never probe: an outage
// costs them nothing, and the service is back on its fast path within
// Every plus a dial of Redis returning.
//
// A nil *Breaker is no breaker: every call goes through.
type Breaker struct {
	cfg BreakerConfig
	// state is the generation times two, plus one while open. A call
	// remembers the state it started in and can trip only that
	// generation: a call still failing from before a recovery does not
	// reopen the Breaker that a probe just closed.
	state atomic.Uint64
	since atomic.Int64 // unix nanoseconds of the last opening

	mu     sync.Mutex
	closed bool // Close was called: no new probe goroutine
	done   chan struct{}
	wg     sync.WaitGroup
}

// BreakerConfig configures a Breaker.
type BreakerConfig struct {
	// Ping asks Redis whether it answers; nil means it does (the Breaker
	// then closes at the first probe).
	Ping func(ctx context.Context) error
	// Log receives one line when Redis goes down and one when it is back;
	// none when nil.
	Log *zap.Logger
	// Every is the time between probes while open (default 250 ms), and
	// ProbeTimeout bounds one probe (default 500 ms).
	Every        time.Duration
	ProbeTimeout time.Duration
	// Now and After are the clock (time.Now and time.After when nil); a
	// test injects its own to step the probes.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

// The defaults of BreakerConfig.
const (
	DefaultProbeEvery   = 250 * time.Millisecond
	defaultProbeTimeout = 500 * time.Millisecond
)

// NewBreaker returns a closed Breaker. Close stops its probe.
func NewBreaker(cfg BreakerConfig) *Breaker {
	if cfg.Every <= 0 {
		cfg.Every = DefaultProbeEvery
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = defaultProbeTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Breaker{cfg: cfg, done: make(chan struct{})}
}

// Open reports whether Redis is being skipped.
func (b *Breaker) Open() bool { return b != nil && b.state.Load()&1 == 1 }

// Check returns ErrUnavailable while the Breaker is open, else nil: a
// caller about to queue work for Redis skips it at once.
func (b *Breaker) Check() error {
	if b.Open() {
		return ErrUnavailable
	}
	return nil
}

// Do runs call, which talks to Redis, unless the Breaker is open: then it
// returns ErrUnavailable at once. An error of call that says Redis did not
// answer (IsOutage) opens the Breaker; call's error is returned as is.
func (b *Breaker) Do(ctx context.Context, call func(context.Context) error) error {
	if b == nil {
		return call(ctx)
	}
	gen := b.state.Load()
	if gen&1 == 1 {
		return ErrUnavailable
	}
	err := call(ctx)
	if IsOutage(err) {
		b.trip(gen, err)
	}
	return err
}

// IsOutage reports whether err means Redis did not answer: a network
// error, a timeout, a closed pool, a server still loading its data. An
// answer (redis.Nil, a script's or command's error reply), the caller
// giving up (context.Canceled) and ErrUnavailable itself are not.
func IsOutage(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return strings.HasPrefix(reply.Error(), "LOADING")
	}
	return true
}

// trip opens the Breaker if it is still in generation gen, and starts the
// probe.
func (b *Breaker) trip(gen uint64, err error) {
	if !b.state.CompareAndSwap(gen, gen+1) {
		return
	}
	b.since.Store(b.cfg.Now().UnixNano())
	b.cfg.Log.Warn("redis unavailable: every use of it is skipped until it answers a PING again", zap.Error(err))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.wg.Add(1)
	go b.probe(gen + 1)
}

// probe pings Redis every Every until it answers, then closes the Breaker
// (generation open+1).
func (b *Breaker) probe(open uint64) {
	defer b.wg.Done()
	for {
		select {
		case <-b.done:
			return
		case <-b.cfg.After(b.cfg.Every):
		}
		if b.ping() != nil {
			continue
		}
		if b.state.CompareAndSwap(open, open+1) {
			down := time.Duration(b.cfg.Now().UnixNano() - b.since.Load())
			b.cfg.Log.Info("redis available again", zap.Duration("down_for", down))
		}
		return
	}
}

func (b *Breaker) ping() error {
	if b.cfg.Ping == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.ProbeTimeout)
	defer cancel()
	return b.cfg.Ping(ctx)
}

// Close stops the probe and waits for it to end. The Breaker keeps its
// state: an open Breaker stays open.
func (b *Breaker) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.done)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// Probe returns the Breaker's probe of rdb: a dial of Redis by itself,
// then a PING through rdb. While Redis refuses connections a probe costs
// one refused dial, outside rdb's pool: go-redis would log every failed
// dial of its pool, and after PoolSize of them stop dialing for a second
// at a time, which would delay the recovery.
func Probe(rdb *redis.Client) func(context.Context) error {
	opt := rdb.Options()
	return func(ctx context.Context) error {
		conn, err := opt.Dialer(ctx, opt.Network, opt.Addr)
		if err != nil {
			return err
		}
		_ = conn.Close()
		return rdb.Ping(ctx).Err()
	}
}

// FailFast sets, where the URL left them unset, the client options that
// make a call against a dead Redis fail in milliseconds instead of seconds:
// go-redis's defaults dial five times 100 ms apart per connection and retry
// a command three times, which cost over 5 s per webhook with Redis
// stopped. A refused dial is tried once, a command retried once (a pooled
// connection may have died with a restart), and a Redis that accepts but
// hangs is given 500 ms.
func FailFast(opt *redis.Options) *redis.Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	set(&opt.DialTimeout, 500*time.Millisecond)
	set(&opt.ReadTimeout, 500*time.Millisecond)
	set(&opt.WriteTimeout, 500*time.Millisecond)
	set(&opt.PoolTimeout, time.Second)
	if opt.DialerRetries == 0 {
		opt.DialerRetries = 1
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = 1
	}
	return opt
}
