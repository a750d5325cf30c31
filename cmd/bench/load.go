package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convida/convida/pkg/provider"
)

// orderTotal is each sale's payment.total, in reais as Guru sends it.
const orderTotal = 97.90

// orderCents is orderTotal in cents, what the ingest must record.
const orderCents = 9790

// orderID is the Guru transaction id of order i; readback parses it.
func orderID(i int) string { return fmt.Sprintf("bench-%07d", i) }

const warmupOrderID = "bench-warmup"

// guruSale is a Guru transaction webhook, shaped like
// pkg/inbound/testdata/guru/transaction-approved.json.
type guruSale struct {
	WebhookType  string         `json:"webhook_type"`
	APIToken     string         `json:"api_token"`
	ID           string         `json:"id"`
	Status       string         `json:"status"`
	Contact      guruContact    `json:"contact"`
	Payment      guruPayment    `json:"payment"`
	Product      guruItem       `json:"product"`
	Items        []guruItem     `json:"items"`
	Subscription map[string]any `json:"subscription"`
	Dates        map[string]any `json:"dates"`
	Invoice      map[string]any `json:"invoice"`
}

type guruContact struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Email       string `json:"email"`
	Doc         string `json:"doc"`
	PhoneLocal  string `json:"phone_local_code"`
	PhoneNumber string `json:"phone_number"`
}

type guruPayment struct {
	MarketplaceID   string     `json:"marketplace_id"`
	MarketplaceName string     `json:"marketplace_name"`
	Method          string     `json:"method"`
	Total           float64    `json:"total"`
	Gross           float64    `json:"gross"`
	Net             float64    `json:"net"`
	DiscountValue   float64    `json:"discount_value"`
	Currency        string     `json:"currency"`
	Coupon          guruCoupon `json:"coupon"`
	RefundReason    any        `json:"refund_reason"`
}

type guruCoupon struct {
	ID             string  `json:"id"`
	Code           string  `json:"coupon_code"`
	IncidenceType  string  `json:"incidence_type"`
	IncidenceValue float64 `json:"incidence_value"`
}

type guruItem struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Type  string  `json:"type,omitempty"`
	Qty   int     `json:"qty,omitempty"`
	Value float64 `json:"total_value,omitempty"`
}

// saleBody returns the body of one approved sale with the coupon code,
// signed the way Guru signs: api_token is the merchant's account token.
func saleBody(token, id, coupon string, i int, at time.Time) []byte {
	ts := at.UTC().Format(time.RFC3339)
	b, _ := json.Marshal(guruSale{
		WebhookType: "transaction", APIToken: token, ID: id, Status: "approved",
		Contact: guruContact{ID: fmt.Sprintf("contact-%07d", i), Name: "Cliente Bench",
			Email: fmt.Sprintf("cliente-%07d@example.net", i), Doc: "52998224725", PhoneLocal: "11", PhoneNumber: "987654321"},
		Payment: guruPayment{MarketplaceID: "ch_bench", MarketplaceName: provider.Guru, Method: "credit_card",
			Total: orderTotal, Gross: orderTotal, Net: 88.5, DiscountValue: 9.79, Currency: "BRL",
			Coupon: guruCoupon{ID: "coupon-bench", Code: coupon, IncidenceType: "percent", IncidenceValue: 10}},
		Product:      guruItem{ID: "p-1", Name: "Plano Mensal", Type: "plan", Value: orderTotal},
		Items:        []guruItem{{ID: "p-1", Name: "Plano Mensal", Qty: 1, Value: orderTotal}},
		Subscription: map[string]any{"id": fmt.Sprintf("sub_bench_%07d", i), "last_status": "active", "charged_times": 1},
		Dates:        map[string]any{"ordered_at": ts, "confirmed_at": ts, "updated_at": ts, "canceled_at": nil},
		Invoice:      map[string]any{"id": fmt.Sprintf("inv-%07d", i), "cycle": 1, "value": orderTotal, "status": "paid", "type": "charge"},
	})
	return b
}

// buildBodies returns the body of every order: order i uses member
// i % len(coupons).
func buildBodies(t *tenant, orders int) [][]byte {
	now := time.Now()
	bodies := make([][]byte, orders)
	for i := range bodies {
		bodies[i] = saleBody(t.GuruToken, orderID(i), t.Coupons[i%len(t.Coupons)], i, now)
	}
	return bodies
}

// sender posts bodies to one merchant's Guru receiver over keep-alive
// connections.
type sender struct {
	client *http.Client
	url    string
}

func newSender(base string, t *tenant, concurrency int) *sender {
	return &sender{client: keepAliveClient(concurrency), url: base + "/api/webhooks/" + provider.Guru + "/" + t.MerchantID.String()}
}

// keepAliveClient returns an HTTP client that keeps up to conns idle
// connections to one host, so that conns concurrent callers each reuse
// one.
func keepAliveClient(conns int) *http.Client {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: transport, Timeout: 30 * time.Second}
}

func (s *sender) close() { s.client.CloseIdleConnections() }

// post sends one body and returns "" when the ingest answered 200
// {"status":"accepted"}, else what it answered instead.
func (s *sender) post(ctx context.Context, body []byte) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return "request: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "convida-bench")
	res, err := s.client.Do(req)
	if err != nil {
		return "transport error"
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var a struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(raw, &a)
	if res.StatusCode != http.StatusOK || a.Status != "accepted" {
		return fmt.Sprintf("%d %s", res.StatusCode, a.Status)
	}
	return ""
}

// loadResult is what the send phase measured.
type loadResult struct {
	SentAt   []int64 // order i's send start, Unix nanoseconds
	AckNanos []int64 // order i's HTTP round trip
	Start    time.Time
	End      time.Time
	Failures map[string]int // what was answered instead of 200 accepted, counted
	Failed   []bool         // order i was not accepted
}

// accepted is the number of orders answered 200 accepted.
func (r *loadResult) accepted() int {
	n := 0
	for _, f := range r.Failed {
		if !f {
			n++
		}
	}
	return n
}

// sendAll posts every body with concurrency workers, each taking the next
// order, and returns when all are answered.
func sendAll(ctx context.Context, s *sender, bodies [][]byte, concurrency int, bar progressBar) *loadResult {
	r := &loadResult{SentAt: make([]int64, len(bodies)), AckNanos: make([]int64, len(bodies)),
		Failed: make([]bool, len(bodies)), Failures: map[string]int{}}
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	r.Start = time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(bodies) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				start := time.Now()
				r.SentAt[i] = start.UnixNano()
				failure := s.post(ctx, bodies[i])
				r.AckNanos[i] = int64(time.Since(start))
				if failure != "" {
					r.Failed[i] = true
					mu.Lock()
					r.Failures[failure]++
					mu.Unlock()
				}
				bar.Add(1)
			}
		}()
	}
	wg.Wait()
	r.End = time.Now()
	for i, at := range r.SentAt {
		if at == 0 { // never sent: ctx ended
			r.Failed[i] = true
			r.Failures["not sent"]++
		}
	}
	return r
}

// failureSummary renders the failures, most frequent first.
func failureSummary(m map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range m {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	var b bytes.Buffer
	for i, e := range all {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q×%d", e.k, e.n)
	}
	return b.String()
}
