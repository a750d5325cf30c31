package e2e

import (
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/webhook"
)

// TestWebhookRefusesPrivateAddresses: without WEBHOOK_ALLOW_PRIVATE_NETWORKS
// an endpoint URL naming a loopback, private or metadata address, or
// localhost, is refused at registration (400 validation_error naming url,
// issue 29), and http:// too. An endpoint stored before that check (or a
// public name that resolves to such an address) is refused when dialled,
// and a name that does not resolve fails with the very same sentence: the
// test-send answer and the log name neither the host nor the reason.
func TestWebhookRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true})
	rc := newReceiver(t, nil)
	tn := s.newTenant(campaign.Campaign{Name: "A", RewardType: campaign.RewardFixed, RewardValue: 1, WarrantyDays: 1, IsActive: true})
	auth := map[string]string{"X-API-Key": tn.apiKey}
	private := []string{rc.srv.URL, "https://127.0.0.1/x", "https://localhost/x", "https://10.0.0.1/hooks", "https://169.254.169.254/latest",
		"https://[::1]:9/hooks", "https://localhost" + rc.srv.URL[strings.LastIndex(rc.srv.URL, ":"):]}
	for _, url := range private {
		res := do(t, http.MethodPost, s.apiURL+"/v1/webhooks", []byte(`{"url":"`+url+`","events":["member.created"]}`), auth)
		if msg := fmt.Sprint(res.json(t)["error"]); res.Status != http.StatusBadRequest || !strings.Contains(msg, "validation_error") ||
			!strings.Contains(msg, "url: the address is not public") {
			t.Errorf("create %s = %d %s, want 400 validation_error naming url", url, res.Status, res.Body)
		}
	}

	// Stored as before the check; and a name that does not resolve
	// (.invalid never does), which registration accepts.
	store := postgres.NewWebhookStore(s.deps.Pool, s.deps.Box)
	var ids []string
	for _, url := range private {
		ep := &webhook.Endpoint{MerchantID: tn.merchant.ID, URL: url, Events: []string{"member.created"}, IsActive: true, Secret: webhook.NewSecret()}
		if err := store.CreateWebhook(context.Background(), ep); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ep.View(false).ID)
	}
	const unresolvable = "https://no-such-host.invalid/hooks"
	res := do(t, http.MethodPost, s.apiURL+"/v1/webhooks", []byte(`{"url":"`+unresolvable+`","events":["member.created"]}`), auth)
	if res.Status != http.StatusCreated {
		t.Fatalf("create %s = %d %s", unresolvable, res.Status, res.Body)
	}
	ids = append(ids, res.json(t)["data"].(map[string]any)["id"].(string))
	urls := append(private, unresolvable)
	for i, id := range ids {
		start := time.Now()
		res = do(t, http.MethodPost, s.apiURL+"/v1/webhooks/"+id+"/test", nil, auth)
		data, _ := res.json(t)["data"].(map[string]any)
		if res.Status != 200 || data["status"] != "failed" || fmt.Sprint(data["error"]) != webhook.NoPublicAddress {
			t.Errorf("test %s = %d %s: want a failed attempt with %q", urls[i], res.Status, res.Body, webhook.NoPublicAddress)
		}
		if u, _ := neturl.Parse(urls[i]); strings.Contains(string(res.Body), u.Hostname()) {
			t.Errorf("test %s = %s: the answer names the host", urls[i], res.Body)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("test %s took %v: the refusal must come before any connection attempt", urls[i], time.Since(start))
		}
	}
	if n := rc.calls.Load(); n != 0 {
		t.Errorf("the loopback receiver got %d requests, want 0", n)
	}
	res = do(t, http.MethodPost, s.apiURL+"/v1/webhooks", []byte(`{"url":"http://example.com/hooks","events":["member.created"]}`), auth)
	if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "validation_error") {
		t.Errorf("create http:// = %d %s, want 400 validation_error", res.Status, res.Body)
	}
}
