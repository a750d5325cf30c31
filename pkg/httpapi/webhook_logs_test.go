package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/webhook"
)

func TestWebhookLogs(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	id, _ := env.mustWebhook(t, tn)
	otherID, _ := env.mustWebhook(t, tn)
	ctx := context.Background()
	wid, _ := ids.Parse(ids.Webhook, id)
	oid, _ := ids.Parse(ids.Webhook, otherID)

	// 12 attempts a minute apart: every third a success; one more elsewhere.
	var batch []webhook.Attempt
	event := uuid.New()
	for i := range 12 {
		a := webhook.Attempt{MerchantID: tn.merchant.ID, WebhookID: wid, EventID: event, EventType: "referral.approved",
			Status: webhook.StatusFailed, Attempt: i + 1, ResponseStatus: 503, ResponseBody: "busy", Error: "HTTP 503",
			DurationMS: int64(10 + i), NextRetryAt: t0.Add(time.Duration(i)*time.Minute + 5*time.Second),
			CreatedAt: t0.Add(time.Duration(i) * time.Minute)}
		if i%3 == 0 {
			a.Status, a.ResponseStatus, a.Error, a.NextRetryAt = webhook.StatusSuccess, 200, "", time.Time{}
		}
		if i == 1 {
			a.ResponseStatus, a.ResponseBody, a.Error = 0, "", "dial tcp: connection refused"
		}
		batch = append(batch, a)
	}
	batch = append(batch, webhook.Attempt{MerchantID: tn.merchant.ID, WebhookID: oid, EventID: event, EventType: "referral.approved",
		Status: webhook.StatusSuccess, Attempt: 1, ResponseStatus: 200, CreatedAt: t0})
	if err := env.store.RecordAttempts(ctx, batch); err != nil {
		t.Fatal(err)
	}

	r := tn.get(t, "/v1/webhooks/"+id+"/logs")
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data", "pagination")
	wantKeys(t, r, "pagination", "limit", "offset", "total")
	wantLen(t, r, "data", 12)
	wantKeys(t, r, "data.0", logRecordKeys...)
	wantFields(t, r, map[string]any{"pagination.limit": 50, "pagination.offset": 0, "pagination.total": 12,
		"data.0.id": ids.Format(ids.DeliveryLog, batch[11].ID), "data.0.webhook_id": id, "data.0.event_id": reEventID,
		"data.0.event_type": "referral.approved", "data.0.status": "failed", "data.0.attempt": 12,
		"data.0.response_status": 503, "data.0.response_body": "busy", "data.0.error": "HTTP 503", "data.0.duration_ms": 21,
		"data.0.next_retry_at": "2026-11-20T12:11:05.000Z", "data.0.created_at": "2026-11-20T12:11:00.000Z",
		"data.11.status": "success", "data.11.next_retry_at": nil, "data.10.response_status": nil,
		"data.10.error": "dial tcp: connection refused"})

	tests := []struct {
		query        string
		n, total     int
		firstAttempt int
	}{
		{"?limit=5", 5, 12, 12},
		{"?limit=5&offset=10", 2, 12, 2},
		{"?offset=12", 0, 12, 0},
		{"?status=success", 4, 4, 10},
		{"?status=failed&limit=3&offset=1", 3, 8, 11},
		{"?status=success&offset=100", 0, 4, 0},
		{"?limit=100", 12, 12, 12},
	}
	for _, tt := range tests {
		r := tn.get(t, "/v1/webhooks/"+id+"/logs"+tt.query)
		wantStatus(t, r, http.StatusOK)
		wantLen(t, r, "data", tt.n)
		wantFields(t, r, map[string]any{"pagination.total": tt.total})
		if tt.n > 0 {
			wantFields(t, r, map[string]any{"data.0.attempt": tt.firstAttempt})
		}
	}
	for _, tt := range []struct{ query, mentions string }{
		{"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?limit=abc", "limit"}, {"?limit=1.5", "limit"},
		{"?offset=-1", "offset"}, {"?offset=x", "offset"}, {"?offset=99999999999999999999", "offset"},
		{"?status=ok", "status"}, {"?status=SUCCESS", "status"},
	} {
		wantError(t, tn.get(t, "/v1/webhooks/"+id+"/logs"+tt.query), http.StatusBadRequest, "validation_error", tt.mentions)
	}
	// Another endpoint's log is its own.
	r = tn.get(t, "/v1/webhooks/"+otherID+"/logs")
	wantLen(t, r, "data", 1)
	wantFields(t, r, map[string]any{"pagination.total": 1})
	wantError(t, tn.get(t, "/v1/webhooks/wh_"+strings.Repeat("1", 32)+"/logs"), http.StatusNotFound, "not_found", "")
	env.v.WantExercised(t, ex("listWebhookLogs", 200), ex("listWebhookLogs", 400), ex("listWebhookLogs", 404))
}

