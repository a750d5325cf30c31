// Package outbox relays domain events written in the same transaction as
// their cause to the events topic. The writer commits the event row with
// its effect; after the commit the relay publishes it and marks it relayed.
// A crash in between leaves the row unrelayed, and the scheduler's sweep
// publishes it again: delivery is at least once, and receivers deduplicate
// by event id. A record the broker refuses for itself (too large, invalid)
// is set aside, so that it never holds back the records behind it.
package outbox

import (
	"context"
	"fmt"
	"slices"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/event"
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

// NewRecord renders an event with its admin-shape data as a Record. The
// envelope is written around the data's encoding rather than encoded
// again: its other fields are ids, a type and a time that need no
// escaping (a type that would is encoded the long way), and encoding the
// data a second time, as a json.RawMessage, showed in the ledger's profile.
func NewRecord(merchantID, memberID uuid.UUID, typ string, data any, createdAt time.Time) (Record, error) {
	id := ids.New()
	raw, err := json.Marshal(data)
	if err != nil {
		return Record{}, fmt.Errorf("encode %s data: %w", typ, err)
	}
	env := Envelope{ID: ids.Format(ids.Event, id), Type: typ, CreatedAt: jsontime.Format(createdAt),
		MerchantID: merchantID.String(), Data: raw}
	payload, err := env.encode()
	if err != nil {
		return Record{}, err
	}
	return Record{MerchantID: merchantID, EventID: id, MemberID: memberID, Type: typ, Payload: payload, CreatedAt: createdAt}, nil
}

// encode renders the envelope as json.Marshal would, Data taken as it is
// (it must be the compact output of json.Marshal).
func (e Envelope) encode() ([]byte, error) {
	if !plain(e.Type) {
		return json.Marshal(e)
	}
	b := make([]byte, 0, len(e.Data)+len(e.ID)+len(e.Type)+len(e.CreatedAt)+len(e.MerchantID)+64)
	b = append(b, `{"id":"`...)
	b = append(b, e.ID...)
	b = append(b, `","type":"`...)
	b = append(b, e.Type...)
	b = append(b, `","created_at":"`...)
	b = append(b, e.CreatedAt...)
	b = append(b, `","merchant_id":"`...)
	b = append(b, e.MerchantID...)
	b = append(b, `","data":`...)
	b = append(b, e.Data...)
	return append(b, '}'), nil
}

// plain reports whether s encodes in JSON as itself between quotes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Store marks and finds outbox rows.
type Store interface {
	MarkRelayed(ctx context.Context, recs []Record) error
	// SetAside takes refused records off the pending queue for good and
	// keeps, on each one's outbox row, its error and when it was set aside.
	SetAside(ctx context.Context, refused []Refused) error
	// ListUnrelayed returns rows written before olderThan and not relayed, oldest first.
	ListUnrelayed(ctx context.Context, olderThan time.Time, limit int) ([]Record, error)
}

// Refused is a record the broker refuses for itself (too large, invalid):
// publishing it again would be refused the same way.
type Refused struct {
	Record Record
	Err    error
}

// Publisher publishes records to the events topic, keyed by member.
type Publisher interface {
	// PublishEach publishes recs and returns once the broker acknowledged
	// them. It returns the records refused for themselves; when err is nil
	// every other record was published. An error is transient (broker
	// down, timeout): some records may not have been published, and
	// publishing them again is safe.
	PublishEach(ctx context.Context, recs []Record) ([]Refused, error)
}

// Relay moves committed records to the events topic.
type Relay struct {
	store Store
	pub   Publisher
	// Log gets a warning for every record set aside; Metrics counts them.
	// Both are optional.
	Log     *zap.Logger
	Metrics *Metrics
}

// NewRelay returns a Relay.
func NewRelay(store Store, pub Publisher) *Relay { return &Relay{store: store, pub: pub} }

// Relay publishes recs, then marks them relayed. A record the broker
// refuses for itself is set aside instead (Store.SetAside, a warning, the
// metric), so that it never holds back the others: they are published and
// marked, and Relay returns nil. A transient error is returned and leaves
// the records not set aside to the sweep; publishing again is safe.
func (r *Relay) Relay(ctx context.Context, recs []Record) error {
	_, err := r.relay(ctx, recs)
	return err
}

// relay is Relay returning how many records it marked relayed.
func (r *Relay) relay(ctx context.Context, recs []Record) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	refused, err := r.pub.PublishEach(ctx, recs)
	if len(refused) > 0 {
		if err := r.setAside(ctx, refused); err != nil {
			return 0, fmt.Errorf("set aside refused events: %w", err)
		}
		recs = without(recs, refused)
	}
	if err != nil {
		return 0, fmt.Errorf("publish events: %w", err)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	if err := r.store.MarkRelayed(ctx, recs); err != nil {
		return 0, err
	}
	return len(recs), nil
}

// setAside records the refusals, then tells the operator: one warning per
// record, with what identifies it (never its payload), and the metric.
func (r *Relay) setAside(ctx context.Context, refused []Refused) error {
	if err := r.store.SetAside(ctx, refused); err != nil {
		return err
	}
	log := r.Log
	if log == nil {
		log = zap.NewNop()
	}
	for _, f := range refused {
		log.Warn("outbox event set aside: the broker refuses it; it will not be published",
			zap.String("event_id", ids.Format(ids.Event, f.Record.EventID)), zap.String("type", f.Record.Type),
			zap.String("merchant", f.Record.MerchantID.String()), zap.Int("bytes", len(f.Record.Payload)), zap.Error(f.Err))
		r.Metrics.setAside(f.Record.Type)
	}
	return nil
}

// without returns recs less the refused ones, in a new slice.
func without(recs []Record, refused []Refused) []Record {
	out := make([]Record, 0, len(recs))
	for _, rec := range recs {
		if !slices.ContainsFunc(refused, func(f Refused) bool {
			return f.Record.EventID == rec.EventID && f.Record.MerchantID == rec.MerchantID
		}) {
			out = append(out, rec)
		}
	}
	return out
}

// Sweep relays rows left unrelayed for longer than grace (a relay that
// crashed or failed after its commit), in pages of limit, and returns how
// many it relayed; the rows it sets aside leave the queue and are not
// counted.
func (r *Relay) Sweep(ctx context.Context, now time.Time, grace time.Duration, limit int) (int, error) {
	total := 0
	for {
		recs, err := r.store.ListUnrelayed(ctx, now.Add(-grace), limit)
		if err != nil {
			return total, err
		}
		n, err := r.relay(ctx, recs)
		total += n
		if err != nil {
			return total, err
		}
		if len(recs) < limit {
			return total, nil
		}
	}
}

// Metrics counts the records set aside. A nil *Metrics counts nothing.
type Metrics struct{ setAsideTotal *prometheus.CounterVec }

// NewMetrics registers the outbox metrics on reg (once per registry).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{setAsideTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convida_outbox_set_aside_total",
		Help: "Outbox events set aside because the broker refuses them for themselves (too large, invalid), by event type.",
	}, []string{"type"})}
	reg.MustRegister(m.setAsideTotal)
	// Each type's series exists at zero from the start: one that appeared
	// with its first set-aside would be invisible to increase(), and the
	// alert on it would miss the first event.
	for _, typ := range append(slices.Clone(event.Subscribable), event.RedemptionRequested) {
		m.setAsideTotal.WithLabelValues(typ)
	}
	return m
}

func (m *Metrics) setAside(typ string) {
	if m != nil {
		m.setAsideTotal.WithLabelValues(typ).Inc()
	}
}
