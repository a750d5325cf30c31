package e2e

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/testenv"
)

func TestDuplicateDeliveriesCreditOnce(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{}, 1500)
	outcomes := postDuplicates(t, s, tn, m.CouponCode, "redis")
	// The repeats in sequence find the key Redis remembered before the
	// first answer; concurrent ones may all be accepted.
	if outcomes["duplicate"] < 10 || outcomes["accepted"]+outcomes["duplicate"] != 20 {
		t.Errorf("answers = %v, want at least 10 duplicates and the rest accepted", outcomes)
	}
	wantCreditedOnce(t, s, tn, m.Email)
}

func TestBadInboundInput(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{}, 1500)
	good := guruSale(t, tn, "bad-1", m.CouponCode, 97.9, "approved")
	wrongToken := bytes.Replace(good, []byte(tn.guruToken), []byte(strings.Repeat("x", 40)), 1)
	yampi := yampiOrder(t, yampiPaid, 880123, m.CouponCode, 100)
	huge := append([]byte(`{"api_token":"`+tn.guruToken+`","pad":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	huge = append(huge, `"}`...)
	tests := []struct {
		name string
		post func() response
		want int
		code string
	}{
		{"wrong guru token", func() response { return s.postGuru(tn, wrongToken) }, 401, "unauthorized"},
		{"wrong yampi signature", func() response { return s.postYampi(tn, yampi, yampiSign("other-secret", yampi)) }, 401, "unauthorized"},
		{"missing yampi signature", func() response {
			return do(t, "POST", s.ingestURL+"/api/webhooks/yampi/"+tn.merchant.ID.String(), yampi, nil)
		}, 401, "unauthorized"},
		{"malformed body", func() response { return s.postGuru(tn, []byte(`{"api_token": `)) }, 422, "invalid_payload"},
		{"three decimals", func() response { return s.postGuru(tn, guruSale(t, tn, "bad-2", m.CouponCode, 97.999, "approved")) }, 422, "invalid_payload"},
		{"negative amount", func() response { return s.postGuru(tn, guruSale(t, tn, "bad-3", m.CouponCode, -1, "approved")) }, 422, "invalid_payload"},
		{"over 1 MiB", func() response { return s.postGuru(tn, huge) }, 413, "payload_too_large"},
		{"unknown merchant", func() response {
			return do(t, "POST", s.ingestURL+"/api/webhooks/guru/"+uuid.NewString(), good, nil)
		}, 404, "not_found"},
		{"malformed merchant id", func() response { return do(t, "POST", s.ingestURL+"/api/webhooks/guru/../x", good, nil) }, 404, ""},
		{"unknown provider", func() response {
			return do(t, "POST", s.ingestURL+"/api/webhooks/stripe/"+tn.merchant.ID.String(), good, nil)
		}, 404, "not_found"},
	}
	for _, tt := range tests {
		res := tt.post()
		if res.Status != tt.want {
			t.Errorf("%s: status = %d (%s), want %d", tt.name, res.Status, res.Body, tt.want)
			continue
		}
		if tt.code != "" {
			body := res.json(t)
			if got := body["error"].(map[string]any)["code"]; got != tt.code {
				t.Errorf("%s: code = %v, want %s", tt.name, got, tt.code)
			}
		}
	}
	// Every rejected delivery but the 404s is recorded (by the recorder,
	// from the broker), and the raw Guru token is not in them.
	s.waitRecords(tn, 7)
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND outcome = 'unprocessable' AND http_status = 422`, tn.merchant.ID); got != 3 {
		t.Errorf("unprocessable deliveries recorded = %d, want 3", got)
	}
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND outcome = 'unauthorized'`, tn.merchant.ID); got != 3 {
		t.Errorf("unauthorized deliveries recorded = %d, want 3", got)
	}
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND http_status = 413`, tn.merchant.ID); got != 1 {
		t.Errorf("oversized deliveries recorded = %d, want 1 (every delivery is kept, without its body)", got)
	}
	// Refused before authenticating (the 401s, the 413, the Guru body that
	// is not JSON): the digest and length of the body are kept; not for
	// the 422s of a delivery that authenticated.
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND body_sha256 IS NOT NULL AND body_length > 0`, tn.merchant.ID); got != 5 {
		t.Errorf("records with a body digest = %d, want 5", got)
	}
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE position($1::bytea in body) > 0`, []byte(tn.guruToken)); got != 0 {
		t.Errorf("%d stored bodies contain the Guru account token", got)
	}
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE position($1::bytea in body) > 0`, []byte(strings.Repeat("x", 40))); got != 0 {
		t.Errorf("%d stored bodies contain the wrong token sent (it may be another account's)", got)
	}
	time.Sleep(300 * time.Millisecond)
	if got := s.count(`SELECT count(*) FROM referrals`); got != 0 {
		t.Errorf("referrals = %d, want 0", got)
	}
	// The good one still goes through after all that.
	wantStatus(t, s.postGuru(tn, good), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1500, pending: 1500})
}

