package platform

import (
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/inbound"
)

// yampiOrdersPages serves GET {alias}/orders as Yampi's API does: page and
// limit, meta.pagination, created_at as an object in São Paulo time,
// promocode_id at the top whether or not the promocode is included.
func yampiOrdersPages(t *testing.T) http.HandlerFunc {
	pages := map[string]rawJSON{
		"1": rawJSON(`{"data":[
			{"id":880001,"number":1042,"status":{"data":{"alias":"paid"}},"value_total":"149.90","promocode_id":4471,
			 "promocode":{"data":{"id":4471,"code":"LOJ-ANA-7KQ2"}},
			 "customer":{"data":{"name":"Bruno Lima","email":"bruno.lima@example.com","cpf":"11144477735"}},
			 "created_at":{"date":"2026-11-26 08:55:00.000000","timezone_type":3,"timezone":"America/Sao_Paulo"}},
			{"id":880002,"status":{"data":{"alias":"refunded"}},"value_total":0.3,"promocode_id":4472,"promocode":{"data":[]},
			 "customer":{"data":{"email":"loja@example.com","cpf":null,"cnpj":"11222333000181"}},
			 "created_at":"2026-11-26 09:00:00"}],
			"meta":{"pagination":{"total":3,"count":2,"per_page":2,"current_page":1,"total_pages":2}}}`),
		"2": rawJSON(`{"data":[
			{"id":880003,"status":{"data":{"alias":"waiting_payment"}},"value_total":59,"promocode_id":null,
			 "created_at":{"date":"2026-11-27 23:59:59.000000","timezone":"America/Sao_Paulo"}}],
			"meta":{"pagination":{"total":3,"count":1,"per_page":2,"current_page":2,"total_pages":2}}}`),
	}
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Header.Get("User-Token") != "yt" || r.Header.Get("User-Secret-Key") != "ysk" ||
			q.Get("date") != "created_at:2026-11-25|2026-11-27" || q.Get("skipCache") != "true" || q.Get("limit") == "" ||
			q.Get("include") != "promocode,customer,status" {
			t.Errorf("GET orders with %v and headers %v", q, r.Header)
		}
		page, ok := pages[q.Get("page")]
		if !ok {
			page = rawJSON(`{"data":[],"meta":{"pagination":{"total_pages":2}}}`)
		}
		writeJSON(w, 200, page)
	}
}

func TestYampiSales(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /v2/minha-loja/orders": yampiOrdersPages(t),
		"GET /v2/minha-loja/orders/880002": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, rawJSON(`{"data":{"id":880002,"status":{"data":{"alias":"refunded"}},"value_total":"0.30",
				"promocode_id":4472,"promocode":{"data":{"id":4472,"code":"LOJ-BIA-2XY9"}},"created_at":"2026-11-26 09:00:00"}}`))
		},
	}).throttleOnce("GET /v2/minha-loja/orders")
	c, p := testClient(t)
	y, err := c.Yampi(YampiAccount{APIURL: f.srv.URL + "/v2/", UserToken: "yt", UserSecretKey: "ysk", StoreAlias: "minha-loja"})
	if err != nil {
		t.Fatal(err)
	}
	sales := bySale(t, collect(t, y.Sales, window))
	sp := SaoPaulo()
	want := map[string]inbound.Sale{
		"880001": {Platform: "yampi", OrderID: "880001", Status: "paid", BuyerEmail: "bruno.lima@example.com", BuyerName: "Bruno Lima",
			BuyerDocument: "11144477735", Amount: 14990, Currency: "BRL", CouponCode: "LOJ-ANA-7KQ2", PromocodeID: "4471",
			OrderedAt: time.Date(2026, 11, 26, 8, 55, 0, 0, sp).UTC()},
		"880002": {Platform: "yampi", OrderID: "880002", Status: "refunded", BuyerEmail: "loja@example.com",
			BuyerDocument: "11222333000181", Amount: 30, Currency: "BRL", PromocodeID: "4472",
			OrderedAt: time.Date(2026, 11, 26, 9, 0, 0, 0, sp).UTC()},
		"880003": {Platform: "yampi", OrderID: "880003", Status: "waiting_payment", Amount: 5900, Currency: "BRL",
			OrderedAt: time.Date(2026, 11, 27, 23, 59, 59, 0, sp).UTC()},
	}
	if len(sales) != len(want) {
		t.Fatalf("got %d sales, want %d", len(sales), len(want))
	}
	for id, w := range want {
		if got := sales[id]; got != w {
			t.Errorf("sale %s =\n%+v\nwant\n%+v", id, got, w)
		}
	}
	reqs := f.requests("GET /v2/minha-loja/orders")
	if len(reqs) != 3 || reqs[1].Query.Get("page") != "1" || reqs[2].Query.Get("page") != "2" {
		t.Errorf("requests = %+v, want page 1 twice (429 first), then page 2", reqs)
	}
	wantOnePause(t, p)

	// An order whose promocode_id matches no coupon kept: read alone.
	one, err := y.Order(t.Context(), "880002")
	if err != nil || one.CouponCode != "LOJ-BIA-2XY9" || one.Amount != 30 || one.PromocodeID != "4472" {
		t.Errorf("Order = %+v, %v; want the code LOJ-BIA-2XY9", one, err)
	}
}
