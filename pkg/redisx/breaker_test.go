package redisx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/redisx"
)

// fakeClock steps a Breaker's probes: each tick lets one probe run, and
// the probe's answer is what the test sends on pings.
type fakeClock struct {
	now   time.Time
	ticks chan time.Time
	pings chan error   // the answers of the probes, one per probe
	asked atomic.Int64 // probes made
}

func newBreaker(t *testing.T) (*redisx.Breaker, *fakeClock, *observer.ObservedLogs) {
	t.Helper()
	c := &fakeClock{now: time.Unix(1_700_000_000, 0), ticks: make(chan time.Time), pings: make(chan error)}
	core, logs := observer.New(zap.InfoLevel)
	b := redisx.NewBreaker(redisx.BreakerConfig{
		Ping: func(context.Context) error {
			c.asked.Add(1)
			return <-c.pings
		},
		Log:   zap.New(core),
		Now:   func() time.Time { return c.now },
		After: func(time.Duration) <-chan time.Time { return c.ticks },
	})
	t.Cleanup(b.Close)
	return b, c, logs
}

// probe lets the breaker's probe run once with answer err.
func (c *fakeClock) probe(t *testing.T, err error) {
	t.Helper()
	select {
	case c.ticks <- c.now:
	case <-time.After(5 * time.Second):
		t.Fatal("no probe is waiting for a tick")
	}
	c.pings <- err
}

// waitOpen waits for the breaker's state to become open (the probe's
// transition happens on its own goroutine, just after its ping returned).
func waitOpen(t *testing.T, b *redisx.Breaker, open bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); b.Open() != open; {
		if time.Now().After(deadline) {
			t.Fatalf("breaker open = %v, want %v", b.Open(), open)
		}
		time.Sleep(time.Millisecond)
	}
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}

func TestBreakerOpensOnOutageAndSkipsRedis(t *testing.T) {
	t.Parallel()
	b, c, logs := newBreaker(t)
	calls := 0
	call := func(err error) func(context.Context) error {
		return func(context.Context) error { calls++; return err }
	}
	ctx := context.Background()
	if err := b.Do(ctx, call(nil)); err != nil || b.Open() {
		t.Fatalf("healthy call: err %v, open %v", err, b.Open())
	}
	if err := b.Do(ctx, call(errRefused)); !errors.Is(err, errRefused) {
		t.Fatalf("failing call returned %v, want its own error", err)
	}
	if !b.Open() {
		t.Fatal("after a refused dial the breaker is closed, want open")
	}
	for range 100 {
		if err := b.Do(ctx, call(nil)); !errors.Is(err, redisx.ErrUnavailable) {
			t.Fatalf("open breaker: Do returned %v, want ErrUnavailable", err)
		}
		if err := b.Check(); !errors.Is(err, redisx.ErrUnavailable) {
			t.Fatalf("open breaker: Check returned %v, want ErrUnavailable", err)
		}
	}
	if calls != 2 {
		t.Errorf("Redis was called %d times, want 2: an open breaker calls nothing", calls)
	}
	if n := c.asked.Load(); n != 0 {
		t.Errorf("%d probes before any tick, want 0: requests never probe", n)
	}
	if n := logs.FilterMessageSnippet("redis unavailable").Len(); n != 1 {
		t.Errorf("outage logged %d times, want once", n)
	}
}

func TestBreakerClosesWhenAProbeAnswers(t *testing.T) {
	t.Parallel()
	b, c, logs := newBreaker(t)
	ctx := context.Background()
	_ = b.Do(ctx, func(context.Context) error { return io.EOF })
	waitOpen(t, b, true)
	for i := range 3 { // Redis still down: one probe per tick, still open
		c.probe(t, errRefused)
		if n := c.asked.Load(); n != int64(i+1) {
			t.Fatalf("after %d ticks, %d probes", i+1, n)
		}
		if !b.Open() {
			t.Fatal("a failed probe closed the breaker")
		}
	}
	c.now = c.now.Add(3 * time.Second)
	c.probe(t, nil)
	waitOpen(t, b, false)
	called := false
	if err := b.Do(ctx, func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Fatalf("closed again: Do returned %v, called %v", err, called)
	}
	back := logs.FilterMessageSnippet("redis available again").All()
	if len(back) != 1 {
		t.Fatalf("recovery logged %d times, want once", len(back))
	}
	if got := back[0].ContextMap()["down_for"]; got != 3*time.Second {
		t.Errorf("down_for = %v, want 3s (from the injected clock)", got)
	}
	// A new outage opens it again, with a new probe.
	_ = b.Do(ctx, func(context.Context) error { return context.DeadlineExceeded })
	waitOpen(t, b, true)
	c.probe(t, nil)
	waitOpen(t, b, false)
}

func TestBreakerIgnoresAnswersAndCallersGivingUp(t *testing.T) {
	t.Parallel()
	b, _, _ := newBreaker(t)
	for _, err := range []error{
		redis.Nil,
		fmt.Errorf("redisx: idempotency begin: %w", redis.Nil),
		redisReply("WRONGTYPE Operation against a key holding the wrong kind of value"),
		redisReply("NOSCRIPT No matching script"),
		context.Canceled,
		redisx.ErrUnavailable,
	} {
		if redisx.IsOutage(err) {
			t.Errorf("IsOutage(%v) = true, want false", err)
		}
		_ = b.Do(context.Background(), func(context.Context) error { return err })
		if b.Open() {
			t.Fatalf("%v opened the breaker", err)
		}
	}
	for _, err := range []error{errRefused, io.EOF, context.DeadlineExceeded, redis.ErrClosed,
		redisReply("LOADING Redis is loading the dataset in memory"), fmt.Errorf("wrapped: %w", errRefused)} {
		if !redisx.IsOutage(err) {
			t.Errorf("IsOutage(%v) = false, want true", err)
		}
	}
}

