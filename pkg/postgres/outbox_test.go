package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
)

type recordingPublisher struct{ got []outbox.Record }

func (p *recordingPublisher) PublishEvents(_ context.Context, recs []outbox.Record) error {
	p.got = append(p.got, recs...)
	return nil
}

func TestOutboxSweepRelaysStranded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 1)[0]
	rec, err := outbox.NewRecord(s.merchant.ID, s.members[0].ID, "referral.created", map[string]string{"id": "x"}, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := outbox.NewRecord(s.merchant.ID, s.members[0].ID, "referral.created", map[string]string{"id": "y"}, time.Now())
	for _, r := range []outbox.Record{rec, fresh} {
		if _, err := s.pool.Exec(ctx, `WITH o AS (INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING merchant_id, event_id, created_at)
INSERT INTO outbox_pending SELECT * FROM o`, r.MerchantID, r.EventID, r.MemberID, r.Type, string(r.Payload), r.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
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
