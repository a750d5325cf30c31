// Package batch group-commits small operations of concurrent callers: each
// queues its item and waits, and a few flushers each take everything queued
// (up to a maximum) and carry it out in one statement or one pipeline.
// Under load the batches grow by themselves; a lone item goes at once.
package batch

import (
	"context"
	"sync"
)

// Group batches the items of concurrent Do calls through flush.
type Group[T, R any] struct {
	flush    func(ctx context.Context, items []T) ([]R, error)
	max      int
	flushers int

	start sync.Once
	queue chan entry[T, R]
}

type entry[T, R any] struct {
	ctx  context.Context
	item T
	done chan outcome[R]
}

type outcome[R any] struct {
	r   R
	err error
}

// New returns a Group with flushers concurrent flushes of at most max items
// each. flush returns one result per item, in order, or one error for all.
func New[T, R any](flushers, max int, flush func(context.Context, []T) ([]R, error)) *Group[T, R] {
	return &Group[T, R]{flush: flush, max: max, flushers: flushers, queue: make(chan entry[T, R], max*flushers)}
}

// Do queues item and waits for its result.
func (b *Group[T, R]) Do(ctx context.Context, item T) (R, error) {
	b.begin()
	it := entry[T, R]{ctx: ctx, item: item, done: make(chan outcome[R], 1)}
	var zero R
	select {
	case b.queue <- it:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case res := <-it.done:
		return res.r, res.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Submit queues item without waiting for its result: it blocks only while
// the queue is full, which is the caller's backpressure. A flush error is
// not reported to it.
func (b *Group[T, R]) Submit(ctx context.Context, item T) error {
	b.begin()
	select {
	case b.queue <- entry[T, R]{ctx: ctx, item: item}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// begin starts the flushers on first use.
func (b *Group[T, R]) begin() {
	b.start.Do(func() {
		for range b.flushers {
			go b.loop()
		}
	})
}

func (b *Group[T, R]) loop() {
	for first := range b.queue {
		batch := []entry[T, R]{first}
	drain:
		for len(batch) < b.max {
			select {
			case it := <-b.queue:
				batch = append(batch, it)
			default:
				break drain
			}
		}
		items := make([]T, len(batch))
		for i, it := range batch {
			items[i] = it.item
		}
		// The write outlives any one caller's context: others wait on it.
		results, err := b.flush(context.WithoutCancel(first.ctx), items)
		for i, it := range batch {
			res := outcome[R]{err: err}
			if err == nil {
				res.r = results[i]
			}
			if it.done != nil { // nil: Submit, nobody waits
				it.done <- res
			}
		}
	}
}
