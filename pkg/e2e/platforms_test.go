package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/testenv"
)

// The platforms' bodies are pkg/inbound's fixtures, read from there so that
// the adapters and the whole pipeline are tested on the same bytes.
const (
	guruApproved  = "guru/transaction-approved.json"
	guruRefunded  = "guru/transaction-refunded.json"
	yampiPaid     = "yampi/order-paid.json"
	yampiRefunded = "yampi/order-status-updated-refunded.json"
	hotmartPaid   = "hotmart/purchase-approved.json"
	kiwifyPaid    = "kiwify/order-approved.json"
	eduzzPaid     = "eduzz/invoice-paid.json"
)

// fixture returns a body of pkg/inbound/testdata with JSON fields replaced
// by path ("payment.coupon.coupon_code" → value).
func fixture(t testing.TB, name string, set map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "inbound", "testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, v := range paidNow(name, testenv.Now(t)) {
		setPath(doc, path, v, true)
	}
	for path, v := range set {
		setPath(doc, path, v, false)
	}
	out, _ := json.Marshal(doc)
	return out
}

// paidNow dates a fixture's sale now, as a platform would: the warranty
// runs from the payment's time, so a fixture keeping the day it was
// written would be past its warranty a week later, and the scheduler of a
// test would release it. A test that needs another time sets it.
func paidNow(name string, now time.Time) map[string]any {
	sp := now.In(saoPaulo)
	switch strings.SplitN(name, "/", 2)[0] {
	case "guru":
		at := now.UTC().Format(time.RFC3339)
		return map[string]any{"dates.ordered_at": at, "dates.confirmed_at": at}
	case "yampi":
		return map[string]any{"time": sp.Format("2006-01-02 15:04:05"), "resource.created_at.date": sp.Format("2006-01-02 15:04:05.000000")}
	case "hotmart":
		return map[string]any{"data.purchase.approved_date": now.UnixMilli(), "data.purchase.order_date": now.UnixMilli()}
	case "kiwify":
		return map[string]any{"approved_date": sp.Format("2006-01-02 15:04"), "created_at": sp.Format("2006-01-02 15:04")}
	case "eduzz":
		at := now.UTC().Format(time.RFC3339)
		return map[string]any{"data.paidAt": at, "data.createdAt": at, "sentDate": at}
	}
	return nil
}

// saoPaulo is the platforms' local time (Yampi's and Kiwify's dates carry
// no zone); Brazil has had no daylight saving time since 2019.
var saoPaulo = time.FixedZone("America/Sao_Paulo", -3*60*60)

// setPath sets the dotted path of doc to v; onlyPresent leaves a path
// whose field the fixture does not have (or has null) alone.
func setPath(doc map[string]any, path string, v any, onlyPresent bool) {
	parts := strings.Split(path, ".")
	node := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := node[p].(map[string]any)
		if !ok && onlyPresent {
			return
		}
		node = next
	}
	last := parts[len(parts)-1]
	if cur, ok := node[last]; onlyPresent && (!ok || cur == nil) {
		return
	}
	node[last] = v
}

func guruSale(t testing.TB, tn *tenant, orderID, coupon string, total float64, status string) []byte {
	file := guruApproved
	if status != "approved" {
		file = guruRefunded
	}
	return fixture(t, file, map[string]any{"api_token": tn.guruToken, "id": orderID, "status": status,
		"payment.coupon.coupon_code": coupon, "payment.total": total})
}

func (s *stack) postGuru(tn *tenant, body []byte) response {
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/guru/"+tn.merchant.ID.String(), body,
		map[string]string{"Content-Type": "application/json"})
}

func yampiSign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (s *stack) postYampi(tn *tenant, body []byte, signature string) response {
	if signature == "" {
		signature = yampiSign(tn.yampiSecret, body)
	}
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/yampi/"+tn.merchant.ID.String(), body,
		map[string]string{"Content-Type": "application/json", "X-Yampi-Hmac-SHA256": signature})
}

// hotmartHeader is the header of a Hotmart delivery carrying hottok.
func hotmartHeader(hottok string) map[string]string {
	return map[string]string{"Content-Type": "application/json", "X-HOTMART-HOTTOK": hottok}
}

func (s *stack) postHotmart(tn *tenant, body []byte, hottok string) response {
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/hotmart/"+tn.merchant.ID.String(), body, hotmartHeader(hottok))
}

// kiwifySign is Kiwify's signature of body: hex(HMAC-SHA1(body, token)).
func kiwifySign(token string, body []byte) string { return inbound.KiwifySignature(body, token) }

// kiwifyPath is the path of tn's Kiwify webhooks with signature in the
// query (none when empty).
func kiwifyPath(tn *tenant, signature string) string {
	path := "/api/webhooks/kiwify/" + tn.merchant.ID.String()
	if signature != "" {
		path += "?signature=" + url.QueryEscape(signature)
	}
	return path
}

func (s *stack) postKiwify(tn *tenant, body []byte, signature string) response {
	return do(s.t, http.MethodPost, s.ingestURL+kiwifyPath(tn, signature), body, map[string]string{"Content-Type": "application/json"})
}

// eduzzSign is Eduzz's x-signature of body: hex(HMAC-SHA256(body, secret)).
func eduzzSign(secret string, body []byte) string { return inbound.EduzzSignature(body, secret) }

// eduzzHeader is the header of an Eduzz delivery carrying signature (none
// when empty).
func eduzzHeader(signature string) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	if signature != "" {
		h["x-signature"] = signature
	}
	return h
}

func yampiOrder(t testing.TB, file string, orderID int, coupon string, total float64) []byte {
	return fixture(t, file, map[string]any{"resource.id": orderID, "resource.promocode.data.code": coupon,
		"resource.value_total": total})
}

// platform is a local HTTP server playing Guru and Yampi; fail decides the
// status of each platform call (0 = success); respond, when set, answers
// the calls fail lets through (a coupon shop: coupon_shop_test.go). Set both
// before the calls.
type platform struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []string // "METHOD path[?query] auth body"
	fail     func(n int64, path string) int
	respond  func(r *http.Request, body []byte) (status int, answer string)
	delay    time.Duration // answer this late (set before the calls)
	calls    atomic.Int64
}

func newPlatform(t *testing.T) *platform {
	p := &platform{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization") + r.Header.Get("User-Token") + "/" + r.Header.Get("User-Secret-Key")
		p.mu.Lock()
		target := r.URL.Path
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		p.requests = append(p.requests, fmt.Sprintf("%s %s %s %s", r.Method, target, auth, body))
		p.mu.Unlock()
		time.Sleep(p.delay)
		if p.fail != nil {
			if code := p.fail(p.calls.Add(1), r.URL.Path); code != 0 {
				w.WriteHeader(code)
				_, _ = w.Write([]byte(`{"message":"refused by the test platform"}`))
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if p.respond != nil {
			status, answer := p.respond(r, body)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(answer))
			return
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"id":"sub_1","charged_times":3}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"id":1}}`))
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}
