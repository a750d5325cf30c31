package httpapi_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

var (
	reWebhookID   = regexp.MustCompile(`^wh_[0-9a-f]{32}$`)
	reLogID       = regexp.MustCompile(`^whl_[0-9a-f]{32}$`)
	reEventID     = regexp.MustCompile(`^evt_[0-9a-f]{32}$`)
	reFullSecret  = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)
	reMaskSecret  = regexp.MustCompile(`^whsec_\*{4}[A-Za-z0-9+/=]{4}$`)
	endpointKeys  = []string{"id", "url", "events", "is_active", "secret", "disabled_reason", "created_at", "updated_at"}
	logRecordKeys = []string{"id", "webhook_id", "event_id", "event_type", "status", "attempt", "response_status",
		"response_body", "error", "duration_ms", "next_retry_at", "created_at"}
)

// hookReceiver is a merchant's HTTPS webhook receiver: it verifies
// X-Service-Signature with the secret the test gives it, answers the
// status the test sets, and keeps what it hookDelivery.
type hookReceiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	secret string
	status int
	got    []hookDelivery
}

type hookDelivery struct {
	header http.Header
	body   []byte
}

func mustHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{status: http.StatusOK}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got = append(rc.got, hookDelivery{header: r.Header.Clone(), body: body})
		if !webhook.VerifyServiceSignature(rc.secret, body, r.Header.Get(webhook.HeaderServiceSignature)) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, "bad signature")
			return
		}
		w.WriteHeader(rc.status)
		_, _ = io.WriteString(w, "answer "+fmt.Sprint(rc.status))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *hookReceiver) set(secret string, status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secret, rc.status = secret, status
}

// last returns the last delivery hookDelivery.
func (rc *hookReceiver) last(t *testing.T) hookDelivery {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) == 0 {
		t.Fatal("the receiver got nothing")
	}
	return rc.got[len(rc.got)-1]
}

func (rc *hookReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// hookEnv is the API wired as program.APIRouter wires it, with the
// webhook store, a Client trusting the receiver's certificate and allowed
// to reach loopback, Redis-backed protection, and a client that validates
// every answer against the OpenAPI document.
type hookEnv struct {
	*apiEnv
	store    *postgres.WebhookStore
	receiver *hookReceiver
	v        *openapitest.Validator
}

func mustHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	rc := mustHookReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	rdb := testenv.MustRedis(t)
	v := openapitest.New(t)
	var store *postgres.WebhookStore
	env := mustEnvWith(t, envOptions{
		wire: func(pool *pgxpool.Pool, box *secretbox.Box) httpapi.Config {
			store = postgres.NewWebhookStore(pool, box)
			return httpapi.Config{
				Webhooks:      store,
				DeliveryLog:   store,
				EventPayloads: store,
				WebhookSender: webhook.NewClient(webhook.ClientConfig{AllowPrivateNetworks: true, RootCAs: roots}),
				Protection: httpapi.ProtectionConfig{
					Limiter: redisx.NewLimiter(rdb, nil), Idempotency: redisx.NewIdempotency(rdb, nil),
				},
			}
		},
		client: v.Client,
	})
	return &hookEnv{apiEnv: env, store: store, receiver: rc, v: v}
}

// plain returns the environment with a client that does not validate, for
// answers the document cannot describe (405 on an undocumented method).
func (e *hookEnv) plain() *apiEnv {
	cp := *e.apiEnv
	cp.client = http.DefaultClient
	return &cp
}

// mustWebhook creates an endpoint pointing at the receiver and returns its
// id and full secret.
func (e *hookEnv) mustWebhook(t *testing.T, tn *tenant, events ...string) (id, secret string) {
	t.Helper()
	if len(events) == 0 {
		events = []string{"referral.approved"}
	}
	r := tn.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": e.receiver.srv.URL + "/hook", "events": events})
	wantStatus(t, r, http.StatusCreated)
	return str(t, r, "data.id"), str(t, r, "data.secret")
}

// wantNoSecret fails when the full secret appears anywhere in the answer.
func wantNoSecret(t *testing.T, r reply, secret string) {
	t.Helper()
	if bytes.Contains(r.raw, []byte(secret)) || bytes.Contains(r.raw, []byte(strings.TrimPrefix(secret, webhook.SecretPrefix))) {
		t.Errorf("the full secret appears in %s", r)
	}
}

