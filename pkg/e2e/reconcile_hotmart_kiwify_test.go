package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hotmartKiwifyAPI plays the pull contract of Hotmart (an OAuth token
// endpoint taking the client credentials in the query and the basic
// token; GET sales/history and sales/price/details by transaction_status,
// with page_token, dates in milliseconds) and of Kiwify (POST oauth/token
// with a form; GET sales with x-kiwify-account-id, page_number and
// page_size, by creation or by update, ISO dates), serving the sales of
// one provider. Each provider's first request is answered 429 with
// Retry-After: 1.
type hotmartKiwifyAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	coupon  string
	sales   []pulledSale
	updated map[string]time.Time // by order: when set changed its status
	limited map[string]bool
	now     func() time.Time // the stack's clock: the platform's and ours agree
}

func newHotmartKiwifyAPI(t *testing.T, now func() time.Time, coupon string) *hotmartKiwifyAPI {
	a := &hotmartKiwifyAPI{coupon: coupon, updated: map[string]time.Time{}, limited: map[string]bool{}, now: now}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		provider := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
		if !a.limited[provider] {
			a.limited[provider] = true
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"too many requests"}`))
			return
		}
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/hotmart/oauth/token" && r.Method == http.MethodPost:
			if r.Header.Get("Authorization") != "Basic aG0tYmFzaWM=" || q.Get("grant_type") != "client_credentials" ||
				q.Get("client_id") != "hm-id" || q.Get("client_secret") != "hm-secret" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte(`{"access_token":"hm-access","token_type":"bearer","expires_in":3600}`))
		case r.URL.Path == "/kiwify/v1/oauth/token" && r.Method == http.MethodPost:
			if r.ParseForm() != nil || r.PostForm.Get("client_id") != "kw-id" || r.PostForm.Get("client_secret") != "kw-secret" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte(`{"access_token":"kw-access","token_type":"Bearer","expires_in":"345600"}`))
		case strings.HasPrefix(r.URL.Path, "/hotmart/api/v1/sales/"):
			if r.Header.Get("Authorization") != "Bearer hm-access" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			a.hotmart(w, r)
		case r.URL.Path == "/kiwify/v1/sales":
			if r.Header.Get("Authorization") != "Bearer kw-access" || r.Header.Get("x-kiwify-account-id") != "kw-account" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			a.kiwify(w, r)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// hotmart answers sales/history and sales/price/details: without
// transaction_status the approved and complete sales, else those of the
// status, in pages of max_results.
func (a *hotmartKiwifyAPI) hotmart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err1 := strconv.ParseInt(q.Get("start_date"), 10, 64)
	to, err2 := strconv.ParseInt(q.Get("end_date"), 10, 64)
	size, err3 := strconv.Atoi(q.Get("max_results"))
	if err1 != nil || err2 != nil || err3 != nil || size <= 0 {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var sales []pulledSale
	for _, s := range a.sales {
		ms := s.at.UnixMilli()
		status := q.Get("transaction_status")
		if ms >= from && ms <= to && (status == s.status || status == "" && (s.status == "APPROVED" || s.status == "COMPLETE")) {
			sales = append(sales, s)
		}
	}
	start, _ := strconv.Atoi(q.Get("page_token"))
	end := min(start+size, len(sales))
	items := []map[string]any{}
	for _, s := range sales[min(start, end):end] {
		if strings.HasSuffix(r.URL.Path, "/price/details") {
			items = append(items, map[string]any{"transaction": s.order, "coupon": map[string]any{"code": a.coupon}})
			continue
		}
		items = append(items, map[string]any{
			"buyer": map[string]any{"name": "Bia", "email": "bia@example.com", "document": "12345678909"},
			"purchase": map[string]any{"transaction": s.order, "status": s.status, "order_date": s.at.UnixMilli(),
				"approved_date": s.at.UnixMilli(), "price": map[string]any{"value": json.Number("100.00"), "currency_code": "BRL"}}})
	}
	page := map[string]any{"results_per_page": size}
	if end < len(sales) {
		page["next_page_token"] = strconv.Itoa(end)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"items": items, "page_info": page})
}

// kiwify answers GET sales created (start_date, end_date) or updated
// (updated_at_start_date, updated_at_end_date) in the window, every sale
// updated when it was created, or when set changed its status.
func (a *hotmartKiwifyAPI) kiwify(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	byUpdate := q.Get("updated_at_start_date") != ""
	fromText, toText := q.Get("start_date"), q.Get("end_date")
	if byUpdate {
		fromText, toText = q.Get("updated_at_start_date"), q.Get("updated_at_end_date")
	}
	from, err1 := time.Parse(time.RFC3339, fromText)
	to, err2 := time.Parse(time.RFC3339, toText)
	size, err3 := strconv.Atoi(q.Get("page_size"))
	number, err4 := strconv.Atoi(q.Get("page_number"))
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || size <= 0 || number < 1 {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var sales []pulledSale
	for _, s := range a.sales {
		at := s.at
		if updated, ok := a.updated[s.order]; ok && byUpdate {
			at = updated
		}
		if !at.Before(from) && !at.After(to) {
			sales = append(sales, s)
		}
	}
	start := min((number-1)*size, len(sales))
	end := min(start+size, len(sales))
	items := []map[string]any{}
	for _, s := range sales[start:end] {
		iso := s.at.In(saoPaulo).Format("2006-01-02T15:04:05.000-07:00")
		items = append(items, map[string]any{"id": s.order, "status": s.status, "created_at": iso, "approved_date": iso,
			"customer": map[string]any{"name": "Bia", "email": "bia@example.com", "cpf": "12345678909"},
			"payment":  map[string]any{"charge_amount": 10000, "currency": "BRL"},
			"tracking": map[string]any{"sck": a.coupon, "src": nil, "s1": nil}})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"data": items,
		"pagination": map[string]any{"count": len(sales), "page_number": number, "page_size": size}})
}

func (a *hotmartKiwifyAPI) set(order, status string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.sales {
		if a.sales[i].order == order {
			a.sales[i].status = status
			// A second ago: the window's end is written in milliseconds,
			// and the run asked for at once may end in the same one.
			a.updated[order] = a.now().Add(-time.Second)
		}
	}
}