// checkHookDelivery checks what the receiver got for one attempt.
func checkHookDelivery(t *testing.T, got hookDelivery, secret, eventType, logID string) {
	t.Helper()
	h := got.header
	if !webhook.VerifyServiceSignature(secret, got.body, h.Get(webhook.HeaderServiceSignature)) {
		t.Errorf("X-Service-Signature %q does not verify", h.Get(webhook.HeaderServiceSignature))
	}
	if err := webhook.VerifyStandard(secret, h, got.body, 0, time.Now()); err != nil {
		t.Errorf("webhook-signature: %v", err)
	}
	if h.Get(webhook.HeaderServiceEvent) != eventType || h.Get(webhook.HeaderServiceDelivery) != logID ||
		!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Errorf("headers %v; want event %s, delivery %s", h, eventType, logID)
	}
}

func TestWebhookTestAndRetry(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	id, secret := env.mustWebhook(t, tn, "referral.approved")
	env.receiver.set(secret, http.StatusOK)

	// A test event: sent, verified by the receiver, logged.
	r := tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/test", nil)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "data", logRecordKeys...)
	wantFields(t, r, map[string]any{"data.id": reLogID, "data.webhook_id": id, "data.event_id": reEventID,
		"data.event_type": "webhook.test", "data.status": "success", "data.attempt": 1, "data.response_status": 200,
		"data.response_body": "answer 200", "data.error": "", "data.next_retry_at": nil, "data.created_at": "2026-11-20T12:00:00.000Z"})
	testLog, testEvent := str(t, r, "data.id"), str(t, r, "data.event_id")
	got := env.receiver.last(t)
	checkHookDelivery(t, got, secret, "webhook.test", testLog)
	var env1 map[string]any
	if err := unmarshalNumbers(got.body, &env1); err != nil {
		t.Fatalf("the test event is not JSON: %s", got.body)
	}
	wantFields(t, reply{json: env1, raw: got.body}, map[string]any{"id": testEvent, "type": "webhook.test",
		"created_at": "2026-11-20T12:00:00.000Z", "merchant_id": tn.merchant.ID.String(), "data.webhook_id": id,
		"data.message": reNonEmpty})
	wantKeys(t, reply{json: env1, raw: got.body}, "", "id", "type", "created_at", "merchant_id", "data")
	if got.header.Get(webhook.HeaderWebhookID) != testEvent {
		t.Errorf("webhook-id = %q, want %s", got.header.Get(webhook.HeaderWebhookID), testEvent)
	}

	// A failing receiver: the attempt is logged as failed, still 200.
	env.clock.Advance(time.Minute)
	env.receiver.set(secret, http.StatusInternalServerError)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/test", map[string]any{})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.status": "failed", "data.response_status": 500, "data.error": reNonEmpty,
		"data.response_body": "answer 500"})
	failedTest := str(t, r, "data.id")

	// Retry of a test record: a fresh test event.
	env.clock.Advance(time.Minute)
	env.receiver.set(secret, http.StatusOK)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+failedTest+"/retry", nil)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.event_type": "webhook.test", "data.status": "success", "data.attempt": 1})
	if ev := str(t, r, "data.event_id"); ev == testEvent {
		t.Error("the retry of a test record reused an event id")
	}
	checkHookDelivery(t, env.receiver.last(t), secret, "webhook.test", str(t, r, "data.id"))

	// Retry of a real event: the stored bytes, as the next attempt.
	ctx := context.Background()
	tn.mustCampaign(t, campaignBody)
	m := tn.mustMember(t, "ana@example.com", "Ana Souza")
	eventID := uuid.New()
	payload := `{"id":"` + ids.Format(ids.Event, eventID) + `","type":"referral.approved","created_at":"2026-11-20T11:00:00.000Z","merchant_id":"` +
		tn.merchant.ID.String() + `","data":{"id":"ref_x",  "b":1}}`
	if _, err := env.pool.Exec(ctx, `INSERT INTO outbox (merchant_id, event_id, member_id, type, payload) VALUES ($1, $2, $3, $4, $5)`,
		tn.merchant.ID, eventID, m.id, "referral.approved", payload); err != nil {
		t.Fatal(err)
	}
	wid, _ := ids.Parse(ids.Webhook, id)
	logged := []webhook.Attempt{
		{MerchantID: tn.merchant.ID, WebhookID: wid, EventID: eventID, EventType: "referral.approved", Status: webhook.StatusFailed,
			Attempt: 1, Error: "dial tcp: refused", CreatedAt: t0.Add(-time.Hour)},
		{MerchantID: tn.merchant.ID, WebhookID: wid, EventID: eventID, EventType: "referral.approved", Status: webhook.StatusFailed,
			Attempt: 2, ResponseStatus: 502, CreatedAt: t0.Add(-30 * time.Minute)},
	}
	if err := env.store.RecordAttempts(ctx, logged); err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(time.Minute)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+ids.Format(ids.DeliveryLog, logged[0].ID)+"/retry", nil)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.event_id": ids.Format(ids.Event, eventID), "data.event_type": "referral.approved",
		"data.status": "success", "data.attempt": 3, "data.created_at": "2026-11-20T12:03:00.000Z"})
	got = env.receiver.last(t)
	if string(got.body) != payload {
		t.Errorf("the retry sent %s, want the stored bytes %s", got.body, payload)
	}
	checkHookDelivery(t, got, secret, "referral.approved", str(t, r, "data.id"))
	if got.header.Get(webhook.HeaderWebhookID) != ids.Format(ids.Event, eventID) {
		t.Errorf("webhook-id = %q, want the event's id", got.header.Get(webhook.HeaderWebhookID))
	}
	// The bare UUID of the record works too.
	env.clock.Advance(time.Minute)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+logged[1].ID.String()+"/retry", nil)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.attempt": 4})

	// Everything is in the log, newest first.
	r = tn.get(t, "/v1/webhooks/"+id+"/logs")
	wantFields(t, r, map[string]any{"pagination.total": 7, "data.0.attempt": 4, "data.0.event_id": ids.Format(ids.Event, eventID)})

	// Unknown, malformed and foreign records are 404.
	otherID, _ := env.mustWebhook(t, tn)
	for _, logID := range []string{"whl_" + strings.Repeat("0", 32), "nonsense", testLog[:10]} {
		r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+logID+"/retry", nil)
		wantError(t, r, http.StatusNotFound, "not_found", "")
	}
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+otherID+"/logs/"+testLog+"/retry", nil)
	wantError(t, r, http.StatusNotFound, "not_found", "")
	other := env.mustTenant(t)
	r = other.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+testLog+"/retry", nil)
	wantError(t, r, http.StatusNotFound, "not_found", "")

	// An event no longer kept cannot be sent again.
	if _, err := env.pool.Exec(ctx, `DELETE FROM outbox WHERE event_id = $1`, eventID); err != nil {
		t.Fatal(err)
	}
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+ids.Format(ids.DeliveryLog, logged[0].ID)+"/retry", nil)
	wantError(t, r, http.StatusConflict, "invalid_state", "no longer kept")

	// An inactive endpoint receives nothing.
	wantStatus(t, tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"is_active": false}), http.StatusOK)
	before := env.receiver.count()
	wantError(t, tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/test", nil), http.StatusConflict, "invalid_state", "inactive")
	wantError(t, tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/logs/"+testLog+"/retry", nil), http.StatusConflict, "invalid_state", "inactive")
	if env.receiver.count() != before {
		t.Error("an inactive endpoint hookDelivery a delivery")
	}

	// A 410 disables the endpoint at once.
	wantStatus(t, tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"is_active": true}), http.StatusOK)
	env.receiver.set(secret, http.StatusGone)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/test", nil)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.status": "failed", "data.response_status": 410})
	r = tn.get(t, "/v1/webhooks/"+id)
	wantFields(t, r, map[string]any{"data.is_active": false, "data.disabled_reason": webhook.DisabledGone})
	// Re-enabling clears the reason.
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"is_active": true})
	wantFields(t, r, map[string]any{"data.is_active": true, "data.disabled_reason": nil})

	// An endpoint that cannot be reached: a failed attempt with no status.
	r = tn.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://127.0.0.1:1/hook", "events": []string{"member.created"}})
	wantStatus(t, r, http.StatusCreated)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+str(t, r, "data.id")+"/test", nil)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.status": "failed", "data.response_status": nil, "data.error": reNonEmpty})

	env.v.WantExercised(t, ex("testWebhook", 200), ex("testWebhook", 409), ex("retryWebhookLog", 200),
		ex("retryWebhookLog", 404), ex("retryWebhookLog", 409))
}