func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	url := "https://erp.loja.example.com/webhooks/convida?src=convida"

	// Create: the full secret, once; duplicates kept once; active by default.
	r := tn.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": url,
		"events": []string{"referral.approved", "wallet.credited", "referral.approved"}, "ignored": 1})
	wantStatus(t, r, http.StatusCreated)
	wantKeys(t, r, "", "data")
	wantKeys(t, r, "data", endpointKeys...)
	wantFields(t, r, map[string]any{"data.id": reWebhookID, "data.url": url, "data.is_active": true,
		"data.secret": reFullSecret, "data.disabled_reason": nil, "data.created_at": reTimestamp, "data.updated_at": reTimestamp,
		"data.events.0": "referral.approved", "data.events.1": "wallet.credited"})
	wantLen(t, r, "data.events", 2)
	id, secret := str(t, r, "data.id"), str(t, r, "data.secret")
	masked := webhook.MaskSecret(secret)

	// Inactive at creation when asked; https in any case.
	r = tn.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "HTTPS://b.example.com/x", "events": []string{"member.created"}, "is_active": false})
	wantStatus(t, r, http.StatusCreated)
	wantFields(t, r, map[string]any{"data.is_active": false, "data.url": "https://b.example.com/x"})
	second, secondSecret := str(t, r, "data.id"), str(t, r, "data.secret")
	if secondSecret == secret {
		t.Error("two endpoints got the same secret")
	}

	// Reads mask the secret.
	r = tn.get(t, "/v1/webhooks")
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data")
	wantLen(t, r, "data", 2)
	wantFields(t, r, map[string]any{"data.0.id": second, "data.1.id": id, "data.1.secret": masked, "data.0.secret": reMaskSecret})
	wantNoSecret(t, r, secret)
	wantNoSecret(t, r, secondSecret)
	for _, path := range []string{"/v1/webhooks/" + id, "/v1/webhooks/" + uuidOf(t, id)} {
		r = tn.get(t, path)
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r, "data", endpointKeys...)
		wantFields(t, r, map[string]any{"data.id": id, "data.secret": masked, "data.url": url})
		wantNoSecret(t, r, secret)
	}

	// PATCH changes only what is present; null is absent.
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"url": "https://new.example.com/h"})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.url": "https://new.example.com/h", "data.events.0": "referral.approved",
		"data.is_active": true, "data.secret": masked})
	wantNoSecret(t, r, secret)
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"events": []string{"member.updated"}, "url": nil, "is_active": nil})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.url": "https://new.example.com/h", "data.events.0": "member.updated", "data.is_active": true})
	wantLen(t, r, "data.events", 1)
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"is_active": false})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.is_active": false, "data.events.0": "member.updated", "data.disabled_reason": nil})
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.is_active": false, "data.url": "https://new.example.com/h"})
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, nil)
	wantStatus(t, r, http.StatusOK)
	r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"secret": "whsec_mine"})
	wantError(t, r, http.StatusBadRequest, "validation_error", "rotate-secret")

	// Another merchant sees none of it.
	other := env.mustTenant(t)
	r = other.get(t, "/v1/webhooks")
	wantStatus(t, r, http.StatusOK)
	wantLen(t, r, "data", 0)
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/v1/webhooks/" + id, nil},
		{http.MethodPatch, "/v1/webhooks/" + id, map[string]any{"is_active": true}},
		{http.MethodDelete, "/v1/webhooks/" + id, nil},
		{http.MethodGet, "/v1/webhooks/" + id + "/logs", nil},
		{http.MethodPost, "/v1/webhooks/" + id + "/rotate-secret", nil},
		{http.MethodPost, "/v1/webhooks/" + id + "/test", nil},
	} {
		wantError(t, other.do(t, req.method, req.path, req.body), http.StatusNotFound, "not_found", "")
	}
	for _, bad := range []string{"wh_" + strings.Repeat("0", 32), "nonsense", "mem_" + strings.Repeat("a", 32), "wh_zz"} {
		wantError(t, tn.get(t, "/v1/webhooks/"+bad), http.StatusNotFound, "not_found", "")
		wantError(t, tn.do(t, http.MethodPatch, "/v1/webhooks/"+bad, map[string]any{}), http.StatusNotFound, "not_found", "")
		wantError(t, tn.do(t, http.MethodDelete, "/v1/webhooks/"+bad, nil), http.StatusNotFound, "not_found", "")
	}

	// Delete: 204 without a body; then gone.
	r = tn.do(t, http.MethodDelete, "/v1/webhooks/"+id, nil)
	wantStatus(t, r, http.StatusNoContent)
	if len(r.raw) != 0 {
		t.Errorf("204 with a body: %q", r.raw)
	}
	wantError(t, tn.get(t, "/v1/webhooks/"+id), http.StatusNotFound, "not_found", "")
	wantError(t, tn.do(t, http.MethodDelete, "/v1/webhooks/"+id, nil), http.StatusNotFound, "not_found", "")
	r = tn.get(t, "/v1/webhooks")
	wantLen(t, r, "data", 1)

	env.v.WantExercised(t,
		ex("createWebhook", 201), ex("listWebhooks", 200), ex("getWebhook", 200), ex("getWebhook", 404),
		ex("updateWebhook", 200), ex("updateWebhook", 400), ex("updateWebhook", 404),
		ex("deleteWebhook", 204), ex("deleteWebhook", 404), ex("listWebhookLogs", 404),
		ex("rotateWebhookSecret", 404), ex("testWebhook", 404))
}

