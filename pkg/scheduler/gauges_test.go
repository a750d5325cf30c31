package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/scheduler"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

// TestGaugesFollowTheBacklog: events stranded in the outbox show as
// pending, with the oldest one's age, and the sweep of the next tick takes
// them to zero; a failing endpoint and one the dispatcher switched off are
// counted, and the count falls when the endpoint recovers. An event still
// within the grace, and an endpoint its merchant switched off, are not
// counted.
func TestGaugesFollowTheBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	now := time.Now()
	for _, written := range []time.Time{now.Add(-2 * time.Minute), now.Add(-time.Minute), now.Add(-time.Second)} {
		strandEvent(t, pool, written)
	}
	box := testenv.MustBox(t)
	m := testenv.MustMerchant(t, pool, box, merchant.Merchant{})
	hooks := postgres.NewWebhookStore(pool, box)
	endpoint := func(active bool) uuid.UUID {
		e := &webhook.Endpoint{MerchantID: m.ID, URL: "https://example.com/hook", Events: []string{"referral.created"},
			IsActive: active, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
		if err := hooks.CreateWebhook(ctx, e); err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	endpoint(true) // healthy
	failing := endpoint(true)
	if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1`, failing, now.Add(-3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := hooks.DisableWebhook(ctx, m.ID, endpoint(true), "the endpoint answered 410 Gone"); err != nil {
		t.Fatal(err)
	}
	endpoint(false) // switched off by its merchant: no alert

	reg := prometheus.NewRegistry()
	g := scheduler.NewGauges(reg, postgres.NewBacklogStore(pool))
	if g2 := scheduler.NewGauges(reg, postgres.NewBacklogStore(pool)); g2 == nil {
		t.Fatal("a second registration on the same registry failed")
	}
	if err := g.Update(ctx, now); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"convida_outbox_pending":                           2,
		"convida_outbox_oldest_pending_age_seconds":        120,
		"convida_webhook_endpoints_failing":                1,
		"convida_webhook_endpoints_disabled":               1,
		"convida_webhook_endpoint_longest_failure_seconds": 3 * 3600,
	}
	checkGauges(t, reg, want)

	// The broker is back: the leader's next tick sweeps the stranded
	// events, then its task finds nothing waiting.
	brokers := testenv.MustBroker(t)
	if err := kafkabus.EnsureTopics(ctx, brokers, topic.Specs(1)...); err != nil {
		t.Fatal(err)
	}
	events := topic.NewEventBus(kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: brokers, Topic: topic.Events}))
	t.Cleanup(func() { _ = events.Close() })
	leader := postgres.NewAdvisoryLeader(pool, 0x6761_7567)
	t.Cleanup(func() { leader.Release(context.Background()) })
	s := &scheduler.Scheduler{Store: postgres.NewSchedulerStore(pool), Leader: leader, Publisher: noCommands{},
		Outbox: outbox.NewRelay(postgres.NewOutboxStore(pool), events), Log: zap.NewNop(),
		Now: func() time.Time { return now.Add(time.Minute) }, Tasks: []scheduler.Task{g.Update}}
	if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1`, failing); err != nil {
		t.Fatal(err)
	}
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	want["convida_outbox_pending"], want["convida_outbox_oldest_pending_age_seconds"] = 0, 0
	want["convida_webhook_endpoints_failing"], want["convida_webhook_endpoint_longest_failure_seconds"] = 0, 0
	checkGauges(t, reg, want)
}

// strandEvent writes an outbox event as a writer whose relay never ran
// leaves it: in the outbox and still on the pending queue.
func strandEvent(t *testing.T, pool *pgxpool.Pool, written time.Time) {
	t.Helper()
	rec, err := outbox.NewRecord(uuid.New(), uuid.New(), "referral.created", map[string]int{"seq": 1}, written)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `WITH o AS (INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING merchant_id, event_id, created_at)
INSERT INTO outbox_pending SELECT * FROM o`, rec.MerchantID, rec.EventID, rec.MemberID, rec.Type, string(rec.Payload), rec.CreatedAt); err != nil {
		t.Fatal(err)
	}
}

// checkGauges compares the gauges of reg with want: counts exactly, ages
// to the second.
func checkGauges(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			got[f.GetName()] = m.GetGauge().GetValue()
		}
	}
	for name, w := range want {
		g, ok := got[name]
		slack := 0.0
		if strings.HasSuffix(name, "_seconds") {
			slack = 1
		}
		if !ok {
			t.Errorf("%s is not exported", name)
		} else if g < w-slack || g > w+slack {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
}
