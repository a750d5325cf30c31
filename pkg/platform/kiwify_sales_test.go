package platform

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/inbound"
)

// kiwifyFake plays Kiwify's public API: a form POST to v1/oauth/token,
// then GET v1/sales with the Bearer and x-kiwify-account-id, paged by
// page_number and page_size up to pagination.count, amounts in centavos.
func kiwifyFake(t *testing.T, tokens *atomic.Int64) *fakeAPI {
	sales := []rawJSON{
		rawJSON(`{"id":"k-1","status":"paid","customer":{"email":"ana@example.com","name":"Ana Souza","cpf":"11144477735"},
			"payment":{"charge_amount":9790},"tracking":{"sck":"LOJ-ANA-7KQ2","src":"ig"},
			"created_at":"2026-11-26T10:00:00.000Z","approved_date":"2026-11-26 07:01"}`),
		rawJSON(`{"id":"k-2","status":"refunded","customer":{"email":"bia@example.com"},"payment":{"charge_amount":"1999"},
			"tracking":{"sck":"","src":" LOJ-BIA-2XY9 "},"created_at":"2026-11-26T11:00:00-03:00"}`),
		rawJSON(`{"id":"k-3","status":"paid","customer":{"email":"cai@example.com","cnpj":"11222333000181"},"payment":{"charge_amount":5},
			"tracking":{"s1":"LOJ-CAI-3ZZ1"},"created_at":"2026-11-27 23:59"}`),
		rawJSON(`{"id":"k-4","status":"paid","payment":{"charge_amount":12.5},"tracking":null,"created_at":"2026-11-27T10:00:00Z"}`),
	}
	const size = 3 // what the fake pages by, whatever page_size asks
	return newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /v1/oauth/token": func(w http.ResponseWriter, r *http.Request) {
			if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != "kw-client" || r.PostForm.Get("client_secret") != "kw-secret" ||
				r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				writeJSON(w, 401, map[string]string{"error": "invalid_client"})
				return
			}
			tokens.Add(1)
			writeJSON(w, 200, map[string]any{"access_token": "kw-access", "token_type": "Bearer", "expires_in": 345600})
		},
		"GET /v1/sales": func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if r.Header.Get("Authorization") != "Bearer kw-access" || r.Header.Get("x-kiwify-account-id") != "acc-77" {
				writeJSON(w, 401, map[string]string{"error": "unauthorized"})
				return
			}
			since, until := q.Get("start_date")+q.Get("updated_at_start_date"), q.Get("end_date")+q.Get("updated_at_end_date")
			if since != "2026-11-25T03:00:00.000Z" || until != "2026-11-28T02:59:59.000Z" || q.Get("page_size") == "" {
				t.Errorf("GET sales with %v", q)
			}
			n, _ := strconv.Atoi(q.Get("page_number"))
			from, to := min((n-1)*size, len(sales)), min(n*size, len(sales))
			writeJSON(w, 200, map[string]any{"pagination": map[string]any{"count": len(sales), "page_number": n, "page_size": size},
				"data": sales[from:to]})
		},
	})
}

func TestKiwifySales(t *testing.T) {
	t.Parallel()
	var tokens atomic.Int64
	f := kiwifyFake(t, &tokens).throttleOnce("GET /v1/sales")
	c, p := testClient(t)
	k, err := c.Kiwify(KiwifyAccount{APIURL: f.srv.URL + "/v1", ClientID: "kw-client", ClientSecret: "kw-secret", AccountID: "acc-77"})
	if err != nil {
		t.Fatal(err)
	}
	sales := bySale(t, collect(t, k.Sales, window))
	sp := SaoPaulo()
	want := map[string]inbound.Sale{
		"k-1": {Platform: "kiwify", OrderID: "k-1", Status: "paid", BuyerEmail: "ana@example.com", BuyerName: "Ana Souza",
			BuyerDocument: "11144477735", Amount: 9790, Currency: "BRL", ReferralCode: "LOJ-ANA-7KQ2",
			OrderedAt: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), ConfirmedAt: time.Date(2026, 11, 26, 7, 1, 0, 0, sp).UTC()},
		"k-2": {Platform: "kiwify", OrderID: "k-2", Status: "refunded", BuyerEmail: "bia@example.com", Amount: 1999, Currency: "BRL",
			ReferralCode: "LOJ-BIA-2XY9", OrderedAt: time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)},
		"k-3": {Platform: "kiwify", OrderID: "k-3", Status: "paid", BuyerEmail: "cai@example.com", BuyerDocument: "11222333000181",
			Amount: 5, Currency: "BRL", ReferralCode: "LOJ-CAI-3ZZ1", OrderedAt: time.Date(2026, 11, 27, 23, 59, 0, 0, sp).UTC()},
	}
	if len(sales) != 4 {
		t.Fatalf("got %d sales, want 4: %+v", len(sales), sales)
	}
	for id, w := range want {
		if got := sales[id]; got != w {
			t.Errorf("sale %s =\n%+v\nwant\n%+v", id, got, w)
		}
	}
	if s := sales["k-4"]; s.Problem == "" {
		t.Errorf("a charge_amount of 12.5 centavos: %+v, want a problem", s)
	}
	reqs := f.requests("GET /v1/sales")
	if len(reqs) != 3 || reqs[2].Query.Get("page_number") != "2" {
		t.Errorf("requests = %+v, want page 1 twice (429 first), then page 2", reqs)
	}
	wantOnePause(t, p)
	if got := collect(t, k.SalesUpdated, window); len(got) != 4 {
		t.Errorf("SalesUpdated: %d sales, want 4", len(got))
	}
	if q := f.requests("GET /v1/sales")[3].Query; q.Get("updated_at_start_date") == "" || q.Get("start_date") != "" {
		t.Errorf("SalesUpdated sent %v, want the updated_at filters", q)
	}
	if n := tokens.Load(); n != 1 {
		t.Errorf("%d tokens asked for, want 1 kept across pulls", n)
	}
}