// uuidOf returns the bare UUID of a prefixed webhook id.
func uuidOf(t *testing.T, prefixed string) string {
	t.Helper()
	id, ok := ids.Parse(ids.Webhook, prefixed)
	if !ok {
		t.Fatalf("%q does not parse", prefixed)
	}
	return id.String()
}

func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	id, _ := env.mustWebhook(t, tn)
	ok := []string{"member.created"}
	long := "https://example.com/" + strings.Repeat("a", 2048)
	tests := []struct {
		name     string
		method   string
		body     any
		mentions string
	}{
		{"no url", http.MethodPost, map[string]any{"events": ok}, "url"},
		{"null url", http.MethodPost, map[string]any{"url": nil, "events": ok}, "url"},
		{"http url", http.MethodPost, map[string]any{"url": "http://example.com/hook", "events": ok}, "url"},
		{"ftp url", http.MethodPost, map[string]any{"url": "ftp://example.com/hook", "events": ok}, "url"},
		{"relative url", http.MethodPost, map[string]any{"url": "/hook", "events": ok}, "url"},
		{"no host", http.MethodPost, map[string]any{"url": "https:///hook", "events": ok}, "url"},
		{"opaque", http.MethodPost, map[string]any{"url": "https:example.com", "events": ok}, "url"},
		{"unparsable", http.MethodPost, map[string]any{"url": "https://exa mple.com/%zz", "events": ok}, "url"},
		{"too long", http.MethodPost, map[string]any{"url": long, "events": ok}, "url"},
		{"url not a string", http.MethodPost, map[string]any{"url": 42, "events": ok}, "url"},
		{"no events", http.MethodPost, map[string]any{"url": "https://example.com"}, "events"},
		{"empty events", http.MethodPost, map[string]any{"url": "https://example.com", "events": []string{}}, "events"},
		{"unknown event", http.MethodPost, map[string]any{"url": "https://example.com", "events": []string{"member.created", "order.paid"}}, "events[1]"},
		{"test event", http.MethodPost, map[string]any{"url": "https://example.com", "events": []string{"webhook.test"}}, "events"},
		{"events a string", http.MethodPost, map[string]any{"url": "https://example.com", "events": "member.created"}, "events"},
		{"events of numbers", http.MethodPost, map[string]any{"url": "https://example.com", "events": []int{1}}, "events"},
		{"is_active a string", http.MethodPost, map[string]any{"url": "https://example.com", "events": ok, "is_active": "yes"}, "is_active"},
		{"secret given", http.MethodPost, map[string]any{"url": "https://example.com", "events": ok, "secret": "whsec_x"}, "secret"},
		{"malformed JSON", http.MethodPost, `{"url": "https://example.com",`, "JSON"},
		{"an array", http.MethodPost, `[1, 2]`, "object"},
		{"NUL in url", http.MethodPost, map[string]any{"url": "https://example.com/\x00", "events": ok}, "url"},
		{"patch http url", http.MethodPatch, map[string]any{"url": "http://example.com"}, "url"},
		{"patch empty url", http.MethodPatch, map[string]any{"url": ""}, "url"},
		{"patch empty events", http.MethodPatch, map[string]any{"events": []string{}}, "events"},
		{"patch unknown event", http.MethodPatch, map[string]any{"events": []string{"nope"}}, "events[0]"},
		{"patch is_active a number", http.MethodPatch, map[string]any{"is_active": 1}, "is_active"},
		{"patch secret null", http.MethodPatch, map[string]any{"secret": nil}, "secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/v1/webhooks"
			if tt.method == http.MethodPatch {
				path += "/" + id
			}
			wantError(t, tn.do(t, tt.method, path, tt.body), http.StatusBadRequest, "validation_error", tt.mentions)
		})
	}
	// Nothing was created or changed.
	r := tn.get(t, "/v1/webhooks")
	wantLen(t, r, "data", 1)
	wantFields(t, r, map[string]any{"data.0.events.0": "referral.approved", "data.0.is_active": true,
		"data.0.url": env.receiver.srv.URL + "/hook"})
	// A query parameter text cannot hold.
	wantError(t, tn.get(t, "/v1/webhooks?x=%00"), http.StatusBadRequest, "validation_error", "x")
	env.v.WantExercised(t, ex("createWebhook", 400), ex("updateWebhook", 400), ex("listWebhooks", 400))
}

