package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/testenv"
)

// forwardedFor sends every request as from the proxy (the loopback peer,
// trusted by the stack's TRUSTED_PROXIES) on behalf of client.
type forwardedFor struct{ client string }

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.client)
	return http.DefaultTransport.RoundTrip(r)
}

// dashboardFrom is a dashboard client, not yet signed in, whose requests
// come from client behind the trusted proxy.
func dashboardFrom(t testing.TB, base, client string) *dashboardClient {
	jar, _ := cookiejar.New(nil)
	return &dashboardClient{t: t, base: base, c: &http.Client{Jar: jar, Transport: forwardedFor{client},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// auditTrail reads a merchant's trail through the API, as its key would.
type auditTrail struct {
	t    *testing.T
	s    *stack
	key  string
	seen int
}

// auditEvent is an audit event as the API shows it.
type auditEvent struct {
	ID      string         `json:"id"`
	Action  string         `json:"action"`
	Actor   map[string]any `json:"actor"`
	Target  map[string]any `json:"target"`
	IP      any            `json:"ip"`
	Details map[string]any `json:"details"`
}

// list returns the whole trail, newest first, and the raw answer.
func (tr *auditTrail) list() ([]auditEvent, string) {
	tr.t.Helper()
	res := do(tr.t, http.MethodGet, tr.s.apiURL+"/api/v1/audit-events?per_page=100", nil,
		map[string]string{"X-API-Key": tr.key, "X-Forwarded-For": "203.0.113.99"})
	if res.Status != http.StatusOK {
		tr.t.Fatalf("GET /audit-events: %d %s", res.Status, res.Body)
	}
	var body struct {
		Data []auditEvent `json:"data"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		tr.t.Fatal(err)
	}
	return body.Data, string(res.Body)
}

// want checks that the events written since the last call are exactly
// want, oldest first: action, actor (type, id, label), target, address
// and details (none when nil).
func (tr *auditTrail) want(what string, want ...auditEvent) {
	tr.t.Helper()
	all, _ := tr.list()
	fresh := all[:len(all)-tr.seen]
	tr.seen = len(all)
	if len(fresh) != len(want) {
		tr.t.Errorf("%s: %d new events %+v, want %d", what, len(fresh), fresh, len(want))
		return
	}
	for i, w := range want {
		got := fresh[len(fresh)-1-i]
		if w.Details == nil {
			w.Details = map[string]any{}
		}
		ok := got.Action == w.Action && jsonSame(got.Actor, w.Actor) && jsonSame(got.Target, w.Target) && got.IP == w.IP &&
			jsonSame(got.Details, w.Details) && strings.HasPrefix(got.ID, "aud_")
		if !ok {
			tr.t.Errorf("%s: event %+v,\nwant %+v", what, got, w)
		}
	}
}

func jsonSame(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

func actor(typ, id, label string) map[string]any {
	return map[string]any{"type": typ, "id": id, "label": label}
}

func target(typ, id string) map[string]any { return map[string]any{"type": typ, "id": id} }

var (
	newKeyRe     = regexp.MustCompile(`data-testid="new-api-key"[^>]*>([^<]+)<`)
	inviteLinkRe = regexp.MustCompile(`data-testid="invite-link"[^>]*>([^<]+)<`)
)

// TestAuditTrail performs every action of the trail but a member's
// erasure and the personal-data actions (TestAuditTrailOfPersonalData),
// through the API and the dashboard as their users would, from
// addresses behind a trusted proxy, and reads the trail after each: each
// leaves exactly its event, by the right actor, on the right target, from
// the client's address; no key, secret, token, password or invitation
// link is in the trail the API answers or the Activity page shows; a
// failed sign-in is by an anonymous client with the e-mail hashed; an
// e-mail of no user and a throttled attempt leave nothing; another
// merchant's key reads none of it.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true, env: map[string]string{"TRUSTED_PROXIES": "127.0.0.1"}})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	other := s.newTenant(testenv.FixedCampaign(1000, 7))
	ctx := context.Background()
	ownerEmail, ownerPassword := dashboardUser(t, s.deps.Pool, tn.merchant.ID, merchant.RoleOwner)
	// The set-up (the tenant's integrations, key and owner) is the system's.
	tr := &auditTrail{t: t, s: s, key: tn.apiKey}
	setup, _ := tr.list()
	tr.seen = len(setup)
	for _, e := range setup {
		if e.Actor["type"] != audit.ActorSystem {
			t.Errorf("a set-up event not by the system: %+v", e)
		}
	}

	var keyID, ownerID string
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM api_keys WHERE merchant_id = $1`, tn.merchant.ID).Scan(&keyID); err != nil {
		t.Fatal(err)
	}
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM dashboard_users WHERE email = $1`, ownerEmail).Scan(&ownerID); err != nil {
		t.Fatal(err)
	}
	byKey := actor(audit.ActorAPIKey, keyID, tn.apiKey[:8])
	byOwner := actor(audit.ActorDashboardUser, ownerID, ownerEmail)
	const apiIP, ownerIP, inviteeIP = "203.0.113.10", "203.0.113.20", "203.0.113.30"
	api := func(method, path string, body any) map[string]any {
		t.Helper()
		var raw []byte
		if body != nil {
			raw, _ = json.Marshal(body)
		}
		res := do(t, method, s.apiURL+path, raw, map[string]string{"X-API-Key": tn.apiKey, "Content-Type": "application/json",
			"X-Forwarded-For": apiIP})
		if res.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
		}
		if len(res.Body) == 0 {
			return nil
		}
		return res.json(t)
	}
	secrets := []string{tn.apiKey, ownerPassword, tn.guruToken, tn.yampiSecret}

	// Through the API, by the key.
	accountToken, userToken := "guru-account-"+strings.Repeat("a", 24), "guru-user-"+strings.Repeat("u", 24)
	secrets = append(secrets, accountToken, userToken)
	api(http.MethodPut, "/api/v1/integrations/guru", map[string]any{"account_token": accountToken, "user_token": userToken})
	tr.want("PUT an integration", auditEvent{Action: audit.IntegrationUpdated, Actor: byKey, Target: target("integration", "guru"), IP: apiIP,
		Details: map[string]any{"fields": []string{"account_token", "user_token"}}})
	hook := api(http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://erp.example.com/hooks/convida", "events": []string{"referral.approved"}})["data"].(map[string]any)
	hookID := hook["id"].(string)
	secrets = append(secrets, hook["secret"].(string))
	tr.want("create a webhook", auditEvent{Action: audit.WebhookEndpointCreated, Actor: byKey, Target: target("webhook_endpoint", hookID), IP: apiIP})
	api(http.MethodPatch, "/v1/webhooks/"+hookID, map[string]any{"events": []string{"referral.approved", "referral.rejected"}, "is_active": false})
	tr.want("update the webhook", auditEvent{Action: audit.WebhookEndpointUpdated, Actor: byKey, Target: target("webhook_endpoint", hookID), IP: apiIP,
		Details: map[string]any{"fields": []string{"events", "is_active"}}})
	rotated := api(http.MethodPost, "/v1/webhooks/"+hookID+"/rotate-secret", nil)["data"].(map[string]any)
	secrets = append(secrets, rotated["secret"].(string))
	tr.want("rotate its secret", auditEvent{Action: audit.WebhookEndpointSecretRotated, Actor: byKey, Target: target("webhook_endpoint", hookID), IP: apiIP})
	api(http.MethodDelete, "/v1/webhooks/"+hookID, nil)
	tr.want("delete it", auditEvent{Action: audit.WebhookEndpointDeleted, Actor: byKey, Target: target("webhook_endpoint", hookID), IP: apiIP})
	campID := ids.Format(ids.Campaign, tn.campaign.ID)
	api(http.MethodPatch, "/api/v1/campaigns/"+campID, map[string]any{"name": "Indique e ganhe", "reward_value": 1500, "warranty_days": 7})
	tr.want("PATCH the campaign", auditEvent{Action: audit.CampaignUpdated, Actor: byKey, Target: target("campaign", campID), IP: apiIP,
		Details: map[string]any{"fields": []string{"name", "reward_value"}}})

	// Through the dashboard, by the owner.
	owner := dashboardFrom(t, s.apiURL, ownerIP)
	wrong := "not-the-password-" + strings.Repeat("w", 8)
	secrets = append(secrets, wrong)
	if status, _ := owner.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {ownerEmail}, "password": {wrong}}); status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", status)
	}
	// A wrong password is nobody's own action: an anonymous client, the
	// e-mail tried by its SHA-256.
	anonymous := map[string]any{"type": audit.ActorAnonymous, "id": nil, "label": nil}
	tried := map[string]any{"email_sha256": merchant.EmailDigest(ownerEmail)}
	tr.want("a wrong password", auditEvent{Action: audit.SignInFailed, Actor: anonymous, Target: target("dashboard_user", ownerID), IP: ownerIP,
		Details: tried})
	if status, _ := owner.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}); status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", status)
	}
	tr.want("a sign-in", auditEvent{Action: audit.SignInSucceeded, Actor: byOwner, Target: target("dashboard_user", ownerID), IP: ownerIP})
	newPassword := "a-new-long-password-" + strings.Repeat("p", 6)
	secrets = append(secrets, newPassword)
	if status, _ := owner.do(http.MethodPost, "/dashboard/settings/password", url.Values{"current": {ownerPassword}, "new": {newPassword}}); status != http.StatusSeeOther {
		t.Fatalf("change the password: %d", status)
	}
	tr.want("a password change", auditEvent{Action: audit.PasswordChanged, Actor: byOwner, Target: target("dashboard_user", ownerID), IP: ownerIP})

	_, page := owner.do(http.MethodPost, "/dashboard/settings/api-keys", url.Values{})
	m := newKeyRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no new key on the page")
	}
	secrets = append(secrets, m[1])
	var newKeyID string
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM api_keys WHERE merchant_id = $1 AND prefix = $2`, tn.merchant.ID, m[1][:8]).Scan(&newKeyID); err != nil {
		t.Fatal(err)
	}
	tr.want("a key generated", auditEvent{Action: audit.APIKeyCreated, Actor: byOwner, Target: target("api_key", newKeyID), IP: ownerIP})
	if status, _ := owner.do(http.MethodPost, "/dashboard/settings/api-keys/"+newKeyID+"/revoke", url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", status)
	}
	tr.want("a key revoked", auditEvent{Action: audit.APIKeyRevoked, Actor: byOwner, Target: target("api_key", newKeyID), IP: ownerIP})

	inviteeEmail := "bia-" + tn.merchant.ID.String()[:8] + "@loja.example.com"
	_, page = owner.do(http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {inviteeEmail}, "role": {"viewer"}})
	m = inviteLinkRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no invitation link on the page")
	}
	link := m[1]
	token := link[strings.LastIndex(link, "/")+1:]
	secrets = append(secrets, token)
	var inviteID string
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM dashboard_invites WHERE email = $1`, inviteeEmail).Scan(&inviteID); err != nil {
		t.Fatal(err)
	}
	tr.want("an invitation", auditEvent{Action: audit.DashboardUserInvited, Actor: byOwner, Target: target("dashboard_user", inviteID), IP: ownerIP,
		Details: map[string]any{"email": inviteeEmail, "role": "viewer"}})
	// A second invitation, cancelled.
	owner.do(http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {"caio@loja.example.com"}, "role": {"owner"}})
	var dropID string
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM dashboard_invites WHERE merchant_id = $1 AND email = 'caio@loja.example.com'`,
		tn.merchant.ID).Scan(&dropID); err != nil {
		t.Fatal(err)
	}
	tr.want("a second invitation", auditEvent{Action: audit.DashboardUserInvited, Actor: byOwner, Target: target("dashboard_user", dropID),
		IP: ownerIP, Details: map[string]any{"email": "caio@loja.example.com", "role": "owner"}})
	if status, _ := owner.do(http.MethodPost, "/dashboard/settings/users/invites/"+dropID+"/cancel", url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("cancel the invitation: %d", status)
	}
	tr.want("an invitation cancelled", auditEvent{Action: audit.DashboardUserInvitationCancelled, Actor: byOwner,
		Target: target("dashboard_user", dropID), IP: ownerIP, Details: map[string]any{"email": "caio@loja.example.com", "role": "owner"}})
	invitee := dashboardFrom(t, s.apiURL, inviteeIP)
	inviteePassword := "bia-chose-this-" + strings.Repeat("b", 8)
	secrets = append(secrets, inviteePassword)
	if status, _ := invitee.do(http.MethodPost, "/dashboard/invite/"+token, url.Values{"password": {inviteePassword}}); status != http.StatusSeeOther {
		t.Fatalf("accept the invitation: %d", status)
	}
	// The invitee is the user the invitation named.
	tr.want("the invitation accepted", auditEvent{Action: audit.SignInSucceeded, Actor: actor(audit.ActorDashboardUser, inviteID, inviteeEmail),
		Target: target("dashboard_user", inviteID), IP: inviteeIP, Details: map[string]any{"via": "invitation"}})
	if status, _ := owner.do(http.MethodPost, "/dashboard/settings/users/"+inviteID+"/role", url.Values{"role": {"owner"}}); status != http.StatusSeeOther {
		t.Fatalf("change the role: %d", status)
	}
	tr.want("a role change", auditEvent{Action: audit.DashboardUserRoleChanged, Actor: byOwner, Target: target("dashboard_user", inviteID), IP: ownerIP,
		Details: map[string]any{"email": inviteeEmail, "from": "viewer", "to": "owner"}})
	if status, _ := owner.do(http.MethodPost, "/dashboard/settings/users/"+inviteID+"/remove", url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("remove: %d", status)
	}
	tr.want("a removal", auditEvent{Action: audit.DashboardUserRemoved, Actor: byOwner, Target: target("dashboard_user", inviteID), IP: ownerIP,
		Details: map[string]any{"email": inviteeEmail, "role": "owner"}})

	// An e-mail of no user is in no trail; a throttled attempt, whose
	// password is not checked, writes nothing.
	total := s.count(`SELECT count(*) FROM audit_events`)
	stranger := dashboardFrom(t, s.apiURL, "203.0.113.40")
	if status, _ := stranger.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {"nobody@loja.example.com"}, "password": {wrong}}); status != http.StatusUnauthorized {
		t.Errorf("an unknown e-mail: %d", status)
	}
	if n := s.count(`SELECT count(*) FROM audit_events`); n != total {
		t.Errorf("a sign-in with an e-mail of no user wrote %d events, want none", n-total)
	}
	guesser := dashboardFrom(t, s.apiURL, "203.0.113.50")
	var failures []auditEvent
	for range 10 { // the address's limit
		if status, _ := guesser.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {ownerEmail}, "password": {wrong}}); status != http.StatusUnauthorized {
			t.Fatalf("a wrong password: %d", status)
		}
		failures = append(failures, auditEvent{Action: audit.SignInFailed, Actor: anonymous, Target: target("dashboard_user", ownerID),
			IP: "203.0.113.50", Details: tried})
	}
	tr.want("10 more wrong passwords", failures...)
	if status, _ := guesser.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {ownerEmail}, "password": {newPassword}}); status != http.StatusTooManyRequests {
		t.Fatalf("an attempt past the address's 10 failures: %d, want 429", status)
	}
	tr.want("a throttled attempt")

	// No secret in the trail, through the API or on the Activity page.
	_, raw := tr.list()
	req, _ := http.NewRequest(http.MethodGet, s.apiURL+"/dashboard/settings/activity", nil)
	res, err := owner.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(html), "Webhook secret rotated") || !strings.Contains(string(html), "User role changed") {
		t.Errorf("the Activity page: %d, want 200 with the events in words", res.StatusCode)
	}
	for _, secret := range secrets {
		if strings.Contains(raw, secret) {
			t.Errorf("GET /audit-events shows the secret %q", secret)
		}
		if strings.Contains(string(html), secret) {
			t.Errorf("the Activity page shows the secret %q", secret)
		}
	}

	// Another merchant's key reads its own set-up only.
	theirs := &auditTrail{t: t, s: s, key: other.apiKey}
	list, raw := theirs.list()
	for _, e := range list {
		if e.Actor["type"] != audit.ActorSystem {
			t.Errorf("another merchant's trail shows %+v", e)
		}
	}
	for _, ours := range []string{keyID, ownerEmail, inviteeEmail, hookID, campID} {
		if strings.Contains(raw, ours) {
			t.Errorf("another merchant's trail names %s", ours)
		}
	}
	res2 := do(t, http.MethodGet, s.apiURL+"/api/v1/audit-events?action=webhook_endpoint.created", nil, map[string]string{"X-API-Key": other.apiKey})
	if !strings.Contains(string(res2.Body), `"data":[]`) {
		t.Errorf("another merchant's webhook_endpoint.created: %s, want none", res2.Body)
	}
}
