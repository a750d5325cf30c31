package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
)

// Users per merchant: the same e-mail invited by two merchants, each
// with its own password; the merchant chooser; failed sign-ins in the
// trails of the e-mail's merchants, by nobody signed in.

const samEmail = "sam@example.com"

// signedInOwner returns a client signed in as c's owner.
func (e *env) signedInOwner(c merchant.Credentials) *http.Client {
	e.t.Helper()
	client := e.client()
	e.signIn(client, c.DashboardEmail, c.DashboardPassword)
	return client
}

// samAtTwoMerchants registers "Outra Loja" and has both merchants invite
// Sam, who accepts the demo's invitation with passwordDemo and the
// other's with passwordOther; it returns the other merchant.
func (e *env) samAtTwoMerchants(passwordDemo, passwordOther string) merchant.Credentials {
	e.t.Helper()
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	e.accept(e.inviteURL(e.owner(), samEmail, "viewer"), passwordDemo)
	e.accept(e.inviteURL(e.signedInOwner(other), samEmail, "owner"), passwordOther)
	return other
}

// events returns the merchant's audit events of action, newest first.
func (e *env) events(merchantID, action string) []audit.Event {
	e.t.Helper()
	list, _, err := postgres.NewAuditStore(e.deps.Pool).ListAuditEvents(context.Background(), uuid.MustParse(merchantID),
		audit.Filter{Action: action, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return list
}

// who is the footer of a page for c: "e-mail · merchant · role".
func (e *env) who(c *http.Client) string {
	e.t.Helper()
	r := e.do(c, http.MethodGet, "/dashboard/settings/password", nil)
	m := regexp.MustCompile(`<span class="who">([^<]*)</span>`).FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil {
		e.t.Fatalf("a signed-in page: %d, no footer", r.StatusCode)
	}
	return m[1]
}

var (
	uuidRe       = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	inviteLinkRx = regexp.MustCompile(`/dashboard/invite/[A-Za-z0-9_-]+`)
)

// An invitation to an address that is a user of another merchant is
// answered as one to a new address, and accepted: two merchants have the
// same e-mail as a user, each with its own password, and each password
// signs in to its own merchant.
func TestSameEmailInvitedByTwoMerchants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.accept(e.inviteURL(e.owner(), samEmail, "viewer"), "sam-password-at-demo")
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	owner := e.signedInOwner(other)

	// The same answer, word for word but for the address, the link and
	// the ids, for a new address and for Sam's.
	invite := func(email string) (int, string) {
		r := e.do(owner, http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {email}, "role": {"owner"}})
		body := strings.ReplaceAll(r.body, email, "EMAIL")
		return r.StatusCode, uuidRe.ReplaceAllString(inviteLinkRx.ReplaceAllString(body, "LINK"), "ID")
	}
	freshStatus, fresh := invite("nobody-yet@example.com")
	list, err := e.store.ListInvites(context.Background(), uuid.MustParse(other.MerchantID), e.clock.Now())
	if err != nil || len(list) != 1 {
		t.Fatalf("pending invitations: %v %v", list, err)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/invites/"+list[0].ID.String()+"/cancel", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", r.StatusCode)
	}
	e.do(owner, http.MethodGet, "/dashboard/settings/users", nil) // the flash is shown and gone
	samStatus, sam := invite(samEmail)
	if freshStatus != http.StatusOK || samStatus != freshStatus || sam != fresh {
		t.Errorf("inviting a user of another merchant: %d, a new address: %d; the answers differ:\n%s\n---\n%s", samStatus, freshStatus, sam, fresh)
	}
	link := inviteLinkRx.FindString(e.do(owner, http.MethodPost, "/dashboard/settings/users/invite",
		url.Values{"email": {"SAM@example.com"}, "role": {"owner"}}).body)
	if link == "" {
		t.Fatal("no link for a second invitation of Sam in another case")
	}
	samOther := e.accept(e.url+link, "sam-password-at-outra")
	if got := e.who(samOther); got != "SAM@example.com · Outra Loja · Owner" {
		t.Errorf("Sam after accepting the other merchant's invitation: %q", got)
	}

	for _, tc := range []struct{ password, who string }{
		{"sam-password-at-demo", samEmail + " · Loja Demo · Viewer"},
		{"sam-password-at-outra", "SAM@example.com · Outra Loja · Owner"},
	} {
		c := e.client()
		e.signIn(c, samEmail, tc.password)
		if got := e.who(c); got != tc.who {
			t.Errorf("signed in with %s: %q, want %q", tc.password, got, tc.who)
		}
	}
	// Each merchant's users page lists its own Sam once, and nothing of
	// the other merchant.
	for _, c := range []struct {
		client *http.Client
		not    string
	}{{e.owner(), "Outra Loja"}, {owner, "Loja Demo"}} {
		body := e.do(c.client, http.MethodGet, "/dashboard/settings/users", nil).body
		if n := strings.Count(strings.ToLower(body), `aria-label="role of sam@example.com"`); n != 1 || strings.Contains(body, c.not) {
			t.Errorf("a users page lists Sam %d times (want 1) or names %s", n, c.not)
		}
	}
}

