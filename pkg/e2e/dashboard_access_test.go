package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// Two API replicas, each with its own connections, share one sign-in
// throttle: 40 wrong passwords for one e-mail sent at once, alternately to
// each, are answered 401 ten times and 429 thirty times.
func TestDashboardSignInThrottleAcrossReplicas(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true})
	m := testenv.MustMerchant(t, s.deps.Pool, s.deps.Box, merchant.Merchant{})
	email, _ := dashboardUser(t, s.deps.Pool, m.ID, merchant.RoleOwner)
	second := httptest.NewServer(program.APIRouter(s.secondDeps(t)))
	t.Cleanup(second.Close)
	replicas := []string{s.apiURL, second.URL}

	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := replicas[i%2]
			req, _ := http.NewRequest(http.MethodPost, base+"/dashboard/sign-in",
				strings.NewReader(url.Values{"email": {email}, "password": {fmt.Sprintf("wrong-%d", i)}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
			client := &http.Client{Transport: &http.Transport{}}
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
	close(start)
	wg.Wait()
	if statuses[http.StatusUnauthorized] != 10 || statuses[http.StatusTooManyRequests] != 30 {
		t.Errorf("40 wrong passwords across two replicas: %v, want 10 × 401 and 30 × 429", statuses)
	}
}

// The scheduler's leader purges expired dashboard sessions: a session past
// its 12 hours is deleted at the next tick, and its cookie signs in no
// more; a live one stays.
func TestSchedulerPurgesExpiredDashboardSessions(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true})
	m := testenv.MustMerchant(t, s.deps.Pool, s.deps.Box, merchant.Merchant{})
	email, password := dashboardUser(t, s.deps.Pool, m.ID, merchant.RoleOwner)
	owner := signedIn(t, s.apiURL, email, password)
	count := func() int {
		var n int
		if err := s.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sched := program.NewScheduler(s.deps)
	defer sched.Close()
	if err := sched.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d sessions after a tick now, want the live one", n)
	}
	sched.Now = func() time.Time { return s.clock.Now().Add(13 * time.Hour) }
	if err := sched.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d sessions after a tick 13 hours later, want 0", n)
	}
	if status, _ := owner.do(http.MethodGet, "/dashboard", nil); status != http.StatusSeeOther {
		t.Errorf("the purged session's cookie: %d, want 303 to sign in", status)
	}
}
