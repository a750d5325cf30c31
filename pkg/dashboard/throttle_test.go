package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// signInStatuses sends n sign-ins at once, the i-th for email(i) with a
// wrong password, each on its own connection, and counts the answers.
func (e *env) signInStatuses(n int, email func(i int) string) map[int]int {
	e.t.Helper()
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		ready    sync.WaitGroup
		done     sync.WaitGroup
		start    = make(chan struct{})
	)
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			form := url.Values{"email": {email(i)}, "password": {fmt.Sprintf("wrong-password-%d", i)}}.Encode()
			req, _ := http.NewRequest(http.MethodPost, e.url+"/dashboard/sign-in", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", e.url)
			client := &http.Client{Transport: &http.Transport{}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			ready.Done()
			<-start
			status := 0
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return statuses
}

// 40 wrong passwords at once: exactly 10 are compared (401), the other 30
// are throttled (429), for one e-mail and for one address with 40 e-mails.
func TestSignInThrottleHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		email func(e *env, i int) string
	}{
		{"one e-mail", func(e *env, _ int) string { return e.demo.DashboardEmail }},
		{"one address, different e-mails", func(_ *env, i int) string { return fmt.Sprintf("guess%d@loja-demo.example.com", i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			got := e.signInStatuses(40, func(i int) string { return tc.email(e, i) })
			if got[http.StatusUnauthorized] != 10 || got[http.StatusTooManyRequests] != 30 {
				t.Errorf("40 wrong passwords at once: answers %v, want 10 × 401 and 30 × 429", got)
			}
			r := e.do(e.client(), http.MethodPost, "/dashboard/sign-in", url.Values{"email": {e.demo.DashboardEmail}, "password": {e.demo.DashboardPassword}})
			if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.body, "Too many failed sign-in attempts") {
				t.Errorf("the right password afterwards: %d, want 429", r.StatusCode)
			}
		})
	}
}

// TRUSTED_PROXIES is the only way X-Forwarded-For is believed; the
// address it gives is counted, IPv6 per /64.
func TestThrottleBelievesForwardedAddressesOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	fail := func(e *env, i int, forwardedFor string) int {
		e.t.Helper()
		return e.do(e.client(), http.MethodPost, "/dashboard/sign-in",
			url.Values{"email": {fmt.Sprintf("guess%d@loja-demo.example.com", i)}, "password": {"wrong-password"}},
			"X-Forwarded-For", forwardedFor).StatusCode
	}
	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		e := newEnvWith(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.0/8, ::1"})
		for _, tc := range []struct{ name, client, same, other string }{
			{"IPv4", "203.0.113.7", "203.0.113.7", "203.0.113.8"},
			{"IPv6 per /64", "2001:db8:1:2::%d", "2001:db8:1:2:ffff::1", "2001:db8:1:3::1"},
		} {
			for i := range 10 {
				client := tc.client
				if strings.Contains(client, "%d") {
					client = fmt.Sprintf(client, i+1)
				}
				if got := fail(e, i, client); got != http.StatusUnauthorized {
					t.Fatalf("%s: failure %d from %s: %d, want 401", tc.name, i+1, client, got)
				}
			}
			if got := fail(e, 100, tc.same); got != http.StatusTooManyRequests {
				t.Errorf("%s: the 11th from %s: %d, want 429", tc.name, tc.same, got)
			}
			if got := fail(e, 101, tc.other); got != http.StatusUnauthorized {
				t.Errorf("%s: another client %s behind the same proxy: %d, want 401 (its own count)", tc.name, tc.other, got)
			}
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for i := range 10 {
			if got := fail(e, i, fmt.Sprintf("198.51.100.%d", i+1)); got != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d, want 401", i+1, got)
			}
		}
		if got := fail(e, 10, "198.51.100.99"); got != http.StatusTooManyRequests {
			t.Errorf("a forged X-Forwarded-For without TRUSTED_PROXIES: %d, want 429 (the peer's count)", got)
		}
	})
}

// The current password of a password change goes through the sign-in
// throttle: ten wrong ones, and the address is throttled for sign-in too.
func TestCurrentPasswordThrottled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	for i := range 10 {
		r := e.do(owner, http.MethodPost, "/dashboard/settings/password",
			url.Values{"current": {fmt.Sprintf("wrong-%d", i)}, "new": {"a-brand-new-secret-42"}})
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "The current password is wrong.") {
			t.Fatalf("wrong current password %d: %d", i+1, r.StatusCode)
		}
	}
	r := e.do(owner, http.MethodPost, "/dashboard/settings/password",
		url.Values{"current": {e.demo.DashboardPassword}, "new": {"a-brand-new-secret-42"}})
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.body, "Too many wrong passwords") {
		t.Errorf("the right current password after 10 wrong: %d, want 429 with an alert: %.300s", r.StatusCode, r.body)
	}
	if r := e.do(e.client(), http.MethodPost, "/dashboard/sign-in", url.Values{"email": {e.demo.DashboardEmail}, "password": {e.demo.DashboardPassword}}); r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("sign-in of the same e-mail: %d, want 429", r.StatusCode)
	}
}

// TestBlockedAddressCostsNoDatabaseWork: wrong passwords join the API's
// failed-authentication limit (AUTH_FAILURE_LIMIT); once an address has
// spent it, its sign-ins are answered 429 from memory, even with the
// database gone, while another address's still need the database.
func TestBlockedAddressCostsNoDatabaseWork(t *testing.T) {
	t.Parallel()
	// One failure a minute after the burst of 10: bcrypt under -race makes
	// the eleven tries last seconds, which the default of 20 a minute
	// would refill.
	e := newEnvWith(t, map[string]string{"AUTH_FAILURE_LIMIT": "1", "TRUSTED_PROXIES": "127.0.0.0/8, ::1"})
	// A /64 of this run's own: the limit's count is in Redis, shared by runs.
	run := time.Now().UnixNano() & 0xffff
	blocked := fmt.Sprintf("2001:db8:%x:%x::1", run, os.Getpid()&0xffff)
	other := fmt.Sprintf("2001:db8:%x:%x::1", run^1, os.Getpid()&0xffff) // another /64
	signIn := func(client string) int {
		return e.do(e.client(), http.MethodPost, "/dashboard/sign-in",
			url.Values{"email": {e.demo.DashboardEmail}, "password": {"wrong-password-1"}}, "X-Forwarded-For", client).StatusCode
	}
	for i := range 10 {
		if got := signIn(blocked); got != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i+1, got)
		}
	}
	if got := signIn(blocked); got != http.StatusTooManyRequests {
		t.Fatalf("the 11th: %d, want 429", got)
	}
	e.deps.Pool.Close() // from here on, a sign-in that needs the database fails
	if got := signIn(blocked); got != http.StatusTooManyRequests {
		t.Errorf("the blocked address with the database gone: %d, want 429 from memory", got)
	}
	if got := signIn(other); got == http.StatusTooManyRequests || got < 500 {
		t.Errorf("another address with the database gone: %d, want the database's failure (it is not blocked)", got)
	}
}
