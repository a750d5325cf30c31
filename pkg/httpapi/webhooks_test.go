package httpapi_test

import (
	"bytes"
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

// mustHookEnv is the webhook API with WEBHOOK_ALLOW_PRIVATE_NETWORKS on,
// as its tests register their receiver on loopback.
func mustHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	return mustHookEnvWith(t, true)
}

// mustHookEnvWith is mustHookEnv with WEBHOOK_ALLOW_PRIVATE_NETWORKS as
// allowPrivate.
func mustHookEnvWith(t *testing.T, allowPrivate bool) *hookEnv {
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
				WebhookSender: webhook.NewClient(webhook.ClientConfig{AllowPrivateNetworks: allowPrivate, RootCAs: roots}),

				WebhookAllowPrivateNetworks: allowPrivate,
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
	wantMaskedReplay(t, first, again, "secret", webhook.MaskSecret(str(t, first, "data.secret")))
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
