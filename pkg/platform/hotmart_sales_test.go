package platform

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/convida/convida/pkg/inbound"
)

// hotmartFake plays Hotmart's token service and payments API: tokens
// issued by POST /security/oauth/token (Basic auth, client credentials in
// the query), sales/history and sales/price/details paged by page_token,
// filtered by transaction_status, dates in milliseconds.
type hotmartFake struct {
	*fakeAPI
	mu     sync.Mutex
	issued int
	valid  string // the one access token the API accepts
}

func newHotmartFake(t *testing.T) *hotmartFake {
	h := &hotmartFake{}
	history := map[string]map[string]rawJSON{
		"": {
			"": rawJSON(`{"items":[
				{"buyer":{"name":"Ana Souza","email":"ana@example.com"},"purchase":{"transaction":"HP1","status":"APPROVED",
				 "order_date":1795580000000,"approved_date":1795580060000,"price":{"value":97.9,"currency_code":"BRL"}}},
				{"buyer":{"email":"bia@example.com"},"purchase":{"transaction":"HP2","status":"COMPLETE",
				 "order_date":1795580100000,"approved_date":1795580160000,"price":{"value":0.1,"currency_code":"BRL"}}}],
				"page_info":{"next_page_token":"tok2","results_per_page":2}}`),
			"tok2": rawJSON(`{"items":[
				{"buyer":{"email":"cai@example.com"},"purchase":{"transaction":"HP3","status":"APPROVED",
				 "order_date":1795580200000,"approved_date":1795580260000,"price":{"value":1500,"currency_code":"BRL"},
				 "offer":{"code":"x1","coupon_code":"FROM-OFFER"}}}],"page_info":{}}`),
		},
		"REFUNDED": {"": rawJSON(`{"items":[{"buyer":{"email":"dan@example.com"},"purchase":{"transaction":"HP0","status":"REFUNDED",
			"order_date":1795570000000,"approved_date":1795570060000,"price":{"value":"49.90","currency_code":"BRL"}}}],"page_info":{}}`)},
	}
	details := map[string]map[string]rawJSON{
		"": {
			"":   rawJSON(`{"items":[{"transaction":"HP1","coupon":{"code":"LOJ-ANA-7KQ2","value":10}},{"transaction":"HP2"}],"page_info":{"next_page_token":"d2"}}`),
			"d2": rawJSON(`{"items":[{"transaction":"HP3","coupon":null}],"page_info":{"next_page_token":""}}`),
		},
		"REFUNDED": {"": rawJSON(`{"items":[{"transaction":"HP0","coupon":{"code":"LOJ-DAN-1AB2"}}],"page_info":{}}`)},
	}
	list := func(pages map[string]map[string]rawJSON) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			h.mu.Lock()
			ok := h.valid != "" && r.Header.Get("Authorization") == "Bearer "+h.valid
			h.mu.Unlock()
			if !ok {
				writeJSON(w, 401, map[string]string{"error": "invalid_token"})
				return
			}
			q := r.URL.Query()
			if q.Get("start_date") != strconv.FormatInt(window.From.UnixMilli(), 10) || q.Get("end_date") != strconv.FormatInt(window.To.UnixMilli(), 10) {
				h.t.Errorf("%s with %v", r.URL.Path, q)
			}
			page := pages[q.Get("transaction_status")][q.Get("page_token")]
			if page == nil {
				page = rawJSON(`{"items":[],"page_info":{}}`)
			}
			writeJSON(w, 200, page)
		}
	}
	h.fakeAPI = newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /security/oauth/token": func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if r.Header.Get("Authorization") != "Basic aG0tYmFzaWM=" || q.Get("grant_type") != "client_credentials" ||
				q.Get("client_id") != "hm-client" || q.Get("client_secret") != "hm-secret" {
				writeJSON(w, 401, map[string]string{"error": "invalid_client"})
				return
			}
			h.mu.Lock()
			h.issued++
			h.valid = fmt.Sprintf("hm-access-%d", h.issued)
			tok := h.valid
			h.mu.Unlock()
			writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 172799})
		},
		"GET /payments/api/v1/sales/history":       list(history),
		"GET /payments/api/v1/sales/price/details": list(details),
	})
	return h
}

func (h *hotmartFake) revoke() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.valid = "revoked"
}

func (h *hotmartFake) tokensIssued() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.issued
}

