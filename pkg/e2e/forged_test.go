package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/testenv"
)

// Forged traffic (issue 17): anyone who knows a merchant's webhook URL may
// post to it, and anyone may try API keys. These tests run with the
// failed-authentication limit at its default (AUTH_FAILURE_LIMIT 20 a
// minute, a burst of 10) and this host trusted as the operator's proxy:
// each request names its client in X-Forwarded-For, an address of the
// test's own (the suite shares one Redis, where the limit counts).

// failureBurst is the default burst of AUTH_FAILURE_LIMIT.
const failureBurst = 10

// forgedEnv is the stack's configuration: the limit on, 127.0.0.1 a proxy.
func forgedEnv() map[string]string {
	return map[string]string{"AUTH_FAILURE_LIMIT": "20", "TRUSTED_PROXIES": "127.0.0.1/32"}
}

// newClient returns a client address of the test's own: an IPv6 /64 of
// 2001:db8::/32 drawn at random (the limit counts an IPv6 client by its
// /64).
func newClient() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("2001:db8:%x:%x::1", binary.BigEndian.Uint16(b[:2]), binary.BigEndian.Uint16(b[2:]))
}

// postFrom posts a webhook as client, through the trusted proxy.
func (s *stack) postFrom(client, provider, merchantID string, body []byte, header map[string]string) response {
	s.t.Helper()
	h := map[string]string{"Content-Type": "application/json", "X-Forwarded-For": client}
	for k, v := range header {
		h[k] = v
	}
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/"+provider+"/"+merchantID, body, h)
}

// apiFrom calls the API with key as client, through the trusted proxy.
func (s *stack) apiFrom(client, key, path string) response {
	s.t.Helper()
	return do(s.t, http.MethodGet, s.apiURL+"/api/v1"+path, nil, map[string]string{"X-API-Key": key, "X-Forwarded-For": client})
}

// forgedGuru is a Guru sale with a token that is not the merchant's.
func forgedGuru(t testing.TB, tn *tenant, orderID string) []byte {
	return bytes.Replace(guruSale(t, tn, orderID, "LOJA-NOBODY", 97.9, "approved"), []byte(tn.guruToken), []byte(strings.Repeat("f", 40)), 1)
}

// wantRateLimited checks a 429 of the failed-authentication limit.
// spendAllowance sends failures (each answered 401) until the client is
// answered 429 rate_limited, and returns how many were answered 401. The
// limit is a rate (20 a minute after a burst of 10), so a client earns one
// more failure every 3 s while it spends the burst: on a loaded machine
// the burst may take long enough to earn one or two, and no more.
func spendAllowance(t testing.TB, what string, send func(i int) response) int {
	t.Helper()
	start := time.Now()
	for i := 0; ; i++ {
		res := send(i)
		if res.Status == http.StatusTooManyRequests {
			wantRateLimited(t, res)
			if i < failureBurst {
				t.Errorf("%s: refused after %d failures, want the burst of %d first", what, i, failureBurst)
			}
			return i
		}
		if res.Status != http.StatusUnauthorized {
			t.Fatalf("%s %d: %d %s, want 401", what, i+1, res.Status, res.Body)
		}
		if earned := int(time.Since(start)/(3*time.Second)) + 1; i+1 > failureBurst+earned {
			t.Fatalf("%s: %d failures answered 401 in %v, want 429 after the burst of %d and the %d earned meanwhile",
				what, i+1, time.Since(start).Round(time.Millisecond), failureBurst, earned)
		}
	}
}

func wantRateLimited(t testing.TB, res response) {
	t.Helper()
	wantStatus(t, res, http.StatusTooManyRequests)
	if res.Status != http.StatusTooManyRequests {
		return
	}
	if code := res.json(t)["error"].(map[string]any)["code"]; code != "rate_limited" {
		t.Errorf("429 code %v, want rate_limited", code)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("429 Retry-After %q, want whole seconds ≥ 1", res.Header.Get("Retry-After"))
	}
}