func TestWebhookAuthAndMethods(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	id, _ := env.mustWebhook(t, tn)
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/v1/webhooks"}, {http.MethodPost, "/v1/webhooks"},
		{http.MethodGet, "/v1/webhooks/" + id}, {http.MethodPatch, "/v1/webhooks/" + id},
		{http.MethodDelete, "/v1/webhooks/" + id}, {http.MethodGet, "/v1/webhooks/" + id + "/logs"},
		{http.MethodPost, "/v1/webhooks/" + id + "/test"}, {http.MethodPost, "/v1/webhooks/" + id + "/rotate-secret"},
		{http.MethodPost, "/v1/webhooks/" + id + "/logs/whl_" + strings.Repeat("0", 32) + "/retry"},
	} {
		for _, header := range []map[string]string{nil, {"X-API-Key": "not-a-key"}, {"Authorization": "Bearer " + uuid.NewString()}} {
			r := env.call(t, request{method: req.method, path: req.path, header: header})
			wantError(t, r, http.StatusUnauthorized, "unauthorized", "")
		}
	}
	// The bearer form works like X-API-Key.
	r := env.call(t, request{method: http.MethodGet, path: "/v1/webhooks", header: map[string]string{"Authorization": "Bearer " + tn.key}})
	wantStatus(t, r, http.StatusOK)
	wantLen(t, r, "data", 1)
	plain := env.plain()
	// No /api prefix.
	// No /api prefix: the 404 says where the webhooks API lives.
	r = plain.call(t, request{method: http.MethodGet, path: "/api/v1/webhooks", header: map[string]string{"X-API-Key": tn.key}})
	wantError(t, r, http.StatusNotFound, "not_found", "lives at /v1/webhooks")
	r = plain.call(t, request{method: http.MethodGet, path: "/api/v1/webhooks/" + id + "/logs", header: map[string]string{"X-API-Key": tn.key}})
	wantError(t, r, http.StatusNotFound, "not_found", "lives at /v1/webhooks/"+id+"/logs")

	for _, req := range []struct{ method, path string }{
		{http.MethodPut, "/v1/webhooks"}, {http.MethodDelete, "/v1/webhooks"},
		{http.MethodPost, "/v1/webhooks/" + id}, {http.MethodPut, "/v1/webhooks/" + id},
		{http.MethodPost, "/v1/webhooks/" + id + "/logs"}, {http.MethodGet, "/v1/webhooks/" + id + "/test"},
		{http.MethodGet, "/v1/webhooks/" + id + "/rotate-secret"},
	} {
		for _, header := range []map[string]string{nil, {"X-API-Key": tn.key}} {
			r := plain.call(t, request{method: req.method, path: req.path, header: header})
			wantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed", "")
			if r.header.Get("Allow") == "" {
				t.Errorf("%s %s: 405 without Allow", req.method, req.path)
			}
		}
	}
	env.v.WantExercised(t, ex("listWebhooks", 401), ex("createWebhook", 401), ex("getWebhook", 401),
		ex("updateWebhook", 401), ex("deleteWebhook", 401), ex("listWebhookLogs", 401), ex("testWebhook", 401),
		ex("rotateWebhookSecret", 401), ex("retryWebhookLog", 401))
}

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

