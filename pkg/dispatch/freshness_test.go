package dispatch_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/dispatch"
	"github.com/convida/convida/pkg/webhook"
)

// TestFanOutSeesEndpointChangesAtOnce: a merchant's endpoints are cached
// (its events keep flowing), yet an endpoint created just before an event
// receives it, and one switched off or unsubscribed just before an event
// does not; no wait for the cache in between.
func TestFanOutSeesEndpointChangesAtOnce(t *testing.T) {
	t.Parallel()
	// Patient holds: each batch returns with its deliveries logged.
	f := newFixture(t, func(int64) int { return http.StatusOK }, dispatch.Config{Hold: 10 * time.Second, MaxHold: 20 * time.Second})
	ctx := context.Background()
	attempts := func(ep *webhook.Endpoint) int {
		t.Helper()
		var n int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND webhook_id = $2`,
			f.merchant, ep.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.handle(t, f.event(t)) // the merchant's endpoints are now cached
	second := &webhook.Endpoint{MerchantID: f.merchant, URL: f.endpoint.URL, Events: []string{"referral.created"},
		IsActive: true, Secret: webhook.NewSecret()}
	if err := f.store.CreateWebhook(ctx, second); err != nil {
		t.Fatal(err)
	}
	f.handle(t, f.event(t))
	if n := attempts(second); n != 1 {
		t.Fatalf("the endpoint created before the event got %d attempts, want 1", n)
	}

	off := false
	if _, err := f.store.UpdateWebhook(ctx, f.merchant, f.endpoint.ID, webhook.Patch{IsActive: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.UpdateWebhook(ctx, f.merchant, second.ID, webhook.Patch{Events: []string{"member.created"}}); err != nil {
		t.Fatal(err)
	}
	f.handle(t, f.event(t), f.event(t))
	time.Sleep(200 * time.Millisecond) // an attempt would be logged by now
	if n := attempts(f.endpoint); n != 2 {
		t.Errorf("the endpoint disabled before the events got %d attempts in all, want the 2 before", n)
	}
	if n := attempts(second); n != 1 {
		t.Errorf("the endpoint unsubscribed before the events got %d attempts in all, want the 1 before", n)
	}
	if n := f.calls.Load(); n != 3 {
		t.Errorf("the receiver got %d requests, want 3", n)
	}
}
