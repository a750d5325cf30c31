package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

var memberLocation = regexp.MustCompile(`^/dashboard/members/([0-9a-f-]{36})$`)

// createMember creates a member through the dashboard's form as c and
// returns its id.
func (e *env) createMember(c *http.Client, name, email string, extra ...string) uuid.UUID {
	e.t.Helper()
	form := url.Values{"name": {name}, "email": {email}}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Set(extra[i], extra[i+1])
	}
	r := e.do(c, http.MethodPost, "/dashboard/members", form)
	m := memberLocation.FindStringSubmatch(r.Header.Get("Location"))
	if r.StatusCode != http.StatusSeeOther || m == nil {
		e.t.Fatalf("create member %s: %d to %q: %s", email, r.StatusCode, r.Header.Get("Location"), r.body)
	}
	return uuid.MustParse(m[1])
}

// campaignFor gives the merchant of creds a default campaign.
func (e *env) campaignFor(creds merchant.Credentials) uuid.UUID {
	c := testenv.MustCampaign(e.t, e.deps.Pool, uuid.MustParse(creds.MerchantID), testenv.FixedCampaign(979, 7))
	return c.ID
}

func TestMembersCreateListSearchAndPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.campaignFor(e.demo)
	owner := e.owner()

	if r := e.do(owner, http.MethodPost, "/dashboard/members", url.Values{"name": {"Ana"}, "email": {"not an email"}}); r.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, `role="alert"`) || !strings.Contains(r.body, "Email: enter a valid e-mail address.") {
		t.Errorf("a bad email: %d, want 422 with an alert: %s", r.StatusCode, r.body)
	}
	ana := e.createMember(owner, "Ana Souza", "ana@example.com", "document", "123.456.789-09")
	e.createMember(owner, "Bruno Lima", "bruno@example.com")
	if r := e.do(owner, http.MethodPost, "/dashboard/members", url.Values{"name": {"Ana 2"}, "email": {"ana@example.com"}}); r.StatusCode != http.StatusConflict {
		t.Errorf("the same email again: %d, want 409", r.StatusCode)
	}
	stored, err := postgres.NewMemberStore(e.deps.Pool).FindMemberByID(context.Background(), uuid.MustParse(e.demo.MerchantID), ana)
	if err != nil || stored.Document != "123.456.789-09" || stored.Status != member.StatusActive {
		t.Fatalf("the created member: %+v %v", stored, err)
	}

	list := e.do(owner, http.MethodGet, "/dashboard/members", nil)
	if !strings.Contains(list.body, `<a href="/dashboard/members/`+ana.String()+`">Ana Souza</a>`) || !strings.Contains(list.body, "Bruno Lima") {
		t.Errorf("the list does not link both members: %s", list.body)
	}
	// Prefix search of the name, the email and the code.
	for _, q := range []string{"ana", "ANA@EX", strings.ToLower(stored.CouponCode[:8])} {
		r := e.do(owner, http.MethodGet, "/dashboard/members?q="+url.QueryEscape(q), nil)
		if !strings.Contains(r.body, "Ana Souza") || strings.Contains(r.body, "Bruno Lima") {
			t.Errorf("search %q: want Ana alone", q)
		}
	}
	if r := e.do(owner, http.MethodGet, "/dashboard/members?status=nope", nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown status: %d, want 400", r.StatusCode)
	}
	if r := e.do(owner, http.MethodGet, "/dashboard/members?page=999999999", nil); r.StatusCode != http.StatusOK {
		t.Errorf("a page far past the last: %d, want 200", r.StatusCode)
	}

	// Block Bruno? Block Ana: the tabs count her as blocked.
	if r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/block", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("block: %d: %s", r.StatusCode, r.body)
	}
	page := e.do(owner, http.MethodGet, "/dashboard/members/"+ana.String(), nil)
	if !strings.Contains(page.body, "The member was blocked.") || !strings.Contains(page.body, "<dd>Blocked</dd>") || !strings.Contains(page.body, ">Unblock<") {
		t.Errorf("after blocking, the page: %s", page.body)
	}
	blocked := e.do(owner, http.MethodGet, "/dashboard/members?status=blocked", nil)
	if !strings.Contains(blocked.body, "Ana Souza") || strings.Contains(blocked.body, "Bruno Lima") ||
		!regexp.MustCompile(`Blocked <span class="count">1</span>`).MatchString(blocked.body) ||
		!regexp.MustCompile(`All <span class="count">2</span>`).MatchString(blocked.body) {
		t.Errorf("the blocked tab: %s", blocked.body)
	}
	e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/unblock", url.Values{})

	// Edit: the name changes, the email cannot.
	if r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String(), url.Values{"name": {"Ana S. Souza"},
		"email": {"other@example.com"}, "campaign": {stored.CampaignID.String()}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d: %s", r.StatusCode, r.body)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/members/"+ids.Format(ids.Member, ana), nil)
	if page.StatusCode != http.StatusOK || !strings.Contains(page.body, "<h1>Ana S. Souza</h1>") || !strings.Contains(page.body, "ana@example.com") ||
		!strings.Contains(page.body, `data-testid="wallet-available">R$0.00<`) || !strings.Contains(page.body, "<dd>Active</dd>") {
		t.Errorf("the member's page by its mem_ id after the edit: %d: %s", page.StatusCode, page.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String(), url.Values{"name": {"  "}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a blank name: %d, want 422", r.StatusCode)
	}

	// Provision coupon: asked again at both platforms.
	if r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/provision-coupon", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Errorf("provision coupon: %d", r.StatusCode)
	}
	if page := e.do(owner, http.MethodGet, "/dashboard/members/"+ana.String(), nil); !strings.Contains(page.body, "The coupon was requested at the platforms.") ||
		!strings.Contains(page.body, "<td>Guru</td>") || !strings.Contains(page.body, "<td>Yampi</td>") {
		t.Errorf("after provisioning: %s", page.body)
	}

	// Redeem with nothing available: refused with an alert, nothing debited.
	r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/redeem", url.Values{"amount": {"10,00"}, "type": {"store_credit"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `role="alert"`) {
		t.Errorf("a redemption without balance: %d, want 422 with an alert: %s", r.StatusCode, r.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/redeem", url.Values{"amount": {"abc"}, "type": {"store_credit"}}); r.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, "Enter an amount in reais") {
		t.Errorf("a bad amount: %d", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/redeem", url.Values{"amount": {"1"}, "type": {"subscription_discount"}}); r.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, "needs the subscription ID") {
		t.Errorf("a subscription discount without a subscription: %d", r.StatusCode)
	}

	// CSV: every member matching the filter, a header first.
	csvResp := e.do(owner, http.MethodGet, "/dashboard/members?format=csv&q=bru", nil)
	rows, err := csv.NewReader(strings.NewReader(csvResp.body)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][1] != "name" || rows[1][1] != "Bruno Lima" || !strings.HasPrefix(rows[1][0], "mem_") {
		t.Errorf("CSV of q=bru: %v %v", rows, err)
	}
	if !strings.HasPrefix(csvResp.Header.Get("Content-Type"), "text/csv") {
		t.Errorf("CSV Content-Type %q", csvResp.Header.Get("Content-Type"))
	}
}

func TestMembersWithoutCampaign(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(e.owner(), http.MethodPost, "/dashboard/members", url.Values{"name": {"Ana"}, "email": {"ana@example.com"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "create a campaign first") {
		t.Errorf("a member without any campaign: %d, want 422 saying why: %s", r.StatusCode, r.body)
	}
}

// A member joins, or moves to, only one of the merchant's own campaigns:
// another merchant's campaign is refused as none, whether its UUID or its
// camp_… id is posted.
func TestMembersCampaignOfAnotherMerchant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine := e.campaignFor(e.demo)
	theirs := e.campaignFor(e.register("Outra Loja", "https://outra.example.com", "OUTRA"))
	owner := e.owner()
	for _, camp := range []string{theirs.String(), ids.Format(ids.Campaign, theirs), "not-a-campaign"} {
		r := e.do(owner, http.MethodPost, "/dashboard/members", url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "campaign": {camp}})
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Choose one of your campaigns") {
			t.Errorf("a new member in campaign %q: %d, want 422 naming the campaign: %s", camp, r.StatusCode, r.body)
		}
	}
	ana := e.createMember(owner, "Ana", "ana@example.com", "campaign", ids.Format(ids.Campaign, mine))
	r := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String(), url.Values{"name": {"Ana"}, "campaign": {theirs.String()}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Choose one of your campaigns") {
		t.Errorf("moving a member to another merchant's campaign: %d, want 422: %s", r.StatusCode, r.body)
	}
	stored, err := postgres.NewMemberStore(e.deps.Pool).FindMemberByID(context.Background(), uuid.MustParse(e.demo.MerchantID), ana)
	if err != nil || stored.CampaignID != mine {
		t.Errorf("the member's campaign: %+v %v, want %s", stored, err, mine)
	}
}

