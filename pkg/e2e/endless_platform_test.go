package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// endlessAPI plays the four platforms' pulls at their worst: every page of
// every list is answered after delay, holds one sale that attributes to
// nobody, and says that more pages follow, forever. The token requests
// (Hotmart's and Kiwify's) are answered at once. It counts the requests
// in flight and those whose caller went away before the answer.
type endlessAPI struct {
	srv      *httptest.Server
	delay    time.Duration
	mu       sync.Mutex
	inFlight int
	left     int // requests whose caller went away before the answer
	served   map[string]int
}

func newEndlessAPI(t *testing.T, delay time.Duration) *endlessAPI {
	a := &endlessAPI{delay: delay, served: map[string]int{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// integrations are the settings that point the four integrations at a.
func (a *endlessAPI) integrations() map[string]string {
	u := a.srv.URL
	return map[string]string{
		"guru":  `{"user_token": "guru-user-token", "api_url": "` + u + `/guru"}`,
		"yampi": `{"user_token": "yt", "user_secret_key": "ys", "store_alias": "loja", "api_url": "` + u + `/yampi"}`,
		"hotmart": `{"client_id": "hm-id", "client_secret": "hm-secret", "basic_token": "Basic aG0tYmFzaWM=", "api_url": "` + u +
			`/hotmart/api", "auth_url": "` + u + `/hotmart/token"}`,
		"kiwify": `{"client_id": "kw-id", "client_secret": "kw-secret", "account_id": "kw-account", "api_url": "` + u + `/kiwify"}`,
	}
}

func (a *endlessAPI) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "token") && r.Method == http.MethodPost {
		_, _ = w.Write([]byte(`{"access_token":"endless-access","expires_in":3600}`))
		return
	}
	a.mu.Lock()
	a.inFlight++
	a.served[r.URL.Path]++
	n := a.served[r.URL.Path]
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.inFlight--
		a.mu.Unlock()
	}()
	select {
	case <-time.After(a.delay):
	case <-r.Context().Done():
		a.mu.Lock()
		a.left++
		a.mu.Unlock()
		return
	}
	at := time.Now().Add(-time.Hour)
	var page any
	switch r.URL.Path {
	case "/guru/transactions":
		page = map[string]any{"has_more_pages": true, "next_cursor": strconv.Itoa(n), "data": []any{map[string]any{
			"id": fmt.Sprintf("endless-%d", n), "status": "approved", "contact": map[string]any{"email": "nobody@example.com"},
			"payment": map[string]any{"total": 10, "currency": "BRL"}, "dates": map[string]any{"ordered_at": at.Unix(), "confirmed_at": at.Unix()}}}}
	case "/yampi/loja/orders":
		page = map[string]any{"meta": map[string]any{"pagination": map[string]any{"total_pages": 1_000_000}}, "data": []any{map[string]any{
			"id": 900000 + n, "status": map[string]any{"data": map[string]any{"alias": "paid"}}, "value_total": 10, "promocode_id": 0,
			"customer":   map[string]any{"data": map[string]any{"email": "nobody@example.com"}},
			"created_at": map[string]any{"date": at.In(time.FixedZone("-03", -3*3600)).Format("2006-01-02 15:04:05.000000")}}}}
	case "/hotmart/api/sales/price/details":
		page = map[string]any{"page_info": map[string]any{"next_page_token": fmt.Sprintf("d%d", n)},
			"items": []any{map[string]any{"transaction": fmt.Sprintf("HP-ENDLESS-%d", n)}}}
	case "/hotmart/api/sales/history":
		page = map[string]any{"page_info": map[string]any{"next_page_token": fmt.Sprintf("h%d", n)}, "items": []any{map[string]any{
			"buyer": map[string]any{"email": "nobody@example.com"}, "purchase": map[string]any{"transaction": fmt.Sprintf("HP-ENDLESS-%d", n),
				"status": "APPROVED", "order_date": at.UnixMilli(), "approved_date": at.UnixMilli(),
				"price": map[string]any{"value": 10, "currency_code": "BRL"}}}}}
	case "/kiwify/sales":
		page = map[string]any{"pagination": map[string]any{"count": 1_000_000_000, "page_number": n, "page_size": 100}, "data": []any{map[string]any{
			"id": fmt.Sprintf("kw-endless-%d", n), "status": "paid", "customer": map[string]any{"email": "nobody@example.com"},
			"payment": map[string]any{"charge_amount": 1000}, "created_at": at.UTC().Format(time.RFC3339)}}}
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	_ = json.NewEncoder(w).Encode(page)
}

// pagesServed is how many pages of path were requested.
func (a *endlessAPI) pagesServed(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served[path]
}

// state is the requests in flight and those left before their answer.
func (a *endlessAPI) state() (inFlight, left int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inFlight, a.left
}