// A password right for two merchants goes to the chooser, which lists
// them and signs in to the one chosen (recorded in its trail only); a
// merchant not offered is not found; the offer lasts ten minutes.
func TestMerchantChooser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.samAtTwoMerchants("sam-same-password", "sam-same-password")
	c := e.client()
	r := e.do(c, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {samEmail}, "password": {"sam-same-password"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in/merchant" {
		t.Fatalf("sign-in with a password of two merchants: %d to %q, want 303 to the chooser", r.StatusCode, r.Header.Get("Location"))
	}
	if r := e.do(c, http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("the overview before choosing: %d to %q, want the sign-in page", r.StatusCode, r.Header.Get("Location"))
	}
	page := e.do(c, http.MethodGet, "/dashboard/sign-in/merchant", nil)
	for _, want := range []string{"<h1>Choose a store</h1>", `value="` + e.demo.MerchantID + `">Loja Demo</button>`,
		`value="` + other.MerchantID + `">Outra Loja</button>`} {
		if page.StatusCode != http.StatusOK || !strings.Contains(page.body, want) {
			t.Errorf("the chooser: %d, lacks %s", page.StatusCode, want)
		}
	}
	if r := e.do(c, http.MethodPost, "/dashboard/sign-in/merchant", url.Values{"merchant": {uuid.NewString()}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("choosing a merchant not offered: %d, want 404", r.StatusCode)
	}
	before := len(e.events(e.demo.MerchantID, audit.SignInSucceeded))
	r = e.do(c, http.MethodPost, "/dashboard/sign-in/merchant", url.Values{"merchant": {other.MerchantID}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard" {
		t.Fatalf("choosing Outra Loja: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if got := e.who(c); got != samEmail+" · Outra Loja · Owner" {
		t.Errorf("after choosing: %q", got)
	}
	var sams []audit.Event
	for _, ev := range e.events(other.MerchantID, audit.SignInSucceeded) {
		if ev.Actor.Label == samEmail {
			sams = append(sams, ev)
		}
	}
	if len(sams) != 2 || sams[0].Details["via"] != nil || sams[1].Details["via"] != "invitation" {
		t.Errorf("Sam's sign-ins at the chosen merchant: %+v, want the invitation's and this one", sams)
	}
	if after := len(e.events(e.demo.MerchantID, audit.SignInSucceeded)); after != before {
		t.Errorf("the merchant not chosen recorded %d sign-ins", after-before)
	}
	if r := e.do(c, http.MethodGet, "/dashboard/sign-in/merchant", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard" {
		t.Errorf("the chooser once signed in: %d to %q, want the overview", r.StatusCode, r.Header.Get("Location"))
	}

	late := e.client()
	e.do(late, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {samEmail}, "password": {"sam-same-password"}})
	e.clock.Advance(11 * time.Minute)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		r := e.do(late, method, "/dashboard/sign-in/merchant", url.Values{"merchant": {e.demo.MerchantID}})
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
			t.Errorf("%s the chooser 11 minutes later: %d to %q, want the sign-in page", method, r.StatusCode, r.Header.Get("Location"))
		}
	}
	if r := e.do(e.client(), http.MethodGet, "/dashboard/sign-in/merchant", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("the chooser without a sign-in: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
}

// A wrong password is recorded in the trail of every merchant of the
// e-mail, by nobody signed in, from the client's address, with the
// e-mail's SHA-256 and never the e-mail; a password right at one merchant
// is no failure at the other; an e-mail of no user is in no trail, only
// in the operator's log, hashed.
func TestFailedSignInsRecordedAnonymously(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.0/8, ::1"})
	other := e.samAtTwoMerchants("sam-password-at-demo", "sam-password-at-outra")
	signIn := func(email, password string) int {
		return e.do(e.client(), http.MethodPost, "/dashboard/sign-in", url.Values{"email": {email}, "password": {password}},
			"X-Forwarded-For", "203.0.113.5").StatusCode
	}
	if got := signIn(" Sam@Example.com", "not-sams-password"); got != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", got)
	}
	want := merchant.EmailDigest(samEmail)
	for _, m := range []string{e.demo.MerchantID, other.MerchantID} {
		got := e.events(m, audit.SignInFailed)
		if len(got) != 1 {
			t.Fatalf("merchant %s: %d failed sign-ins, want 1", m, len(got))
		}
		ev := got[0]
		sam, err := e.store.FindUserByEmail(context.Background(), uuid.MustParse(m), samEmail)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Actor != audit.Anonymous || ev.IP != "203.0.113.5" || ev.Details["email_sha256"] != want ||
			ev.Target != (audit.Target{Type: audit.TargetDashboardUser, ID: sam.ID.String()}) {
			t.Errorf("merchant %s's failed sign-in: %+v, want by anonymous from 203.0.113.5 on its Sam with the digest %s", m, ev, want)
		}
	}
	page := e.do(e.owner(), http.MethodGet, "/dashboard/settings/activity?action=sign_in.failed", nil).body
	for _, s := range []string{"<td>Not signed in</td>", "User " + samEmail, "Email tried (SHA-256): " + want, "203.0.113.5"} {
		if !strings.Contains(page, s) {
			t.Errorf("the Activity page lacks %q", s)
		}
	}

	if got := signIn(samEmail, "sam-password-at-demo"); got != http.StatusSeeOther {
		t.Fatalf("the demo's password: %d", got)
	}
	if got := signIn("nobody@example.com", "a-wrong-password"); got != http.StatusUnauthorized {
		t.Fatalf("an e-mail of no user: %d", got)
	}
	for _, m := range []string{e.demo.MerchantID, other.MerchantID} {
		if got := e.events(m, audit.SignInFailed); len(got) != 1 {
			t.Errorf("merchant %s after a right password and an unknown e-mail: %d failed sign-ins, want still 1", m, len(got))
		}
	}
	logged := map[string]bool{}
	for _, entry := range e.logs.All() {
		for k, v := range entry.ContextMap() {
			if s, _ := v.(string); strings.Contains(strings.ToLower(s), "@example.com") {
				t.Errorf("log line %q field %s names an e-mail: %s", entry.Message, k, s)
			}
		}
		if entry.Message == "dashboard sign-in failed" && entry.ContextMap()["client_ip"] == "203.0.113.5" {
			logged[entry.ContextMap()["email_sha256"].(string)] = true
		}
	}
	if !logged[want] || !logged[merchant.EmailDigest("nobody@example.com")] || len(logged) != 2 {
		t.Errorf("the operator's log lines of failed sign-ins: %v, want Sam's and nobody's digests", logged)
	}
}

// The e-mail's own bound (50 failures in a day, from any addresses) does
// not lock its user out: the right password from an address that has not
// failed on it is checked and signs in, while an address that failed on
// it within the hour is refused, even with the right password, until the
// hour has passed; a clean address gets one guess.
func TestGuessedEmailDoesNotLockItsUserOut(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.0/8, ::1"})
	signIn := func(password, address string) int {
		return e.do(e.client(), http.MethodPost, "/dashboard/sign-in",
			url.Values{"email": {e.demo.DashboardEmail}, "password": {password}}, "X-Forwarded-For", address).StatusCode
	}
	// 50 wrong passwords, each from its own address, four at a time.
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		wrong  int
		tokens = make(chan struct{}, 4)
	)
	for i := range 50 {
		wg.Go(func() {
			tokens <- struct{}{}
			defer func() { <-tokens }()
			got := signIn("a-wrong-guess-1", fmt.Sprintf("198.51.100.%d", i+1))
			mu.Lock()
			defer mu.Unlock()
			if got == http.StatusUnauthorized {
				wrong++
			}
		})
	}
	wg.Wait()
	if wrong != 50 {
		t.Fatalf("50 wrong passwords from 50 addresses: %d answered 401, want 50", wrong)
	}
	for _, tc := range []struct {
		what, password, address string
		want                    int
	}{
		{"a wrong password from an address that failed on it", "another-guess-2", "198.51.100.1", http.StatusTooManyRequests},
		{"the right password from an address that failed on it", e.demo.DashboardPassword, "198.51.100.2", http.StatusTooManyRequests},
		{"the right password from a clean address", e.demo.DashboardPassword, "203.0.113.77", http.StatusSeeOther},
		{"a guess from a clean address", "another-guess-3", "203.0.113.78", http.StatusUnauthorized},
		{"a second guess from it", "another-guess-4", "203.0.113.78", http.StatusTooManyRequests},
		{"then the right password from it", e.demo.DashboardPassword, "203.0.113.78", http.StatusTooManyRequests},
	} {
		if got := signIn(tc.password, tc.address); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.want)
		}
	}
	e.clock.Advance(61 * time.Minute)
	if got := signIn(e.demo.DashboardPassword, "198.51.100.2"); got != http.StatusSeeOther {
		t.Errorf("the right password from an address whose failure is over an hour old: %d, want 303", got)
	}
}