// Another merchant's member (and creator) is not found on every page and
// action; a malformed id too; a viewer changes nothing.
func TestMembersAndCreatorsOtherMerchantViewer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.campaignFor(e.demo)
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	e.campaignFor(other)
	otherOwner := e.client()
	e.signIn(otherOwner, other.DashboardEmail, other.DashboardPassword)
	theirs := e.createMember(otherOwner, "Carla", "carla@example.com")
	if r := e.do(otherOwner, http.MethodPost, "/dashboard/creators", url.Values{"member_email": {"carla@example.com"}, "display_name": {"Carla"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("the other merchant's creator: %d: %s", r.StatusCode, r.body)
	}

	owner := e.owner()
	mine := e.createMember(owner, "Ana", "ana@example.com")
	for _, id := range []string{theirs.String(), ids.Format(ids.Member, theirs), "not-an-id", "mem_zz", uuid.NewString()} {
		for _, p := range []string{"/dashboard/members/" + id, "/dashboard/members/" + id + "/edit", "/dashboard/members/" + id + "/ledger", "/dashboard/creators/" + id,
			"/dashboard/creators/" + id + "/edit", "/dashboard/creators/" + id + "/rotate"} {
			if r := e.do(owner, http.MethodGet, p, nil); r.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", p, r.StatusCode)
			}
		}
		for _, p := range []string{"", "/block", "/unblock", "/redeem", "/provision-coupon"} {
			if r := e.do(owner, http.MethodPost, "/dashboard/members/"+id+p, url.Values{"name": {"x"}, "amount": {"1"}, "type": {"store_credit"}}); r.StatusCode != http.StatusNotFound {
				t.Errorf("POST members/%s%s: %d, want 404", id, p, r.StatusCode)
			}
		}
		for _, p := range []string{"", "/rotate"} {
			if r := e.do(owner, http.MethodPost, "/dashboard/creators/"+id+p, url.Values{"display_name": {"x"}}); r.StatusCode != http.StatusNotFound {
				t.Errorf("POST creators/%s%s: %d, want 404", id, p, r.StatusCode)
			}
		}
	}
	// Naming the other merchant's member by e-mail finds nobody.
	if r := e.do(owner, http.MethodPost, "/dashboard/creators", url.Values{"member_email": {"carla@example.com"}, "display_name": {"x"}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a creator for the other merchant's member: %d, want 422", r.StatusCode)
	}
	theirsNow, err := postgres.NewMemberStore(e.deps.Pool).FindMemberByID(context.Background(), uuid.MustParse(other.MerchantID), theirs)
	if err != nil || theirsNow.Status != member.StatusActive || theirsNow.Name != "Carla" {
		t.Errorf("the other merchant's member changed: %+v %v", theirsNow, err)
	}
	for _, p := range []string{"/dashboard/members", "/dashboard/creators", "/dashboard/members?format=csv"} {
		if r := e.do(owner, http.MethodGet, p, nil); strings.Contains(r.body, "carla@example.com") || strings.Contains(r.body, "Carla") {
			t.Errorf("%s shows the other merchant's member", p)
		}
	}

	viewer := e.viewer()
	if r := e.do(viewer, http.MethodGet, "/dashboard/members/"+mine.String(), nil); r.StatusCode != http.StatusOK || strings.Contains(r.body, ">Redeem<") {
		t.Errorf("a viewer's member page: %d (owner-only forms shown: %v)", r.StatusCode, strings.Contains(r.body, ">Redeem<"))
	}
	for _, p := range []string{"/dashboard/members", "/dashboard/members/" + mine.String(), "/dashboard/members/" + mine.String() + "/block",
		"/dashboard/members/" + mine.String() + "/redeem", "/dashboard/members/" + mine.String() + "/provision-coupon", "/dashboard/creators",
		"/dashboard/creators/" + mine.String() + "/rotate"} {
		r := e.do(viewer, http.MethodPost, p, url.Values{"name": {"V"}, "email": {"v@example.com"}, "member_email": {"ana@example.com"}, "display_name": {"V"}})
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer's POST %s: %d, want 403", p, r.StatusCode)
		}
	}
	if m, _ := postgres.NewMemberStore(e.deps.Pool).FindMemberByID(context.Background(), uuid.MustParse(e.demo.MerchantID), mine); m == nil || m.Status != member.StatusActive {
		t.Errorf("after the viewer's attempts the member is %+v", m)
	}
}

