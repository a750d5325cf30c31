package redisx

import (
	"fmt"
	"testing"
	"time"
)

func TestBlockListExpires(t *testing.T) {
	t.Parallel()
	b := newBlockList(10)
	now := time.Unix(1_700_000_000, 0)
	b.block("198.51.100.7", now.Add(3*time.Second), now)
	if got := b.remaining("198.51.100.7", now.Add(time.Second)); got != 2*time.Second {
		t.Errorf("1 s into a 3 s block: remaining %v, want 2s", got)
	}
	if got := b.remaining("198.51.100.8", now); got != 0 {
		t.Errorf("another client: remaining %v, want 0", got)
	}
	// A shorter block does not cut a longer one short.
	b.block("198.51.100.7", now.Add(time.Second), now)
	if got := b.remaining("198.51.100.7", now); got != 3*time.Second {
		t.Errorf("after a shorter block: remaining %v, want 3s", got)
	}
	if got := b.remaining("198.51.100.7", now.Add(3*time.Second)); got != 0 {
		t.Errorf("at the end of the block: remaining %v, want 0", got)
	}
	if b.size() != 0 {
		t.Errorf("an ended block is still held (%d entries)", b.size())
	}
}

func TestBlockListStaysBounded(t *testing.T) {
	t.Parallel()
	const max = 100
	b := newBlockList(max)
	now := time.Unix(1_700_000_000, 0)
	// Half the list ends soon, half later.
	for i := range max {
		until := now.Add(time.Minute)
		if i%2 == 0 {
			until = now.Add(time.Second)
		}
		b.block(fmt.Sprintf("c%d", i), until, now)
	}
	if b.size() != max {
		t.Fatalf("size %d, want %d", b.size(), max)
	}
	// Full, past the short blocks: a new client makes room by forgetting
	// the ended ones, and the live ones stay.
	later := now.Add(2 * time.Second)
	b.block("new", later.Add(time.Minute), later)
	if b.size() != max/2+1 {
		t.Errorf("after the sweep: size %d, want %d", b.size(), max/2+1)
	}
	if b.remaining("c1", later) == 0 || b.remaining("new", later) == 0 {
		t.Error("a live block was forgotten while ended ones made room")
	}
	// A flood of new clients with every block live: the list never grows
	// beyond max, and the newest is held.
	for i := range 10 * max {
		b.block(fmt.Sprintf("flood%d", i), later.Add(time.Minute), later)
		if b.size() > max {
			t.Fatalf("after %d new clients: size %d, want at most %d", i+1, b.size(), max)
		}
	}
	if b.remaining(fmt.Sprintf("flood%d", 10*max-1), later) == 0 {
		t.Error("the newest block was not kept")
	}
}