func TestUnattributedAndIgnored(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{}, 1500)
	noCoupon := fixture(t, guruApproved, map[string]any{"api_token": tn.guruToken, "id": "nc-1", "payment.coupon": nil})
	unknown := guruSale(t, tn, "uc-1", "NOPE-NOBODY-XXXX", 50, "approved")
	waiting := guruSale(t, tn, "w-1", m.CouponCode, 50, "waiting_payment")
	for _, body := range [][]byte{noCoupon, unknown, waiting} {
		res := s.postGuru(tn, body)
		wantStatus(t, res, 200)
	}
	s.waitRecords(tn, 3)
	outcomes := map[string]int{}
	rows, _ := s.deps.Pool.Query(context.Background(), `SELECT outcome FROM inbound_deliveries WHERE merchant_id = $1`, tn.merchant.ID)
	for rows.Next() {
		var o string
		_ = rows.Scan(&o)
		outcomes[o]++
	}
	rows.Close()
	if outcomes["unattributed"] != 2 || outcomes["ignored"] != 1 {
		t.Errorf("outcomes = %v, want 2 unattributed and 1 ignored", outcomes)
	}
	if got := s.balance(tn, m.Email); got != (wallet{}) {
		t.Errorf("balance = %+v, want zero", got)
	}
}

func TestIngestRateLimitAndEnvelopes(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{env: map[string]string{"INGEST_RATE_LIMIT": "3"}}, 100)
	limited := 0
	for i := 0; i < 10; i++ {
		res := s.postGuru(tn, guruSale(t, tn, "rl-"+strconv.Itoa(i), m.CouponCode, 10, "approved"))
		switch res.Status {
		case 200:
		case 429:
			limited++
			if res.Header.Get("Retry-After") == "" || res.json(t)["error"].(map[string]any)["code"] != "rate_limited" {
				t.Errorf("429 without Retry-After or code: %v %s", res.Header, res.Body)
			}
		default:
			t.Errorf("delivery %d = %d %s", i, res.Status, res.Body)
		}
	}
	if limited == 0 {
		t.Error("no delivery was limited above INGEST_RATE_LIMIT=3")
	}
	// Unknown routes and methods answer the JSON envelope.
	for _, tt := range []struct {
		method, path string
		status       int
	}{{"GET", "/nowhere", 404}, {"GET", "/api/webhooks/guru/" + tn.merchant.ID.String(), 405}} {
		res := do(t, tt.method, s.ingestURL+tt.path, nil, nil)
		if res.Status != tt.status || res.json(t)["error"] == nil {
			t.Errorf("%s %s = %d %s, want %d with the error envelope", tt.method, tt.path, res.Status, res.Body, tt.status)
		}
	}
}

// waitRecords waits until the recorder has written n delivery records of
// tn's merchant, and fails if it writes more.
func (s *stack) waitRecords(tn *tenant, n int) {
	s.t.Helper()
	query := `SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1`
	testenv.Eventually(s.t, 15*time.Second, strconv.Itoa(n)+" delivery records", func() bool { return s.count(query, tn.merchant.ID) >= n })
	time.Sleep(100 * time.Millisecond) // a record too many would arrive with the others
	if got := s.count(query, tn.merchant.ID); got != n {
		s.t.Errorf("recorded deliveries = %d, want %d", got, n)
	}
}
