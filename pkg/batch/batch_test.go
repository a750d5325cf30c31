package batch_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/batch"
)

// TestGroupBatchesConcurrentCalls checks each caller gets the result of its
// own item while slow flushes let the queue build up into real batches.
func TestGroupBatchesConcurrentCalls(t *testing.T) {
	var flushes, biggest atomic.Int64
	g := batch.New(2, 50, func(_ context.Context, items []int) ([]int, error) {
		flushes.Add(1)
		if n := int64(len(items)); n > biggest.Load() {
			biggest.Store(n)
		}
		time.Sleep(2 * time.Millisecond)
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = v * 10
		}
		return out, nil
	})
	var wg sync.WaitGroup
	for i := range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := g.Do(context.Background(), i)
			if err != nil || got != i*10 {
				t.Errorf("Do(%d) = %d, %v; want %d, nil", i, got, err, i*10)
			}
		}()
	}
	wg.Wait()
	if flushes.Load() >= 500 || biggest.Load() < 2 {
		t.Fatalf("%d flushes for 500 items, biggest batch %d: want batching", flushes.Load(), biggest.Load())
	}
	if biggest.Load() > 50 {
		t.Fatalf("biggest batch %d, want at most 50", biggest.Load())
	}
}

func TestGroupErrorReachesEveryCaller(t *testing.T) {
	boom := errors.New("boom")
	g := batch.New(1, 10, func(_ context.Context, items []int) ([]struct{}, error) { return nil, boom })
	if _, err := g.Do(context.Background(), 1); !errors.Is(err, boom) {
		t.Fatalf("Do: %v, want boom", err)
	}
}

func TestGroupCallerContext(t *testing.T) {
	release := make(chan struct{})
	g := batch.New(1, 1, func(_ context.Context, items []int) ([]int, error) {
		<-release
		return items, nil
	})
	defer close(release)
	go g.Do(context.Background(), 1) // occupies the only flusher
	time.Sleep(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Do(ctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do with an expiring context: %v, want deadline exceeded", err)
	}
}

func TestGroupSubmitDoesNotWait(t *testing.T) {
	var got sync.Map
	release := make(chan struct{})
	g := batch.New(1, 10, func(_ context.Context, items []int) ([]struct{}, error) {
		<-release
		for _, v := range items {
			got.Store(v, true)
		}
		return make([]struct{}, len(items)), nil
	})
	for i := range 5 {
		if err := g.Submit(context.Background(), i); err != nil { // the flusher is blocked: Submit must not be
			t.Fatal(err)
		}
	}
	close(release)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		n := 0
		got.Range(func(any, any) bool { n++; return true })
		if n == 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 5 submitted items flushed", n)
		}
	}
}