// redisReply is an error reply of the server, as go-redis returns it.
type redisReply string

func (e redisReply) Error() string { return string(e) }
func (redisReply) RedisError()     {}

// A call that started before an outage was detected and fails after the
// probe closed the breaker does not open it again: its failure is news of
// a generation already over.
func TestBreakerIgnoresFailuresOfAnEarlierGeneration(t *testing.T) {
	t.Parallel()
	b, c, _ := newBreaker(t)
	ctx := context.Background()
	started, finish := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- b.Do(ctx, func(context.Context) error { close(started); <-finish; return io.EOF })
	}()
	<-started
	_ = b.Do(ctx, func(context.Context) error { return io.EOF }) // opens
	c.probe(t, nil)
	waitOpen(t, b, false)
	close(finish)
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("slow call returned %v", err)
	}
	if b.Open() {
		t.Error("a failure of the previous generation reopened the breaker")
	}
}

// Many requests failing at once open the breaker once and start one probe.
func TestBreakerOneProbeForConcurrentFailures(t *testing.T) {
	t.Parallel()
	b, c, logs := newBreaker(t)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.Do(context.Background(), func(context.Context) error { return errRefused })
		}()
	}
	wg.Wait()
	if n := logs.FilterMessageSnippet("redis unavailable").Len(); n != 1 {
		t.Errorf("outage logged %d times, want once", n)
	}
	c.probe(t, errRefused)
	c.probe(t, errRefused)
	if n := c.asked.Load(); n != 2 {
		t.Errorf("2 ticks made %d probes, want 2 (one prober)", n)
	}
	c.probe(t, nil)
	waitOpen(t, b, false)
	select {
	case c.ticks <- c.now:
		t.Error("a probe still waits for ticks after the breaker closed")
	case <-time.After(20 * time.Millisecond):
	}
}

func TestBreakerCloseStopsTheProbe(t *testing.T) {
	t.Parallel()
	b, c, _ := newBreaker(t)
	_ = b.Do(context.Background(), func(context.Context) error { return errRefused })
	stopped := make(chan struct{})
	go func() { b.Close(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return: the probe was not stopped")
	}
	if !b.Open() {
		t.Error("Close closed the breaker, want it left open")
	}
	if n := c.asked.Load(); n != 0 {
		t.Errorf("%d probes, want 0", n)
	}
}

func TestNilBreakerIsNoBreaker(t *testing.T) {
	t.Parallel()
	var b *redisx.Breaker
	for range 3 {
		if err := b.Do(context.Background(), func(context.Context) error { return errRefused }); !errors.Is(err, errRefused) {
			t.Fatalf("nil breaker: Do returned %v, want the call's error", err)
		}
	}
	if b.Open() || b.Check() != nil {
		t.Error("nil breaker reports open")
	}
	b.Close()
}

// Against a dead Redis, a fail-fast client and the breaker answer at once:
// the first call pays one refused dial and one retry, the next none.
func TestBreakerWithDeadRedisIsFast(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(redisx.FailFast(&redis.Options{Addr: "127.0.0.1:1"}))
	t.Cleanup(func() { _ = rdb.Close() })
	b := redisx.NewBreaker(redisx.BreakerConfig{Ping: redisx.Probe(rdb)})
	t.Cleanup(b.Close)
	d := redisx.NewDedupe(rdb, b)
	start := time.Now()
	if _, err := d.Seen(context.Background(), "k"); err == nil {
		t.Fatal("Seen against a dead Redis: no error")
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("first call against a dead Redis took %v, want milliseconds", took)
	}
	start = time.Now()
	for range 100 {
		if err := d.Remember(context.Background(), "k", time.Minute); !errors.Is(err, redisx.ErrUnavailable) {
			t.Fatalf("Remember with the breaker open returned %v, want ErrUnavailable", err)
		}
	}
	if took := time.Since(start); took > 50*time.Millisecond {
		t.Errorf("100 skipped calls took %v", took)
	}
}

// A Redis that accepts connections but never answers (a stopped process, a
// full machine) costs the first call the client's timeouts, and the calls
// after it nothing; the probe, which connects, still finds it down.
func TestBreakerWithHungRedis(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	go func() { // accept and hold every connection, never answer
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	rdb := redis.NewClient(redisx.FailFast(&redis.Options{Addr: l.Addr().String()}))
	t.Cleanup(func() { _ = rdb.Close() })
	probed := make(chan error, 16)
	probe := redisx.Probe(rdb)
	b := redisx.NewBreaker(redisx.BreakerConfig{Ping: func(ctx context.Context) error {
		err := probe(ctx)
		probed <- err
		return err
	}})
	t.Cleanup(b.Close)
	lim := redisx.NewLimiter(rdb, b)
	start := time.Now()
	if _, _, _, err := lim.Allow(context.Background(), "k", 1, 1); err == nil {
		t.Fatal("Allow against a hung Redis: no error")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("first call against a hung Redis took %v, want about the 500 ms read timeout", took)
	} else {
		t.Logf("first call against a hung Redis took %v", took)
	}
	start = time.Now()
	if _, _, _, err := lim.Allow(context.Background(), "k", 1, 1); !errors.Is(err, redisx.ErrUnavailable) {
		t.Fatalf("second call returned %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 10*time.Millisecond {
		t.Errorf("skipped call took %v", took)
	}
	select {
	case err := <-probed:
		if err == nil || !b.Open() {
			t.Errorf("probe of a hung Redis: %v, open %v; want an error and the breaker open", err, b.Open())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no probe within 5 s")
	}
}