func TestHotmartSales(t *testing.T) {
	t.Parallel()
	f := newHotmartFake(t)
	f.throttleOnce("GET /payments/api/v1/sales/history")
	c, p := testClient(t)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	c.Now = func() time.Time { return now }
	h, err := c.Hotmart(HotmartAccount{APIURL: f.srv.URL + "/payments/api/v1", AuthURL: f.srv.URL + "/security/oauth/token", ClientID: "hm-client", ClientSecret: "hm-secret",
		BasicToken: "Basic aG0tYmFzaWM="})
	if err != nil {
		t.Fatal(err)
	}
	sales := bySale(t, collect(t, h.Sales, window))
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	want := map[string]inbound.Sale{
		"HP1": {Platform: "hotmart", OrderID: "HP1", Status: "APPROVED", BuyerEmail: "ana@example.com", BuyerName: "Ana Souza",
			Amount: 9790, Currency: "BRL", CouponCode: "LOJ-ANA-7KQ2", OrderedAt: ms(1795580000000), ConfirmedAt: ms(1795580060000)},
		"HP2": {Platform: "hotmart", OrderID: "HP2", Status: "COMPLETE", BuyerEmail: "bia@example.com", Amount: 10, Currency: "BRL",
			OrderedAt: ms(1795580100000), ConfirmedAt: ms(1795580160000)},
		"HP3": {Platform: "hotmart", OrderID: "HP3", Status: "APPROVED", BuyerEmail: "cai@example.com", Amount: 150000, Currency: "BRL",
			CouponCode: "FROM-OFFER", OrderedAt: ms(1795580200000), ConfirmedAt: ms(1795580260000)},
		"HP0": {Platform: "hotmart", OrderID: "HP0", Status: "REFUNDED", BuyerEmail: "dan@example.com", Amount: 4990, Currency: "BRL",
			CouponCode: "LOJ-DAN-1AB2", OrderedAt: ms(1795570000000), ConfirmedAt: ms(1795570060000)},
	}
	if len(sales) != len(want) {
		t.Fatalf("got %d sales, want %d: %+v", len(sales), len(want), sales)
	}
	for id, w := range want {
		if got := sales[id]; got != w {
			t.Errorf("sale %s =\n%+v\nwant\n%+v", id, got, w)
		}
	}
	wantOnePause(t, p)
	if n := f.tokensIssued(); n != 1 {
		t.Errorf("%d tokens asked for, want 1 kept for the whole pull", n)
	}
	if got := f.requests("GET /payments/api/v1/sales/history"); len(got) < 2 || got[len(got)-1].Query.Get("max_results") == "" {
		t.Errorf("history requests = %+v", got)
	}

	// Kept for its expires_in: a pull a day later reuses it, two days
	// later a new one is asked for.
	now = now.Add(24 * time.Hour)
	collect(t, h.Sales, window)
	if n := f.tokensIssued(); n != 1 {
		t.Errorf("after a day: %d tokens, want the first still used", n)
	}
	now = now.Add(24 * time.Hour)
	collect(t, h.Sales, window)
	if n := f.tokensIssued(); n != 2 {
		t.Errorf("after two days: %d tokens, want a second one", n)
	}

	// Revoked before its time: the 401 brings a new token, once.
	f.revoke()
	if got := collect(t, h.Sales, window); len(got) != len(want) {
		t.Errorf("after a revocation: %d sales, want %d", len(got), len(want))
	}
	if n := f.tokensIssued(); n != 3 {
		t.Errorf("after a revocation: %d tokens, want a third one", n)
	}
}

func TestHotmartBadCredentials(t *testing.T) {
	t.Parallel()
	f := newHotmartFake(t)
	c, _ := testClient(t)
	h, err := c.Hotmart(HotmartAccount{APIURL: f.srv.URL + "/payments/api/v1", AuthURL: f.srv.URL + "/security/oauth/token", ClientID: "hm-client", ClientSecret: "wrong-secret",
		BasicToken: "aG0tYmFzaWM="})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Sales(t.Context(), window, func([]inbound.Sale) error { return nil })
	if err == nil || !contains(err.Error(), "hotmart POST oauth token answered 401") || contains(err.Error(), "wrong-secret") {
		t.Errorf("err = %v, want the token endpoint's 401 without the secret", err)
	}
}

// TestHotmartHandsOverEveryPage: the page callback runs once for every
// page read, the price details' pages (which hold no sale to hand over)
// included, so that a caller counting pages or writing a heartbeat sees
// the whole pull move on: per status, the details' pages then the
// history's (2 + 2 for the first, 1 + 1 for each of the three others).
func TestHotmartHandsOverEveryPage(t *testing.T) {
	t.Parallel()
	f := newHotmartFake(t)
	c, _ := testClient(t)
	h, err := c.Hotmart(HotmartAccount{APIURL: f.srv.URL + "/payments/api/v1", AuthURL: f.srv.URL + "/security/oauth/token", ClientID: "hm-client",
		ClientSecret: "hm-secret", BasicToken: "aG0tYmFzaWM="})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	if err := h.Sales(t.Context(), window, func(s []inbound.Sale) error { sizes = append(sizes, len(s)); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(sizes), "[0 0 2 1 0 1 0 0 0 0]"; got != want {
		t.Errorf("pages handed over (sales in each) = %s, want %s", got, want)
	}
	read := len(f.requests("GET /payments/api/v1/sales/history")) + len(f.requests("GET /payments/api/v1/sales/price/details"))
	if read != len(sizes) {
		t.Errorf("%d pages read, %d handed over", read, len(sizes))
	}
}
