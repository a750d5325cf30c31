package platform

import (
	"context"
	"sync"
)

// flight runs each request once for every caller that asks for it while
// it is in flight (what golang.org/x/sync/singleflight does), and ends the
// exchange when the last of its callers has gone: one caller's end does
// not fail the others, and a request nobody waits for any more does not
// hold a connection until its timeout. Its zero value is ready.
type flight struct {
	mu    sync.Mutex
	calls map[string]*call
}

// call is one request in flight.
type call struct {
	done    chan struct{} // closed once rep and err are set
	rep     reply
	err     error
	waiters int
	cancel  context.CancelFunc
}

// do returns the answer of fn for key, started now or joined in flight.
// fn runs with a context that keeps ctx's values and ends when every
// caller's context has ended. When ctx ends first, do returns ctx.Err()
// at once.
func (f *flight) do(ctx context.Context, key string, fn func(ctx context.Context) (reply, error)) (reply, error) {
	f.mu.Lock()
	c, ok := f.calls[key]
	if !ok {
		if f.calls == nil {
			f.calls = map[string]*call{}
		}
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &call{done: make(chan struct{}), cancel: cancel}
		f.calls[key] = c
		go func() {
			defer cancel()
			c.rep, c.err = fn(fctx)
			f.forget(key, c)
			close(c.done)
		}()
	}
	c.waiters++
	f.mu.Unlock()
	select {
	case <-c.done:
		return c.rep, c.err
	case <-ctx.Done():
		f.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			c.cancel()
			if f.calls[key] == c { // a later caller starts afresh
				delete(f.calls, key)
			}
		}
		f.mu.Unlock()
		return reply{}, ctx.Err()
	}
}

// forget removes c once answered, unless a newer call of key replaced it.
func (f *flight) forget(key string, c *call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls[key] == c {
		delete(f.calls, key)
	}
}
