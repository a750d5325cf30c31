package dispatch

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/batch"
	"github.com/convida/convida/pkg/webhook"
)

// endpointCache keeps each merchant's active endpoints with the endpoints
// version (Store.EndpointVersions) read before they were loaded. Each call
// reads the current versions of its merchants (one query, shared with the
// calls that arrive while it waits), and reloads only
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
	// versions reads the versions of concurrent calls' merchants in one
	// query (one flusher): the event batches of every partition that
	// arrive while a read is in flight share the next one, which starts
	// after they arrived and so sees every change committed before their
	// events. One query per batch was most of the dispatcher's PostgreSQL.
	versions *batch.Group[[]uuid.UUID, map[uuid.UUID]int64]

	mu      sync.Mutex
	entries map[uuid.UUID]cachedEndpoints
}

type cachedEndpoints struct {
	list    []webhook.Endpoint
	version int64 // read before list was loaded
}

func newEndpointCache(store Store) *endpointCache {
	return &endpointCache{store: store, entries: map[uuid.UUID]cachedEndpoints{},
		versions: batch.New(1, 64, func(ctx context.Context, sets [][]uuid.UUID) ([]map[uuid.UUID]int64, error) {
			var merchants []uuid.UUID
			seen := map[uuid.UUID]bool{}
			for _, set := range sets {
				for _, m := range set {
					if !seen[m] {
						seen[m] = true
						merchants = append(merchants, m)
					}
				}
			}
			versions, err := store.EndpointVersions(ctx, merchants)
			shared := make([]map[uuid.UUID]int64, len(sets)) // read only
			for i := range shared {
				shared[i] = versions
			}
			return shared, err
		})}
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
	versions, err := c.versions.Do(ctx, unique)
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
