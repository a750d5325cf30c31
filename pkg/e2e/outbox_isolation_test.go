package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/testenv"
)

// TestOversizedEventBlocksNoOne: merchant A has an event the broker can
// never take (planted by SQL past the API's bounds, stranded for longer
// than the sweep's grace). Merchant B's endpoint fails every event's first
// attempt; B's member.created, referral.created and wallet.credited still
// get their first attempt and their retry within seconds, while A's event
// is set aside with its error and counted.
func TestOversizedEventBlocksNoOne(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{dispatcher: true, scheduler: true, env: webhookEnv(t, nil)})
	ctx := context.Background()
	a := s.newTenant(testenv.FixedCampaign(500, 7))
	b := s.newTenant(testenv.FixedCampaign(500, 7))

	huge, err := outbox.NewRecord(a.merchant.ID, uuid.New(), event.MemberUpdated,
		map[string]string{"name": strings.Repeat("x", kafkabus.BatchBytes)}, s.clock.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.deps.Pool.Exec(ctx, `WITH o AS (INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING merchant_id, event_id, created_at)
INSERT INTO outbox_pending SELECT * FROM o`, huge.MerchantID, huge.EventID, huge.MemberID, huge.Type, string(huge.Payload), huge.CreatedAt); err != nil {
		t.Fatal(err)
	}

	// B's receiver refuses the first attempt of each event, by webhook-id.
	var mu sync.Mutex
	attempts := map[string]int{}
	rc := newReceiver(t, func(_ int64, r *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		id := r.Header.Get("webhook-id")
		if attempts[id]++; attempts[id] == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	s.hook(b, rc, event.MemberCreated, event.ReferralCreated, event.WalletCredited)
	start := time.Now()
	status, res := s.api(b, http.MethodPost, "/members", []byte(`{"email":"bia@example.com","name":"Bia Lima"}`))
	if status != http.StatusCreated {
		t.Fatalf("POST /members = %d %v", status, res)
	}
	coupon := res["data"].(map[string]any)["coupon_code"].(string)
	wantStatus(t, s.postGuru(b, guruSale(t, b, "iso-1", coupon, 100, "approved")), 200)

	// Each of B's events: a failed first attempt, then the retry delivered
	// (WEBHOOK_RETRY_SCHEDULE 1s, SCHEDULER_INTERVAL 100ms).
	testenv.Eventually(t, 15*time.Second, "B's three events retried and delivered", func() bool {
		return len(rc.byType()) == 3
	})
	t.Logf("B's events retried and delivered %v after the member's creation", time.Since(start).Round(time.Millisecond))
	for typ, got := range rc.byType() {
		mu.Lock()
		n := attempts[got.id]
		mu.Unlock()
		if n != 2 || !got.validSigs {
			t.Errorf("%s %s: %d attempts (valid signatures %v), want the failed first and the delivered retry", typ, got.id, n, got.validSigs)
		}
	}

	// A's event is set aside, out of the pending queue, with its error.
	var pending bool
	var reason *string
	if err := s.deps.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM outbox_pending WHERE event_id = $1), set_aside_error
FROM outbox WHERE merchant_id = $2 AND event_id = $1 AND set_aside_at IS NOT NULL`, huge.EventID, huge.MerchantID).Scan(&pending, &reason); err != nil {
		t.Fatalf("A's oversized event is not set aside: %v", err)
	}
	if pending || reason == nil || !strings.Contains(*reason, "larger than the writer's batch limit") {
		t.Errorf("A's event: pending %v, set_aside_error %v; want off the queue with the size refusal", pending, reason)
	}
	if got := s.setAsideCount(event.MemberUpdated); got != 1 {
		t.Errorf(`convida_outbox_set_aside_total{type="member.updated"} = %v, want 1`, got)
	}
}

// setAsideCount reads convida_outbox_set_aside_total for an event type
// from the stack's registry, as /metrics serves it.
func (s *stack) setAsideCount(typ string) float64 {
	s.t.Helper()
	families, err := s.deps.Registry.Gather()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "convida_outbox_set_aside_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "type" && l.GetValue() == typ {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
