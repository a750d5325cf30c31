package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
)

type recordingPublisher struct{ got []outbox.Record }

func (p *recordingPublisher) PublishEach(_ context.Context, recs []outbox.Record) ([]outbox.Refused, error) {
	p.got = append(p.got, recs...)
	return nil, nil
}

// plantOutbox writes records as a committed writer leaves them before its
// relay: the event row and its pending key.
func plantOutbox(t *testing.T, s seeded, recs ...outbox.Record) {
	t.Helper()
	for _, r := range recs {
		if _, err := s.pool.Exec(context.Background(), `WITH o AS (INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING merchant_id, event_id, created_at)
INSERT INTO outbox_pending SELECT * FROM o`, r.MerchantID, r.EventID, r.MemberID, r.Type, string(r.Payload), r.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
}

func mustRecord(t *testing.T, s seeded, data any, at time.Time) outbox.Record {
	t.Helper()
	rec, err := outbox.NewRecord(s.merchant.ID, s.members[0].ID, "referral.created", data, at)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestOutboxSweepRelaysStranded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 1)[0]
	rec := mustRecord(t, s, map[string]string{"id": "x"}, time.Now().Add(-time.Minute))
	fresh := mustRecord(t, s, map[string]string{"id": "y"}, time.Now())
	plantOutbox(t, s, rec, fresh)
	pub := &recordingPublisher{}
	relay := outbox.NewRelay(postgres.NewOutboxStore(s.pool), pub)
	n, err := relay.Sweep(ctx, time.Now(), 30*time.Second, 100)
	if err != nil || n != 1 || len(pub.got) != 1 || pub.got[0].EventID != rec.EventID {
		t.Fatalf("Sweep = %d, %v, published %d; want only the stranded record", n, err, len(pub.got))
	}
	if string(pub.got[0].Payload) != string(rec.Payload) {
		t.Errorf("payload changed: %s != %s", pub.got[0].Payload, rec.Payload)
	}
	var pending bool
	_ = s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM outbox_pending WHERE event_id = $1)`, rec.EventID).Scan(&pending)
	if pending {
		t.Error("stranded record not marked relayed")
	}
	if n, _ := relay.Sweep(ctx, time.Now(), 30*time.Second, 100); n != 0 {
		t.Errorf("second sweep relayed %d, want 0", n)
	}
}

// TestOutboxSetsAsideAnEventTheBrokerRefuses: an event over the writer's
// limit, planted among stranded ones and in a batch the ledger relays at
// once, is set aside with its error while every other event is published
// and marked; the sweep never picks it again.
func TestOutboxSetsAsideAnEventTheBrokerRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 1)[0]
	brokers := testenv.MustBroker(t)
	if err := kafkabus.EnsureTopics(ctx, brokers, topic.Specs(1)...); err != nil {
		t.Fatal(err)
	}
	bus := topic.NewEventBus(kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: brokers, Topic: topic.Events}))
	t.Cleanup(func() { _ = bus.Close() })
	core, logs := observer.New(zap.WarnLevel)
	reg := prometheus.NewRegistry()
	relay := outbox.NewRelay(postgres.NewOutboxStore(s.pool), bus)
	relay.Log, relay.Metrics = zap.New(core), outbox.NewMetrics(reg)

	old := time.Now().Add(-time.Minute)
	huge := map[string]string{"blob": strings.Repeat("x", kafkabus.BatchBytes)}
	stranded := []outbox.Record{mustRecord(t, s, map[string]int{"seq": 0}, old), mustRecord(t, s, huge, old.Add(time.Millisecond)),
		mustRecord(t, s, map[string]int{"seq": 2}, old.Add(2*time.Millisecond)), mustRecord(t, s, map[string]int{"seq": 3}, old.Add(3*time.Millisecond))}
	plantOutbox(t, s, stranded...)

	// Pages of 2: the oversized event is in the first.
	n, err := relay.Sweep(ctx, time.Now(), 30*time.Second, 2)
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3 relayed, nil", n, err)
	}
	wantPublished := []uuid.UUID{stranded[0].EventID, stranded[2].EventID, stranded[3].EventID}
	if got := publishedEvents(t, brokers); !slices.Equal(got, wantPublished) {
		t.Errorf("events on the topic = %v, want %v", got, wantPublished)
	}
	wantSetAside(t, s, stranded[1])
	if n, err := relay.Sweep(ctx, time.Now(), 30*time.Second, 2); err != nil || n != 0 {
		t.Errorf("second Sweep = %d, %v; want 0, nil", n, err)
	}
	if got := publishedEvents(t, brokers); len(got) != 3 {
		t.Errorf("after the second sweep the topic holds %d events, want still 3", len(got))
	}

	// The ledger's relay after a commit: the batch's other event goes at once.
	batch := []outbox.Record{mustRecord(t, s, huge, time.Now()), mustRecord(t, s, map[string]int{"seq": 5}, time.Now())}
	plantOutbox(t, s, batch...)
	if err := relay.Relay(ctx, batch); err != nil {
		t.Fatalf("Relay = %v, want nil: only the oversized event failed", err)
	}
	if got := publishedEvents(t, brokers); len(got) != 4 || got[3] != batch[1].EventID {
		t.Errorf("events on the topic = %v, want the batch's small one last", got)
	}
	wantSetAside(t, s, batch[0])

	if got := counterValue(t, reg, "convida_outbox_set_aside_total", "referral.created"); got != 2 {
		t.Errorf(`convida_outbox_set_aside_total{type="referral.created"} = %v, want 2`, got)
	}
	warned := logs.FilterMessageSnippet("set aside").AllUntimed()
	if len(warned) != 2 || warned[0].ContextMap()["event_id"] != ids.Format(ids.Event, stranded[1].EventID) ||
		warned[0].ContextMap()["merchant"] != s.merchant.ID.String() || warned[0].ContextMap()["type"] != "referral.created" {
		t.Errorf("warnings = %+v, want one per set-aside event naming its id, merchant and type", warned)
	}
}

// wantSetAside checks that rec left the pending queue and that its row
// holds the writer's refusal.
func wantSetAside(t *testing.T, s seeded, rec outbox.Record) {
	t.Helper()
	var pending bool
	var at *time.Time
	var reason *string
	if err := s.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM outbox_pending WHERE merchant_id = $1 AND event_id = $2),
  set_aside_at, set_aside_error FROM outbox WHERE merchant_id = $1 AND event_id = $2`, rec.MerchantID, rec.EventID).Scan(&pending, &at, &reason); err != nil {
		t.Fatal(err)
	}
	if pending || at == nil || reason == nil || !strings.Contains(*reason, "larger than the writer's batch limit") {
		t.Errorf("oversized event: pending %v, set_aside_at %v, set_aside_error %v; want set aside with the size refusal", pending, at, reason)
	}
}

// publishedEvents returns the event ids on the events topic (one
// partition), in order.
func publishedEvents(t *testing.T, brokers []string) []uuid.UUID {
	t.Helper()
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topic.Events, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	end, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatal(err)
	}
	var out []uuid.UUID
	if end == 0 {
		return out
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic.Events, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for int64(len(out)) < end {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		for _, h := range m.Headers {
			if h.Key == topic.HeaderEventID {
				out = append(out, uuid.MustParse(string(h.Value)))
			}
		}
	}
	return out
}

// counterValue reads a counter of reg by its name and its one label value.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
