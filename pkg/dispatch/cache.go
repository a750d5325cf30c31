package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/webhook"
)

// endpointCache keeps each merchant's active endpoints for a short while:
// an event batch then costs no query when its merchants were seen lately.
type endpointCache struct {
	store Store
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[uuid.UUID]cachedEndpoints
}

type cachedEndpoints struct {
	list    []webhook.Endpoint
	fetched time.Time
}

func newEndpointCache(store Store, ttl time.Duration, now func() time.Time) *endpointCache {
	return &endpointCache{store: store, ttl: ttl, now: now, entries: map[uuid.UUID]cachedEndpoints{}}
}

// get returns the active endpoints of each merchant, loading the stale or
// missing ones in one query.
func (c *endpointCache) get(ctx context.Context, merchants []uuid.UUID) (map[uuid.UUID][]webhook.Endpoint, error) {
	now := c.now()
	out := make(map[uuid.UUID][]webhook.Endpoint, len(merchants))
	var missing []uuid.UUID
	c.mu.Lock()
	for _, m := range merchants {
		if _, done := out[m]; done {
			continue
		}
		if e, ok := c.entries[m]; ok && now.Sub(e.fetched) < c.ttl {
			out[m] = e.list
			continue
		}
		out[m] = nil
		missing = append(missing, m)
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	loaded, err := c.store.ActiveEndpoints(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range missing {
		out[m] = loaded[m]
		c.entries[m] = cachedEndpoints{list: loaded[m], fetched: now}
	}
	return out, nil
}

// forget drops a merchant's entry (its endpoint was just disabled).
func (c *endpointCache) forget(merchant uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, merchant)
}