// TestFiftyForgedDeliveriesCostLittle: 50 forged Guru deliveries of 900 KB
// each (random, so incompressible) are each answered 401 and recorded, and
// the records (table, TOAST and indexes) grow by under 8 MiB: each keeps
// the digest and length of its body and at most 4 KiB of it. They come
// from 50 clients, so that the limit refuses none.
func TestFiftyForgedDeliveriesCostLittle(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{env: forgedEnv()})
	tn := s.newTenant(testenv.FixedCampaign(1500, 7))
	sizes := func() (table, database int64) {
		t.Helper()
		if err := s.deps.Pool.QueryRow(context.Background(),
			`SELECT pg_total_relation_size('inbound_deliveries'), pg_database_size(current_database())`).Scan(&table, &database); err != nil {
			t.Fatal(err)
		}
		return table, database
	}
	table0, db0 := sizes()

	const n, size = 50, 900_000
	digests := map[string]int{}
	for i := range n {
		pad := make([]byte, size*3/4)
		_, _ = rand.Read(pad)
		body := []byte(fmt.Sprintf(`{"api_token":%q,"webhook_type":"transaction","id":"forged-%d","pad":%q}`,
			strings.Repeat("f", 40), i, base64.StdEncoding.EncodeToString(pad)))
		sum := sha256.Sum256(body)
		digests[string(sum[:])] = len(body)
		res := s.postFrom(newClient(), "guru", tn.merchant.ID.String(), body, nil)
		if res.Status != http.StatusUnauthorized {
			t.Fatalf("forged delivery %d: %d %s, want 401", i, res.Status, res.Body)
		}
	}
	s.waitRecords(tn, n)
	table1, db1 := sizes()
	t.Logf("inbound_deliveries grew by %d KiB (the database by %d KiB) for %d forged deliveries of %d KB",
		(table1-table0)>>10, (db1-db0)>>10, n, size/1000)
	if growth := table1 - table0; growth >= 8<<20 {
		t.Errorf("inbound_deliveries grew by %.1f MiB, want under 8 MiB", float64(growth)/(1<<20))
	}

	rows, err := s.deps.Pool.Query(context.Background(), `SELECT body, body_length, body_sha256, headers->>'X-Convida-Body-Truncated'
FROM inbound_deliveries WHERE merchant_id = $1 AND outcome = 'unauthorized' AND http_status = 401`, tn.merchant.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var body, digest []byte
		var length int
		var truncated *string
		if err := rows.Scan(&body, &length, &digest, &truncated); err != nil {
			t.Fatal(err)
		}
		seen++
		want, ok := digests[string(digest)]
		switch {
		case !ok || length != want:
			t.Errorf("a record's digest %x and length %d match no body sent", digest, length)
		case len(body) > ingest.MaxRefusedBody:
			t.Errorf("a record keeps %d bytes of its body, want at most %d", len(body), ingest.MaxRefusedBody)
		case bytes.Contains(body, []byte(strings.Repeat("f", 40))):
			t.Error("a record keeps the forged token")
		case truncated == nil || *truncated != strconv.Itoa(want):
			t.Errorf("X-Convida-Body-Truncated = %v, want %d", truncated, want)
		}
	}
	if seen != n {
		t.Errorf("%d unauthorized records, want %d", seen, n)
	}
}