var tokenRe = regexp.MustCompile(`data-testid="creator-token">([^<]+)<`)

func TestCreatorsCreateEditRotate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.campaignFor(e.demo)
	owner := e.owner()
	ana := e.createMember(owner, "Ana Souza", "ana@example.com")
	if r := e.do(owner, http.MethodGet, "/dashboard/creators/new?member="+ana.String(), nil); !strings.Contains(r.body, `value="ana@example.com"`) {
		t.Errorf("the form from the member's page does not name her")
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/creators", url.Values{"member_email": {"ana@example.com"}, "display_name": {"Ana"},
		"instagram": {"not valid!"}}); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Instagram: at most 30 letters") {
		t.Errorf("a bad Instagram username: %d: %s", r.StatusCode, r.body)
	}
	r := e.do(owner, http.MethodPost, "/dashboard/creators", url.Values{"member_email": {"ana@example.com"}, "display_name": {"Ana Creates"},
		"niche": {"fitness"}, "instagram": {"@ana.creates"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/creators/"+ana.String() {
		t.Fatalf("create creator: %d to %q: %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	page := e.do(owner, http.MethodGet, "/dashboard/creators/"+ana.String(), nil)
	m := tokenRe.FindStringSubmatch(page.body)
	if m == nil || page.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the creator's page shows no token (or is cached): %s", page.body)
	}
	token := m[1]
	if got := e.publicCreatorStatus(token); got != http.StatusOK {
		t.Errorf("the token shown on the public API: %d, want 200", got)
	}
	list := e.do(owner, http.MethodGet, "/dashboard/creators", nil)
	if !strings.Contains(list.body, "Ana Creates") || !strings.Contains(list.body, "@ana.creates") || !strings.Contains(list.body, "fitness") || strings.Contains(list.body, token) {
		t.Errorf("the creators list (which shows no token): %s", list.body)
	}
	if member := e.do(owner, http.MethodGet, "/dashboard/members/"+ana.String(), nil); !strings.Contains(member.body, `<a href="/dashboard/creators/`+ana.String()+`">Ana Creates</a>`) {
		t.Errorf("the member's page does not link its creator profile")
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/creators/"+ana.String(), url.Values{"display_name": {"Ana C."}, "niche": {"yoga"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit creator: %d", r.StatusCode)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/creators/"+ana.String(), nil)
	if !strings.Contains(page.body, "<h1>Ana C.</h1>") || !strings.Contains(page.body, token) {
		t.Errorf("after the edit, the name changes and the token stays: %s", page.body)
	}
	if r := e.do(owner, http.MethodGet, "/dashboard/creators/"+ana.String()+"/rotate", nil); !strings.Contains(r.body, "Yes, rotate") {
		t.Errorf("the rotation asks no confirmation")
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/creators/"+ana.String()+"/rotate", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("rotate: %d", r.StatusCode)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/creators/"+ana.String(), nil)
	m = tokenRe.FindStringSubmatch(page.body)
	if m == nil || m[1] == token || !strings.Contains(page.body, "The token was rotated") {
		t.Fatalf("after rotating, the page shows %v", m)
	}
	if got := e.publicCreatorStatus(token); got != http.StatusNotFound {
		t.Errorf("the old token: %d, want 404", got)
	}
	if got := e.publicCreatorStatus(m[1]); got != http.StatusOK {
		t.Errorf("the new token: %d, want 200", got)
	}
	for _, entry := range e.logs.All() {
		for _, tok := range []string{token, m[1]} {
			if strings.Contains(entry.Message, tok) {
				t.Errorf("log line %q has a token", entry.Message)
			}
			for k, v := range entry.ContextMap() {
				if s, ok := v.(string); ok && strings.Contains(s, tok) {
					t.Errorf("log line %q field %s has a token", entry.Message, k)
				}
			}
		}
	}
}

func (e *env) publicCreatorStatus(token string) int {
	e.t.Helper()
	resp, err := http.Get(e.url + "/api/v1/creators/" + token)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
