package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

// The fan-out sees every endpoint change committed before an event
// (docs/architecture.md, "Outbound webhooks"): these tests make the changes
// while the merchant's events flow, so that its endpoints are cached the
// whole time, and emit the event right after the change.

// pathReceiver is an HTTPS receiver for many endpoints, told apart by the
// path of their URL; it keeps every delivery.
type pathReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []pathDelivery
}

type pathDelivery struct {
	path, typ, member string // member: the id in the data of a member.* event
	body              []byte
	serviceSignature  string
}

func newPathReceiver(t *testing.T) *pathReceiver {
	pr := &pathReceiver{}
	pr.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		pr.mu.Lock()
		pr.got = append(pr.got, pathDelivery{path: r.URL.Path, typ: env.Type, member: env.Data.ID, body: body,
			serviceSignature: r.Header.Get(webhook.HeaderServiceSignature)})
		pr.mu.Unlock()
	}))
	t.Cleanup(pr.srv.Close)
	return pr
}

// members returns the deliveries of member.created to path, by member id.
func (pr *pathReceiver) members(path string) map[string]pathDelivery {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	out := map[string]pathDelivery{}
	for _, d := range pr.got {
		if d.path == path && d.typ == "member.created" {
			out[d.member] = d
		}
	}
	return out
}

// endpoint creates an endpoint of tn on pr's path through the management
// API and returns its id and secret.
func (s *stack) endpoint(tn *tenant, pr *pathReceiver, path string, events ...string) (id, secret string) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"url": pr.srv.URL + path, "events": events})
	res := do(s.t, http.MethodPost, s.apiURL+"/v1/webhooks", body, map[string]string{"X-API-Key": tn.apiKey})
	if res.Status != http.StatusCreated {
		s.t.Fatalf("POST /v1/webhooks = %d %s", res.Status, res.Body)
	}
	data := res.json(s.t)["data"].(map[string]any)
	return data["id"].(string), data["secret"].(string)
}

// manage calls the webhook-management API and returns the answer's data.
func (s *stack) manage(tn *tenant, method, path, body string) map[string]any {
	s.t.Helper()
	res := do(s.t, method, s.apiURL+"/v1/webhooks"+path, []byte(body), map[string]string{"X-API-Key": tn.apiKey})
	if res.Status != http.StatusOK {
		s.t.Fatalf("%s /v1/webhooks%s = %d %s", method, path, res.Status, res.Body)
	}
	data, _ := res.json(s.t)["data"].(map[string]any)
	return data
}

// createMember creates a member through the API and returns its id.
func (s *stack) createMember(tn *tenant, email string) string {
	s.t.Helper()
	status, res := s.api(tn, http.MethodPost, "/members", []byte(`{"email":"`+email+`","name":"Membro"}`))
	if status != http.StatusCreated {
		s.t.Fatalf("POST /members = %d %v", status, res)
	}
	return res["data"].(map[string]any)["id"].(string)
}

// flowSales posts a sale for tn every few milliseconds until the test ends
// (or the returned stop is called), so that the merchant's events keep
// reaching the dispatcher; it fails the test if none was accepted.
func (s *stack) flowSales(t *testing.T, tn *tenant, coupon string) (stop func()) {
	t.Helper()
	const placeholder = "FLOW-ORDER-ID"
	template := guruSale(t, tn, placeholder, coupon, 100, "approved")
	url := s.ingestURL + "/api/webhooks/guru/" + tn.merchant.ID.String()
	ctx, cancel := context.WithCancel(context.Background())
	var accepted atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ctx.Err() == nil; n++ {
			body := bytes.Replace(template, []byte(placeholder), []byte(fmt.Sprintf("flow-%d", n)), 1)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(req); err == nil {
				if res.StatusCode == http.StatusOK {
					accepted.Add(1)
				}
				_ = res.Body.Close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	// The merchant's endpoints are cached from its first events on.
	testenv.Eventually(t, 20*time.Second, "sales flowing", func() bool {
		return s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID) > 0
	})
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		if accepted.Load() == 0 {
			t.Error("no sale was accepted: the merchant's events did not flow")
		}
		t.Logf("%d sales accepted while the test ran", accepted.Load())
	}
	t.Cleanup(stop)
	return stop
}

// TestWebhookNewEndpointGetsTheNextEvent: while sales flow for the
// merchant, an endpoint is created and a member right after it, 100 times
// over; each endpoint receives member.created of the member created after
// it (and of every later one).
func TestWebhookNewEndpointGetsTheNextEvent(t *testing.T) {
	t.Parallel()
	s, tn, ana := startWithAna(t, stackOptions{dispatcher: true, scheduler: true, env: webhookEnv(t, nil)}, 500)
	pr := newPathReceiver(t)
	stop := s.flowSales(t, tn, ana.CouponCode)

	const rounds = 100
	members := make([]string, rounds)
	for i := range rounds {
		s.endpoint(tn, pr, fmt.Sprintf("/new/%d", i), "member.created")
		members[i] = s.createMember(tn, fmt.Sprintf("novo%d@example.com", i))
	}
	stop()
	// Endpoint i receives members i, i+1, …: 100+99+…+1 deliveries.
	missing := func() (n int, first string) {
		for i := range rounds {
			got := pr.members(fmt.Sprintf("/new/%d", i))
			for j := i; j < rounds; j++ {
				if _, ok := got[members[j]]; !ok {
					if n == 0 {
						first = fmt.Sprintf("endpoint %d lacks member %d", i, j)
					}
					n++
				}
			}
		}
		return n, first
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, first := missing()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d member.created deliveries missing after 60 s (%s)", n, first)
		}
	}
	// Each of them is in the delivery log.
	const deliveries = rounds * (rounds + 1) / 2
	testenv.Eventually(t, 10*time.Second, "every delivery logged", func() bool {
		return s.count(`SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND event_type = 'member.created'
  AND status = 'success'`, tn.merchant.ID) >= deliveries
	})
}