func TestWebhookRotateSecret(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	id, old := env.mustWebhook(t, tn)

	r := tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/rotate-secret", nil)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "data", endpointKeys...)
	wantFields(t, r, map[string]any{"data.id": id, "data.secret": reFullSecret, "data.is_active": true})
	next := str(t, r, "data.secret")
	if next == old {
		t.Fatal("the rotation kept the secret")
	}
	wantNoSecret(t, r, old)
	r = tn.get(t, "/v1/webhooks/"+id)
	wantFields(t, r, map[string]any{"data.secret": webhook.MaskSecret(next)})
	wantNoSecret(t, r, next)

	// Within the overlap: X-Service-Signature with the new secret,
	// webhook-signature with both.
	env.receiver.set(next, http.StatusOK)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/test", nil)
	wantFields(t, r, map[string]any{"data.status": "success"})
	got := env.receiver.last(t)
	checkHookDelivery(t, got, next, "webhook.test", str(t, r, "data.id"))
	if err := webhook.VerifyStandard(old, got.header, got.body, 0, time.Now()); err != nil {
		t.Errorf("the old secret does not verify during the overlap: %v", err)
	}
	if n := len(strings.Fields(got.header.Get(webhook.HeaderWebhookSignature))); n != 2 {
		t.Errorf("webhook-signature has %d entries, want 2", n)
	}
	// After 24 hours only the new one signs.
	env.clock.Advance(24*time.Hour + time.Second)
	r = tn.do(t, http.MethodPost, "/v1/webhooks/"+id+"/test", nil)
	wantFields(t, r, map[string]any{"data.status": "success"})
	got = env.receiver.last(t)
	if err := webhook.VerifyStandard(old, got.header, got.body, 0, time.Now()); err == nil {
		t.Error("the old secret still signs after the overlap")
	}
	env.v.WantExercised(t, ex("rotateWebhookSecret", 200))
}

// TestWebhookProtection: the webhook routes sit behind the admin chain:
// rate-limit headers, and idempotent replays of POST and PATCH.
func TestWebhookProtection(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	body := map[string]any{"url": "https://example.com/hook", "events": []string{"member.created"}}
	first := tn.send(t, http.MethodPost, "/v1/webhooks", "wh-1", body)
	wantStatus(t, first, http.StatusCreated)
	wantRateHeaders(t, first, httpapi.DefaultBurst)
	again := tn.send(t, http.MethodPost, "/v1/webhooks", "wh-1", body)
	wantReplay(t, first, again)
	r := tn.get(t, "/v1/webhooks")
	wantLen(t, r, "data", 1)
	wantRateHeaders(t, r, httpapi.DefaultBurst)
	r = tn.send(t, http.MethodPost, "/v1/webhooks", "wh-1", map[string]any{"url": "https://other.example.com", "events": []string{"member.created"}})
	wantError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "")

	id := str(t, first, "data.id")
	patch := tn.send(t, http.MethodPatch, "/v1/webhooks/"+id, "wh-2", map[string]any{"is_active": false})
	wantStatus(t, patch, http.StatusOK)
	wantReplay(t, patch, tn.send(t, http.MethodPatch, "/v1/webhooks/"+id, "wh-2", map[string]any{"is_active": false}))
	env.v.WantExercised(t, ex("createWebhook", 422))
}

// unmarshalNumbers decodes as the test client does (numbers as json.Number).
func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
