package e2e

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/testenv"
)

// TestRetentionWhileThePipelineRuns: with the retentions in seconds, the
// scheduler's leader sweeps while sales flow: a sale's delivery record,
// its processed command ids and its events go, and its buyer's name,
// e-mail and document are cleared, a few seconds later; the referral, the
// wallet and the ledger stay whole, and the API and the dashboard still
// show the referral. The delivery log is kept an hour: an attempt dated
// two hours ago goes, the sale's own attempt stays, and retrying it, now
// that its event is gone, is a 409 that says so. A newer sale's records
// are all there. /metrics counts what went.
func TestRetentionWhileThePipelineRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startStack(t, stackOptions{dispatcher: true, scheduler: true, env: webhookEnv(t, map[string]string{
		"RETENTION_INTERVAL": "1s", "RETENTION_INBOUND_DELIVERIES": "8s", "RETENTION_OUTBOX": "8s",
		"RETENTION_PROCESSED_COMMANDS": "8s", "RETENTION_BUYER_DATA": "8s", "RETENTION_AUDIT_EVENTS": "8s",
		"RETENTION_WEBHOOK_ATTEMPTS": "1h"})})
	rc := newReceiver(t, nil)
	tn := s.newTenant(campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: 500, WarrantyDays: 30, IsActive: true})
	hookID := s.hook(tn, rc, "referral.created")
	m := s.newMember(tn, "bia@example.com", "Bia Lima")
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "ret-1", m.CouponCode, 100, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: 500, pending: 500})
	of := func(query string) int { return s.count(query, tn.merchant.ID) }
	testenv.Eventually(t, 10*time.Second, "the sale's delivery record and webhook attempt", func() bool {
		return of(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1`) == 1 &&
			of(`SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1`) == 1
	})
	var referralID, endpointID, attemptID uuid.UUID
	if err := s.deps.Pool.QueryRow(ctx, `SELECT r.id, a.webhook_id, a.id FROM referrals r, webhook_attempts a
WHERE r.merchant_id = $1 AND a.merchant_id = $1`, tn.merchant.ID).Scan(&referralID, &endpointID, &attemptID); err != nil {
		t.Fatal(err)
	}
	// An attempt of two hours ago, past the log's retention.
	if _, err := s.deps.Pool.Exec(ctx, `INSERT INTO webhook_attempts (merchant_id, id, webhook_id, event_id, event_type,
  status, attempt, created_at) VALUES ($1, gen_random_uuid(), $2, gen_random_uuid(), 'referral.created', 'success', 1,
  $3)`, tn.merchant.ID, endpointID, s.clock.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, 30*time.Second, "the sale's records past their retention swept", func() bool {
		return of(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1`) == 0 &&
			of(`SELECT count(*) FROM processed_commands WHERE merchant_id = $1`) == 0 &&
			of(`SELECT count(*) FROM outbox WHERE merchant_id = $1`) == 0 &&
			of(`SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1`) == 1 &&
			of(`SELECT count(*) FROM referrals WHERE merchant_id = $1
  AND referee_name || referee_email || referee_external_id = ''`) == 1
	})
	if got := s.balance(tn, m.Email); got != (wallet{totalEarned: 500, pending: 500}) {
		t.Errorf("balance after the sweep = %+v, want the credit of the sale", got)
	}
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}

	// The referral still shows, without its buyer.
	status, body := s.api(tn, http.MethodGet, "/referrals/"+ids.Format(ids.Referral, referralID), nil)
	data, _ := body["data"].(map[string]any)
	if status != http.StatusOK || data["referee_email"] != "" || data["referee_name"] != "" || data["referee_external_id"] != "" ||
		data["order_value"] != float64(10000) || data["reward_amount"] != float64(500) || data["status"] != "pending" {
		t.Errorf("GET the swept referral = %d %v, want it whole without its buyer", status, body)
	}
	email, password := dashboardUser(t, s.deps.Pool, tn.merchant.ID, merchant.RoleOwner)
	page := "/dashboard/referrals/" + ids.Format(ids.Referral, referralID)
	if status, html := signedIn(t, s.apiURL, email, password).do(http.MethodGet, page, nil); status != http.StatusOK ||
		!strings.Contains(html, "ret-1") || strings.Contains(html, "ana.souza@example.com") {
		t.Errorf("dashboard %s = %d, want the order without its buyer:\n%s", page, status, html)
	}

	// Its attempt stays in the log; its event is gone, so a retry is refused.
	res := do(t, http.MethodPost, s.apiURL+"/v1/webhooks/"+hookID+"/logs/"+ids.Format(ids.DeliveryLog, attemptID)+"/retry", nil,
		map[string]string{"X-API-Key": tn.apiKey})
	if res.Status != http.StatusConflict || !strings.Contains(string(res.Body), `"invalid_state"`) ||
		!strings.Contains(string(res.Body), "no longer kept") {
		t.Errorf("retry of an attempt whose event was swept = %d %s, want 409 invalid_state, no longer kept", res.Status, res.Body)
	}

	// A newer sale's records are all there.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "ret-2", m.CouponCode, 100, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1000, pending: 1000})
	testenv.Eventually(t, 3*time.Second, "the newer sale's delivery record", func() bool {
		return of(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1`) == 1
	})
	if n := of(`SELECT count(*) FROM referrals WHERE merchant_id = $1 AND referee_email = 'ana.souza@example.com'
  AND referee_name = 'Ana Souza' AND referee_external_id = '52998224725'`); n != 1 {
		t.Errorf("referrals with their buyer after the newer sale: %d, want the newer one", n)
	}
	if n := of(`SELECT count(*) FROM processed_commands WHERE merchant_id = $1`); n == 0 {
		t.Error("the newer sale's command id is already forgotten")
	}

	metrics := scrape(t, s.opsURL+"/metrics")
	for _, table := range []string{"inbound_deliveries", "processed_commands", "outbox", "webhook_attempts", "referrals_buyer_data"} {
		if n := metricSample(metrics, `convida_retention_deleted_total{table="`+table+`"}`); n < 1 {
			t.Errorf("convida_retention_deleted_total{table=%q} = %v, want what went counted", table, n)
		}
	}
	if at := metricSample(metrics, "convida_retention_last_success_timestamp_seconds"); at < float64(s.clock.Now().Add(-time.Minute).Unix()) {
		t.Errorf("convida_retention_last_success_timestamp_seconds = %v, want a sweep within the minute", at)
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// metricSample returns the value of the sample named series (with its
// labels, as the exposition writes them), or -1 when absent.
func metricSample(metrics, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}