// TestWebhookSwitchedOffEndpointGetsNothingAfter: while sales flow for the
// merchant, endpoints are disabled (PATCH is_active false), unsubscribed
// (PATCH events without member.created) or given a new secret, and a member
// is created right after; the first two receive nothing more and log
// nothing more, the third signs the event with its new secret.
func TestWebhookSwitchedOffEndpointGetsNothingAfter(t *testing.T) {
	t.Parallel()
	s, tn, ana := startWithAna(t, stackOptions{dispatcher: true, scheduler: true, env: webhookEnv(t, nil)}, 500)
	pr := newPathReceiver(t)
	s.flowSales(t, tn, ana.CouponCode)

	const rounds = 20
	type round struct {
		disabled, unsubscribed string // endpoint ids
		before, after          string // member ids
		rotatedSecret          string
	}
	rs := make([]round, rounds)
	for i := range rs {
		r := &rs[i]
		path := func(kind string) string { return fmt.Sprintf("/%s/%d", kind, i) }
		r.disabled, _ = s.endpoint(tn, pr, path("disabled"), "member.created")
		r.unsubscribed, _ = s.endpoint(tn, pr, path("unsubscribed"), "member.created", "member.updated")
		rotated, _ := s.endpoint(tn, pr, path("rotated"), "member.created")
		s.endpoint(tn, pr, path("control"), "member.created")
		r.before = s.createMember(tn, fmt.Sprintf("antes%d@example.com", i))
		// The dispatcher now has the four endpoints in its cache.
		testenv.Eventually(t, 20*time.Second, "the member created before the changes, everywhere", func() bool {
			for _, kind := range []string{"disabled", "unsubscribed", "rotated", "control"} {
				if _, ok := pr.members(path(kind))[r.before]; !ok {
					return false
				}
			}
			return true
		})
		s.manage(tn, http.MethodPatch, "/"+r.disabled, `{"is_active": false}`)
		s.manage(tn, http.MethodPatch, "/"+r.unsubscribed, `{"events": ["member.updated"]}`)
		r.rotatedSecret = s.manage(tn, http.MethodPost, "/"+rotated+"/rotate-secret", "")["secret"].(string)
		r.after = s.createMember(tn, fmt.Sprintf("depois%d@example.com", i))
	}
	// The control endpoints receive every member created after them; so do
	// the rotated ones, signed with the new secret.
	testenv.Eventually(t, 30*time.Second, "every member created after the changes, at the control endpoints", func() bool {
		for i, r := range rs {
			for _, kind := range []string{"control", "rotated"} {
				if _, ok := pr.members(fmt.Sprintf("/%s/%d", kind, i))[r.after]; !ok {
					return false
				}
			}
		}
		return true
	})
	time.Sleep(500 * time.Millisecond) // a delivery to a switched-off endpoint would have come by now
	for i, r := range rs {
		// The members created after round i's PATCH. An event committed
		// before it may still reach the endpoint (the member before, and
		// that of the previous round if its fan-out came after the
		// endpoint's creation), but none after.
		after := map[string]bool{r.after: true}
		for _, later := range rs[i+1:] {
			after[later.before], after[later.after] = true, true
		}
		for kind, id := range map[string]string{"disabled": r.disabled, "unsubscribed": r.unsubscribed} {
			got := pr.members(fmt.Sprintf("/%s/%d", kind, i))
			var wrong []string
			for m := range got {
				if after[m] {
					wrong = append(wrong, m)
				}
			}
			if len(wrong) > 0 {
				t.Errorf("round %d: the %s endpoint received member.created of %d members created after its PATCH: %s",
					i, kind, len(wrong), strings.Join(wrong, ", "))
			}
			// Every attempt is logged: as many as the deliveries before
			// the PATCH, and none after (not even a failed one).
			if total := s.webhookLogs(tn, id, "")["pagination"].(map[string]any)["total"]; total != float64(len(got)) {
				t.Errorf("round %d: the %s endpoint's log holds %v attempts, want %d (its deliveries before the PATCH)",
					i, kind, total, len(got))
			}
		}
		d := pr.members(fmt.Sprintf("/rotated/%d", i))[r.after]
		if !webhook.VerifyServiceSignature(r.rotatedSecret, d.body, d.serviceSignature) {
			t.Errorf("round %d: the event after the rotation is not signed with the new secret", i)
		}
	}
}
