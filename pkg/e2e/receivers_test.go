package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/webhook"
)

// receiver is a merchant's HTTPS webhook endpoint played by the test. It
// checks both signatures of every request and keeps what it received.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret atomic.Value // string: the endpoint's secret, known after creation
	answer func(n int64, r *http.Request) int
	calls  atomic.Int64

	mu  sync.Mutex
	got []received
}

type received struct {
	id, typ    string
	delivery   string
	at         time.Time
	createdAt  time.Time
	data       map[string]any
	validSigs  bool
	sigProblem string
}

func newReceiver(t testing.TB, answer func(n int64, r *http.Request) int) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	n := rc.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	if rc.answer != nil {
		if code := rc.answer(n, r); code != 200 {
			w.WriteHeader(code)
			return
		}
	}
	var env struct {
		ID        string         `json:"id"`
		Type      string         `json:"type"`
		CreatedAt time.Time      `json:"created_at"`
		Data      map[string]any `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	got := received{id: env.ID, typ: env.Type, delivery: r.Header.Get("X-Service-Delivery"), at: time.Now(),
		createdAt: env.CreatedAt, data: env.Data}
	secret, _ := rc.secret.Load().(string)
	switch {
	case secret == "":
		got.sigProblem = "secret not known yet"
	case !webhook.VerifyServiceSignature(secret, body, r.Header.Get("X-Service-Signature")):
		got.sigProblem = "X-Service-Signature does not verify"
	case webhook.VerifyStandard(secret, r.Header, body, 5*time.Minute, time.Now()) != nil:
		got.sigProblem = "webhook-signature does not verify"
	case r.Header.Get("webhook-id") != env.ID || r.Header.Get("X-Service-Event") != env.Type:
		got.sigProblem = "webhook-id or X-Service-Event differ from the body"
	default:
		got.validSigs = true
	}
	rc.mu.Lock()
	rc.got = append(rc.got, got)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// caFile writes the certificate of httptest's TLS servers (one for all of
// them) to a PEM file for WEBHOOK_CA_FILE.
func caFile(t testing.TB) string {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// webhookEnv is the configuration of a stack whose receivers are local.
func webhookEnv(t testing.TB, extra map[string]string) map[string]string {
	env := map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "WEBHOOK_CA_FILE": caFile(t),
		"SCHEDULER_INTERVAL": "100ms", "WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s,1s"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// hook creates an endpoint for rc through the management API.
func (s *stack) hook(tn *tenant, rc *receiver, events ...string) string {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"url": rc.srv.URL + "/hooks", "events": events})
	res := do(s.t, http.MethodPost, s.apiURL+"/v1/webhooks", body, map[string]string{"Authorization": "Bearer " + tn.apiKey})
	if res.Status != http.StatusCreated {
		s.t.Fatalf("POST /v1/webhooks = %d %s", res.Status, res.Body)
	}
	data := res.json(s.t)["data"].(map[string]any)
	rc.secret.Store(data["secret"].(string))
	return data["id"].(string)
}

// publishEvents puts n events of merchant on the events topic the way the
// outbox relay does, spread over members.
func publishEvents(t testing.TB, s *stack, merchantID uuid.UUID, n int) []outbox.Record {
	recs := make([]outbox.Record, n)
	for i := range recs {
		r, err := outbox.NewRecord(merchantID, uuid.New(), "referral.created", map[string]any{"seq": i}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = r
	}
	if err := s.deps.Events.PublishEvents(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return recs
}
