package platform

import (
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
)

// guruTransactions serves GET /transactions as Guru's API does: a cursor
// per page, has_more_pages written as 0/1 on one page and true/false on
// the others, dates in Unix seconds, amounts as JSON numbers in reais.
func guruTransactions(t *testing.T) http.HandlerFunc {
	pages := map[string]rawJSON{
		"": rawJSON(`{"data":[
			{"id":"g1","status":"approved","contact":{"name":"Ana Souza","email":"ana@example.com","doc":"11144477735"},
			 "payment":{"total":97.9,"currency":"BRL","coupon":{"coupon_code":"LOJ-ANA-7KQ2","incidence_type":"percent"}},
			 "dates":{"ordered_at":1795580000,"confirmed_at":1795580100}},
			{"id":"g2","status":"approved","contact":{"email":"bia@example.com"},"payment":{"total":19.99,"coupon":[]},
			 "dates":{"ordered_at":"1795580200","confirmed_at":null}}],
			"has_more_pages":1,"next_cursor":"c2"}`),
		"c2": rawJSON(`{"data":[
			{"id":3,"status":"refunded","contact":null,"payment":{"total":1234.5,"coupon":null},"subscription":{"id":"sub_9"},
			 "dates":{"confirmed_at":1795580300}},
			{"id":"g4","status":"approved","payment":{"total":7,"coupon":"ABC"}}],
			"has_more_pages":true,"next_cursor":"c3"}`),
		"c3": rawJSON(`{"data":[{"id":"g5","status":"approved","payment":{"total":1.234}}],"has_more_pages":false,"next_cursor":null}`),
	}
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Header.Get("Authorization") != "Bearer guru-user-token" || q.Get("confirmed_at_ini") != "2026-11-25" ||
			q.Get("confirmed_at_end") != "2026-11-27" {
			t.Errorf("GET transactions with %v and %s", q, r.Header.Get("Authorization"))
		}
		page, ok := pages[q.Get("cursor")]
		if !ok {
			writeJSON(w, 400, map[string]string{"message": "bad cursor"})
			return
		}
		writeJSON(w, 200, page)
	}
}

func TestGuruSales(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, map[string]http.HandlerFunc{"GET /api/v2/transactions": guruTransactions(t)}).
		throttleOnce("GET /api/v2/transactions")
	c, p := testClient(t)
	g, err := c.Guru(GuruAccount{APIURL: f.srv.URL + "/api/v2", UserToken: "guru-user-token"})
	if err != nil {
		t.Fatal(err)
	}
	sales := bySale(t, collect(t, g.Sales, window))
	if len(sales) != 5 {
		t.Fatalf("got %d sales, want 5: %+v", len(sales), sales)
	}
	want := map[string]inbound.Sale{
		"g1": {Platform: "guru", OrderID: "g1", Status: "approved", BuyerEmail: "ana@example.com", BuyerName: "Ana Souza",
			BuyerDocument: "11144477735", Amount: 9790, Currency: "BRL", CouponCode: "LOJ-ANA-7KQ2",
			OrderedAt: time.Unix(1795580000, 0).UTC(), ConfirmedAt: time.Unix(1795580100, 0).UTC()},
		"g2": {Platform: "guru", OrderID: "g2", Status: "approved", BuyerEmail: "bia@example.com", Amount: 1999, Currency: "BRL",
			OrderedAt: time.Unix(1795580200, 0).UTC()},
		"3": {Platform: "guru", OrderID: "3", Status: "refunded", Amount: 123450, Currency: "BRL", SubscriptionID: "sub_9",
			ConfirmedAt: time.Unix(1795580300, 0).UTC()},
		"g4": {Platform: "guru", OrderID: "g4", Status: "approved", Amount: 700, Currency: "BRL"},
	}
	for id, w := range want {
		if got := sales[id]; got != w {
			t.Errorf("sale %s =\n%+v\nwant\n%+v", id, got, w)
		}
	}
	if s := sales["g5"]; s.Problem == "" || s.Amount != 0 {
		t.Errorf("an amount of 1.234 reais: %+v, want a problem and no amount", s)
	}
	reqs := f.requests("GET /api/v2/transactions")
	if len(reqs) != 4 || reqs[2].Query.Get("cursor") != "c2" || reqs[3].Query.Get("cursor") != "c3" {
		t.Errorf("requests = %+v, want page 1 twice (429 first), then cursors c2 and c3", reqs)
	}
	wantOnePause(t, p)
}

func TestGuruSalesWindow(t *testing.T) {
	t.Parallel()
	c, _ := testClient(t)
	g, err := c.Guru(GuruAccount{APIURL: "https://guru.invalid", UserToken: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []inbound.Window{{}, {From: window.To, To: window.From}, {From: window.From, To: window.From.AddDate(0, 0, 181)}} {
		if err := g.Sales(t.Context(), w, func([]inbound.Sale) error { return nil }); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("window %v: err = %v, want invalid", w, err)
		}
	}
}
