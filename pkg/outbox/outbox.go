// Package outbox relays domain events written in the same transaction as
// their cause to the events topic. The writer commits the event row with
// its effect; after the commit the relay publishes it and marks it relayed.
// A crash in between leaves the row unrelayed, and the scheduler's sweep
// publishes it again: delivery is at least once, and receivers deduplicate
// by event id.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
)

// Record is one outbox row: an event envelope ready to publish.
type Record struct {
	MerchantID uuid.UUID
	EventID    uuid.UUID
	MemberID   uuid.UUID
	Type       string
	Payload    []byte // the envelope, the exact bytes every delivery sends
	CreatedAt  time.Time
}

// Envelope is an outbound event as delivered (webhooks.md).
type Envelope struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	CreatedAt  string          `json:"created_at"`
	MerchantID string          `json:"merchant_id"`
	Data       json.RawMessage `json:"data"`
}

// NewRecord renders an event with its admin-shape data as a Record.
func NewRecord(merchantID, memberID uuid.UUID, typ string, data any, createdAt time.Time) (Record, error) {
	id := uuid.New()
	raw, err := json.Marshal(data)
	if err != nil {
		return Record{}, fmt.Errorf("encode %s data: %w", typ, err)
	}
	payload, err := json.Marshal(Envelope{
		ID: ids.Format(ids.Event, id), Type: typ, CreatedAt: jsontime.Format(createdAt),
		MerchantID: merchantID.String(), Data: raw,
	})
	if err != nil {
		return Record{}, err
	}
	return Record{MerchantID: merchantID, EventID: id, MemberID: memberID, Type: typ, Payload: payload, CreatedAt: createdAt}, nil
}

// Store marks and finds outbox rows.
type Store interface {
	MarkRelayed(ctx context.Context, recs []Record) error
	// ListUnrelayed returns rows written before olderThan and not relayed, oldest first.
	ListUnrelayed(ctx context.Context, olderThan time.Time, limit int) ([]Record, error)
}

// Publisher publishes records to the events topic, keyed by member, and
// returns once the broker acknowledged them.
type Publisher interface {
	PublishEvents(ctx context.Context, recs []Record) error
}

// Relay moves committed records to the events topic.
type Relay struct {
	store Store
	pub   Publisher
}

// NewRelay returns a Relay.
func NewRelay(store Store, pub Publisher) *Relay { return &Relay{store: store, pub: pub} }

// Relay publishes recs, then marks them relayed. An error leaves them for
// the sweep; publishing again is safe.
func (r *Relay) Relay(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := r.pub.PublishEvents(ctx, recs); err != nil {
		return fmt.Errorf("publish events: %w", err)
	}
	return r.store.MarkRelayed(ctx, recs)
}

// Sweep relays rows left unrelayed for longer than grace (a relay that
// crashed or failed after its commit), in pages of limit, and returns how
// many it relayed.
func (r *Relay) Sweep(ctx context.Context, now time.Time, grace time.Duration, limit int) (int, error) {
	total := 0
	for {
		recs, err := r.store.ListUnrelayed(ctx, now.Add(-grace), limit)
		if err != nil {
			return total, err
		}
		if err := r.Relay(ctx, recs); err != nil {
			return total, err
		}
		total += len(recs)
		if len(recs) < limit {
			return total, nil
		}
	}
}
