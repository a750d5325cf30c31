package postgres

import (
	"context"
	"sync"
)

// batcher group-commits small writes: concurrent callers queue their item
// and wait; a few flusher goroutines each take everything queued (up to max)
// and write it in one statement. Under load the batches grow by themselves;
// a lone item is written at once.
type batcher[T, R any] struct {
	flush    func(ctx context.Context, items []T) ([]R, error)
	max      int
	flushers int

	start sync.Once
	queue chan batchItem[T, R]
}

type batchItem[T, R any] struct {
	ctx  context.Context
	item T
	done chan batchResult[R]
}

type batchResult[R any] struct {
	r   R
	err error
}

func newBatcher[T, R any](flushers, max int, flush func(context.Context, []T) ([]R, error)) *batcher[T, R] {
	return &batcher[T, R]{flush: flush, max: max, flushers: flushers, queue: make(chan batchItem[T, R], max*flushers)}
}

// do queues item and waits for its result.
func (b *batcher[T, R]) do(ctx context.Context, item T) (R, error) {
	b.start.Do(func() {
		for range b.flushers {
			go b.loop()
		}
	})
	it := batchItem[T, R]{ctx: ctx, item: item, done: make(chan batchResult[R], 1)}
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

func (b *batcher[T, R]) loop() {
	for first := range b.queue {
		batch := []batchItem[T, R]{first}
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
			res := batchResult[R]{err: err}
			if err == nil {
				res.r = results[i]
			}
			it.done <- res
		}
	}
}
