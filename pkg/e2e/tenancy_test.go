package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/testenv"
)

// Fair tenancy at the ingest (issue 29): the platforms post every
// merchant's webhooks from the same few addresses, so the
// failed-authentication limit counts per address and merchant, and the
// merchant ids that do not exist per address, apart from every real
// merchant. These tests run the limit at its default (forgedEnv).

// rawPost posts body to the ingest as client, through the trusted proxy,
// and returns the status: for the goroutines of a stream, which must not
// stop the test themselves.
func (s *stack) rawPost(client, provider, merchantID string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, s.ingestURL+"/api/webhooks/"+provider+"/"+merchantID, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", client)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// TestWrongTokenOfOneMerchantSparesAnother is issue 29's acceptance: a
// stream of wrong-token Guru posts for merchant B from one address, for
// 40 s, leaves every correctly signed sale of merchant A from that address
// answered 200, while B's posts are refused (401, then 429 once the
// allowance is spent), and every refused post is recorded for B.
func TestWrongTokenOfOneMerchantSparesAnother(t *testing.T) {
	t.Parallel()
	s, a, ana := startWithAna(t, stackOptions{env: forgedEnv()}, 1500)
	b := s.newTenant(testenv.FixedCampaign(1500, 7))
	platform := newClient() // Guru's address, shared by every merchant
	const stream = 40 * time.Second

	wrong := make([][]byte, 100) // built here: a stream's goroutine must not stop the test
	for i := range wrong {
		wrong[i] = forgedGuru(t, b, "b-wrong-"+strconv.Itoa(i))
	}
	var mu sync.Mutex
	refused := map[int]int{} // B's answers by status
	stop := time.Now().Add(stream)
	var aborted atomic.Bool // A's sale was refused: the stream ends early
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(stop) && !aborted.Load(); i++ {
			status, err := s.rawPost(platform, "guru", b.merchant.ID.String(), wrong[i%len(wrong)])
			if err != nil {
				t.Errorf("merchant B's post %d: %v", i, err)
				return
			}
			mu.Lock()
			refused[status]++
			mu.Unlock()
			time.Sleep(40 * time.Millisecond)
		}
	}()

	sales := 0
	for time.Now().Before(stop) {
		res := s.postFrom(platform, "guru", a.merchant.ID.String(), guruSale(t, a, "a-sale-"+strconv.Itoa(sales), ana.CouponCode, 97.9, "approved"), nil)
		if res.Status != http.StatusOK {
			t.Errorf("merchant A's sale %d after %v of B's wrong tokens: %d %s, want 200",
				sales, (stream - time.Until(stop)).Round(time.Millisecond), res.Status, res.Body)
			aborted.Store(true)
			break
		}
		sales++
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
	if aborted.Load() {
		return
	}

	mu.Lock()
	defer mu.Unlock()
	posts := 0
	for status, n := range refused {
		posts += n
		if status != http.StatusUnauthorized && status != http.StatusTooManyRequests {
			t.Errorf("%d of merchant B's posts answered %d, want 401 or 429", n, status)
		}
	}
	t.Logf("in %v: %d sales of A answered 200; B's %d wrong-token posts answered %v", stream, sales, posts, refused)
	if refused[http.StatusTooManyRequests] == 0 {
		t.Errorf("none of merchant B's %d wrong-token posts was answered 429: the limit was not reached, the test proves nothing", posts)
	}
	// Every refused post is B's record: 401s and 429s alike.
	s.waitRecords(b, posts)
	if n := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND outcome = 'rate_limited' AND http_status = 429
  AND body_sha256 IS NOT NULL AND length(body) <= 4096`, b.merchant.ID); n != refused[http.StatusTooManyRequests] {
		t.Errorf("%d rate_limited records with their digest, want one per 429 (%d)", n, refused[http.StatusTooManyRequests])
	}
	s.waitRecords(a, sales)
}

// TestGuessedMerchantIdsSpendTheirOwnAllowance: an address that keeps
// posting to merchant ids that do not exist (a guesser, or a platform
// holding a mistyped URL) is answered 404 until its allowance of guesses is
// spent, then 429 for every id this process has not found, without a
// database read and without a record; the merchants it serves are not
// affected.
func TestGuessedMerchantIdsSpendTheirOwnAllowance(t *testing.T) {
	t.Parallel()
	s, a, ana := startWithAna(t, stackOptions{env: forgedEnv()}, 1500)
	platform := newClient()
	wantStatus(t, s.postFrom(platform, "guru", a.merchant.ID.String(), guruSale(t, a, "guess-0", ana.CouponCode, 97.9, "approved"), nil), http.StatusOK)
	spendGuesses(t, s, platform)
	wantRateLimited(t, s.postFrom(platform, "yampi", "not-a-merchant-id", []byte(`{}`), nil))
	for i := 1; i <= 3; i++ {
		wantStatus(t, s.postFrom(platform, "guru", a.merchant.ID.String(), guruSale(t, a, "guess-"+strconv.Itoa(i), ana.CouponCode, 97.9, "approved"), nil), http.StatusOK)
	}
	// A wrong token of a real merchant still counts on that merchant's own
	// allowance: 401, not the guesses' 429.
	wantStatus(t, s.postFrom(platform, "guru", a.merchant.ID.String(), forgedGuru(t, a, "guess-wrong"), nil), http.StatusUnauthorized)
	s.waitRecords(a, 5) // the four sales and the 401; nothing of the guesses
}

// spendGuesses posts to fresh merchant ids as client until it is answered
// 429, each before answered 404.
func spendGuesses(t testing.TB, s *stack, client string) {
	t.Helper()
	for i := 0; ; i++ {
		res := s.postFrom(client, "guru", uuid.NewString(), []byte(`{}`), nil)
		if res.Status == http.StatusTooManyRequests {
			wantRateLimited(t, res)
			if i < failureBurst {
				t.Errorf("guesses refused after %d, want the burst of %d first", i, failureBurst)
			}
			return
		}
		if res.Status != http.StatusNotFound {
			t.Fatalf("guess %d: %d %s, want 404", i+1, res.Status, res.Body)
		}
		if i > 4*failureBurst {
			t.Fatalf("%d guesses answered 404, want 429 after the burst of %d", i+1, failureBurst)
		}
	}
}
