package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// TestLoadDashboardPagesMembers holds the Members and Creators pages,
// rendered through the API program's real router (session, user and
// merchant loaded from PostgreSQL, every read, the template), to issue
// 12's 100 ms of server time on the merchant of testenv.MustSeedScale
// (10,000 members, 100,000 referrals over 120 days, a creator profile per
// 25 members). Each page is served once to warm the cache, then
// membersPageRuns times; the median is held to the budget.
func TestLoadDashboardPagesMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: make test runs it alone, without -short")
	}
	s, seeded := mustSeededDashboardStack(t)
	cookie := signInCookie(t, s.apiURL, testenv.DashboardEmail, "pw")

	// The top member (the most referrals) and the creator with the most
	// sales: the heaviest member and creator pages.
	top := seeded.Members[0]
	var topCreator uuid.UUID
	if err := s.deps.Pool.QueryRow(t.Context(), `SELECT c.member_id FROM creator_profiles c
  JOIN referrals r ON r.merchant_id = c.merchant_id AND r.member_id = c.member_id
  WHERE c.merchant_id = $1 GROUP BY c.member_id ORDER BY count(*) DESC LIMIT 1`, seeded.Merchant.ID).Scan(&topCreator); err != nil {
		t.Fatal(err)
	}
	router := program.APIRouter(s.deps)
	const membersPageRuns = 9
	for _, c := range []struct {
		name, path string
		want       string // a text the page shows when it has the data
	}{
		{"Members", "/dashboard/members", `<a href="/dashboard/members/`},
		{"MembersSearchName", "/dashboard/members?q=mar", `<a href="/dashboard/members/`},
		{"MembersSearchEmail", "/dashboard/members?q=" + url.QueryEscape("sofia."), `<a href="/dashboard/members/`},
		{"MembersSearchNone", "/dashboard/members?q=zzz", `No members match.`},
		{"MembersBlocked", "/dashboard/members?status=blocked", `aria-current="page">Blocked`},
		{"MembersCampaign", "/dashboard/members?campaign=" + seeded.Campaign.ID.String() + "&status=active", `<a href="/dashboard/members/`},
		{"MembersDeep", "/dashboard/members?page=150", `<a href="/dashboard/members/`},
		{"MemberTop", "/dashboard/members/" + top.String(), `data-testid="wallet-available"`},
		{"MemberTopLedgerDeep", "/dashboard/members/" + top.String() + "/ledger?page=20", `<td class="num">`},
		{"Creators", "/dashboard/creators", `<a href="/dashboard/creators/`},
		{"CreatorTop", "/dashboard/creators/" + topCreator.String(), `data-testid="creator-token"`},
		{"CreatorTopDeep", "/dashboard/creators/" + topCreator.String() + "?page=3", `data-testid="creator-token"`},
	} {
		serve := func() time.Duration {
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			req.AddCookie(cookie)
			rec := httptest.NewRecorder()
			start := time.Now()
			router.ServeHTTP(rec, req)
			took := time.Since(start)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), c.want) {
				t.Fatalf("%s: GET %s = %d without %q: %.500s", c.name, c.path, rec.Code, c.want, rec.Body.String())
			}
			return took
		}
		serve()
		times := make([]time.Duration, membersPageRuns)
		for i := range times {
			times[i] = serve()
		}
		wantMedianUnder(t, c.name, times, testenv.OverviewBudget)
	}
}
