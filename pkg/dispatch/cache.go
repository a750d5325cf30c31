package dispatch

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/webhook"
)

// endpointCache keeps each merchant's active endpoints with the endpoints
// version (Store.EndpointVersions) read before they were loaded. Each call
// reads the current versions of its merchants, one query, and reloads only
// the merchants whose version moved: an event batch costs no endpoint
// query while its merchants' endpoints stay as they are, and never misses
// a change committed before the call.
//
// That is what makes the fan-out exact: the dispatcher reads an event only
// after the transaction that wrote it committed (the outbox relays after
// the commit), and a change to endpoints moves the version in its own
// transaction, so the versions read for a batch include every endpoint
// change committed before any of its events.
type endpointCache struct {
	store Store

	mu      sync.Mutex
	entries map[uuid.UUID]cachedEndpoints
}

type cachedEndpoints struct {
	list    []webhook.Endpoint
	version int64 // read before list was loaded
}

func newEndpointCache(store Store) *endpointCache {
	return &endpointCache{store: store, entries: map[uuid.UUID]cachedEndpoints{}}
}

// get returns the active endpoints of each merchant as committed before
// the call: the versions of the merchants in one query, then the endpoints
// of those whose version moved in one more.
func (c *endpointCache) get(ctx context.Context, merchants []uuid.UUID) (map[uuid.UUID][]webhook.Endpoint, error) {
	out := make(map[uuid.UUID][]webhook.Endpoint, len(merchants))
	unique := make([]uuid.UUID, 0, len(merchants))
	for _, m := range merchants {
		if _, seen := out[m]; !seen {
			out[m] = nil
			unique = append(unique, m)
		}
	}
	versions, err := c.store.EndpointVersions(ctx, unique)
	if err != nil {
		return nil, err
	}
	var stale []uuid.UUID
	c.mu.Lock()
	for _, m := range unique {
		if e, ok := c.entries[m]; ok && e.version == versions[m] {
			out[m] = e.list
			continue
		}
		stale = append(stale, m)
	}
	c.mu.Unlock()
	if len(stale) == 0 {
		return out, nil
	}
	loaded, err := c.store.ActiveEndpoints(ctx, stale)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range stale {
		out[m] = loaded[m]
		// A concurrent batch may have cached a newer load meanwhile: keep it.
		if e, ok := c.entries[m]; !ok || e.version <= versions[m] {
			c.entries[m] = cachedEndpoints{list: loaded[m], version: versions[m]}
		}
	}
	return out, nil
}