// TestIngestAuthenticationFailuresLookAlike: a wrong Guru token, a wrong
// or missing Yampi signature, and a delivery for a platform the merchant
// has not configured are answered with the same 401, so an outsider
// learns nothing of a merchant's platforms; the merchant's records keep
// each reason.
func TestIngestAuthenticationFailuresLookAlike(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{env: forgedEnv()})
	tn := s.newTenant(testenv.FixedCampaign(1500, 7))
	// One merchant with Guru only, one with Yampi only.
	guruOnly := testenv.MustTenant(t, s.deps.Pool, s.deps.Box, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: tn.guruToken})
	yampiOnly := testenv.MustTenant(t, s.deps.Pool, s.deps.Box, merchant.Merchant{},
		merchant.Integration{Provider: provider.Yampi, WebhookSecret: tn.yampiSecret})
	guru := guruSale(t, tn, "alike-1", "LOJA-NOBODY", 97.9, "approved")
	yampi := yampiOrder(t, yampiPaid, 770001, "LOJA-NOBODY", 100)
	signed := map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(tn.yampiSecret, yampi)}
	client := newClient()
	cases := []struct {
		name, provider, merchant string
		body                     []byte
		header                   map[string]string
	}{
		{"wrong guru token", "guru", tn.merchant.ID.String(), forgedGuru(t, tn, "alike-2"), nil},
		{"wrong yampi signature", "yampi", tn.merchant.ID.String(), yampi, map[string]string{"X-Yampi-Hmac-SHA256": yampiSign("other-secret", yampi)}},
		{"missing yampi signature", "yampi", tn.merchant.ID.String(), yampi, nil},
		{"guru not configured (the right yampi merchant)", "guru", yampiOnly.Merchant.ID.String(), guru, nil},
		{"yampi not configured (the right guru merchant)", "yampi", guruOnly.Merchant.ID.String(), yampi, signed},
	}
	const want = `{"error":{"code":"unauthorized","message":"` + ingest.UnauthenticatedMessage + `"}}`
	for _, c := range cases {
		res := s.postFrom(client, c.provider, c.merchant, c.body, c.header)
		if got := string(bytes.TrimSpace(res.Body)); res.Status != http.StatusUnauthorized || got != want {
			t.Errorf("%s: %d %s, want 401 %s", c.name, res.Status, got, want)
		}
	}
	// The merchants' records say why.
	testenv.Eventually(t, 15*time.Second, "the five records", func() bool {
		return s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = ANY($1) AND http_status = 401`,
			[]uuid.UUID{tn.merchant.ID, guruOnly.Merchant.ID, yampiOnly.Merchant.ID}) == 5
	})
	if n := s.count(`SELECT count(DISTINCT error) FROM inbound_deliveries WHERE merchant_id = ANY($1)`,
		[]uuid.UUID{tn.merchant.ID, guruOnly.Merchant.ID, yampiOnly.Merchant.ID}); n != 5 {
		t.Errorf("%d distinct reasons recorded, want 5 (the answer is one, the records tell them apart)", n)
	}
}

// TestFailedAuthenticationsAreLimitedPerClient: after its burst of failed
// authentications a client is answered 429 rate_limited with Retry-After,
// at the ingest (for that merchant) and at the API; another client (the
// platform, a merchant's server) is still served, and so are the right
// credentials from the blocked client while they are in memory. Blocked
// deliveries are recorded (rate_limited) like the other refusals, and the
// access log names each client as the proxy forwarded.
func TestFailedAuthenticationsAreLimitedPerClient(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{env: forgedEnv(), observe: true}, 1500)
	forger, platform := newClient(), newClient()
	id := tn.merchant.ID.String()

	t.Run("ingest", func(t *testing.T) {
		forged := spendAllowance(t, "forged delivery", func(i int) response {
			return s.postFrom(forger, "guru", id, forgedGuru(t, tn, "limited-"+strconv.Itoa(i)), nil)
		})
		wantRateLimited(t, s.postFrom(forger, "yampi", id, []byte(`{}`), nil))
		wantStatus(t, s.postFrom(platform, "guru", id, forgedGuru(t, tn, "limited-y"), nil), http.StatusUnauthorized)
		res := s.postFrom(platform, "guru", id, guruSale(t, tn, "limited-sale-1", m.CouponCode, 97.9, "approved"), nil)
		wantStatus(t, res, http.StatusOK)
		// The merchant's settings are in memory: the right token from the
		// blocked client is served without a database read.
		yampi := yampiOrder(t, yampiPaid, 770002, m.CouponCode, 100)
		wantStatus(t, s.postFrom(platform, "yampi", id, yampi, map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(tn.yampiSecret, yampi)}), http.StatusOK)
		yampi = yampiOrder(t, yampiPaid, 770003, m.CouponCode, 100)
		wantStatus(t, s.postFrom(forger, "yampi", id, yampi, map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(tn.yampiSecret, yampi)}), http.StatusOK)
		// The forger's refusals (its 401s and its two 429s), the
		// platform's one, the three sales.
		s.waitRecords(tn, forged+6)
		if n := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND outcome = 'rate_limited' AND http_status = 429`,
			tn.merchant.ID); n != 2 {
			t.Errorf("%d rate_limited records, want the forger's 2", n)
		}
	})

	t.Run("api", func(t *testing.T) {
		wantStatus(t, s.apiFrom(forger, tn.apiKey, "/campaigns"), http.StatusOK) // the key is in memory now
		spendAllowance(t, "wrong key", func(int) response { return s.apiFrom(forger, uuid.NewString(), "/campaigns") })
		wantStatus(t, s.apiFrom(platform, uuid.NewString(), "/campaigns"), http.StatusUnauthorized)
		wantStatus(t, s.apiFrom(platform, tn.apiKey, "/campaigns"), http.StatusOK)
		wantStatus(t, s.apiFrom(forger, tn.apiKey, "/campaigns"), http.StatusOK)
	})

	t.Run("access log", func(t *testing.T) {
		clients := map[any]bool{}
		for _, e := range s.logs.FilterMessage("request").All() {
			clients[e.ContextMap()["client_ip"]] = true
		}
		if !clients[forger] || !clients[platform] || clients["127.0.0.1"] {
			t.Errorf("the access log's client_ip values %v, want the forwarded %s and %s, never the proxy", clients, forger, platform)
		}
	})
}

// TestForwardedAddressNeedsATrustedProxy: without TRUSTED_PROXIES the
// X-Forwarded-For header is ignored, so a client cannot get a fresh
// allowance by writing another address in it. The test calls from a
// loopback address of its own (any 127/8 address is this host).
func TestForwardedAddressNeedsATrustedProxy(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{env: map[string]string{"AUTH_FAILURE_LIMIT": "20"}})
	tn := s.newTenant(testenv.FixedCampaign(1500, 7))
	var b [3]byte
	_, _ = rand.Read(b[:])
	local := fmt.Sprintf("127.%d.%d.%d", b[0], b[1], 1+b[2]%250)
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	post := func(i int) response {
		req, _ := http.NewRequest(http.MethodPost, s.ingestURL+"/api/webhooks/guru/"+tn.merchant.ID.String(),
			bytes.NewReader(forgedGuru(t, tn, "untrusted-"+strconv.Itoa(i))))
		req.Header.Set("X-Forwarded-For", newClient()) // a fresh address each time, ignored
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return response{Status: res.StatusCode, Body: body, Header: res.Header}
	}
	spendAllowance(t, "forged delivery from "+local+" with a fresh forwarded address each", post)
}

// TestBlockedClientCostsNoDatabaseWork: once a client is blocked, its
// requests are answered 429 while PostgreSQL is unreachable: its
// deliveries for the merchant whose token it got wrong (authenticated from
// memory when the settings are still there, refused unread otherwise), its
// guesses of merchant ids the cache has never
// seen, and an API key it has never presented — none of them can have
// been read. Another client's same requests need the database, and get 503
// meanwhile: without the block, the forger's would too.
func TestBlockedClientCostsNoDatabaseWork(t *testing.T) {
	t.Parallel()
	dbURL := testenv.MustDatabase(t)
	proxy := startProxy(t, hostOf(t, dbURL))
	s := startStack(t, stackOptions{env: forgedEnv(), databaseURL: withHost(t, dbURL, proxy.addr), noLedger: true, noRecorder: true})
	tn := s.newTenant(testenv.FixedCampaign(1500, 7))
	forger, other := newClient(), newClient()
	spendAllowance(t, "forged delivery", func(i int) response {
		return s.postFrom(forger, "guru", tn.merchant.ID.String(), forgedGuru(t, tn, "nodb-"+strconv.Itoa(i)), nil)
	})
	spendAllowance(t, "wrong key", func(int) response { return s.apiFrom(forger, uuid.NewString(), "/campaigns") })
	spendGuesses(t, s, forger)
	proxy.stop()

	unseenMerchant, unseenKey := uuid.NewString(), uuid.NewString()
	wantRateLimited(t, s.postFrom(forger, "guru", tn.merchant.ID.String(), forgedGuru(t, tn, "nodb-w"), nil))
	wantRateLimited(t, s.postFrom(forger, "guru", unseenMerchant, forgedGuru(t, tn, "nodb-x"), nil))
	wantRateLimited(t, s.apiFrom(forger, unseenKey, "/campaigns"))
	wantStatus(t, s.postFrom(other, "guru", unseenMerchant, forgedGuru(t, tn, "nodb-y"), nil), http.StatusServiceUnavailable)
	wantStatus(t, s.apiFrom(other, unseenKey, "/campaigns"), http.StatusServiceUnavailable)
}
