package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
)

// post sends body with contentType as a browser on the dashboard's own
// origin would, and returns the answer.
func (e *env) post(c *http.Client, p, contentType string, body io.Reader) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+p, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Origin", e.url)
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("POST %s: %v", p, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Response: resp, body: string(b)}
}

// userID is the id of the user of email, which is a user of one merchant.
func (e *env) userID(email string) uuid.UUID {
	e.t.Helper()
	users, err := e.store.FindUsersByEmail(context.Background(), email)
	if err != nil || len(users) != 1 {
		e.t.Fatalf("the user %s: %v (%d users)", email, err, len(users))
	}
	return users[0].ID
}

func TestBodyBoundedAndMultipartRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	anon := e.client()
	big := url.Values{"email": {e.demo.DashboardEmail}, "password": {strings.Repeat("x", 2<<20)}}.Encode()
	r := e.post(anon, "/dashboard/sign-in", "application/x-www-form-urlencoded", strings.NewReader(big))
	if r.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "more than 64 KiB") {
		t.Errorf("a 2 MiB sign-in: %d, want 413 and the error page: %.300s", r.StatusCode, r.body)
	}
	checkSecurityHeaders(t, "413", r)
	// Without a Content-Length (chunked), the body is cut at 64 KiB all the same.
	r = e.post(anon, "/dashboard/sign-in", "application/x-www-form-urlencoded", io.NopCloser(strings.NewReader(big)))
	if r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB chunked sign-in: %d, want 413", r.StatusCode)
	}
	// Just under the limit, the form is read: a wrong password.
	under := url.Values{"email": {e.demo.DashboardEmail}, "password": {strings.Repeat("x", 60<<10)}}.Encode()
	if r := e.post(anon, "/dashboard/sign-in", "application/x-www-form-urlencoded", strings.NewReader(under)); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a 60 KiB sign-in: %d, want 401", r.StatusCode)
	}

	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	_ = w.WriteField("email", e.demo.DashboardEmail)
	_ = w.WriteField("password", e.demo.DashboardPassword)
	_ = w.Close()
	r = e.post(anon, "/dashboard/sign-in", w.FormDataContentType(), bytes.NewReader(mp.Bytes()))
	if r.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(r.body, "no file uploads") || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("a multipart sign-in with the right password: %d (cookie %q), want 415, the error page and no session: %.300s",
			r.StatusCode, r.Header.Get("Set-Cookie"), r.body)
	}
	if n := e.sessionRows(); n != 0 {
		t.Errorf("%d session rows after refused anonymous requests, want 0", n)
	}
	owner := e.owner()
	if r := e.post(owner, "/dashboard/settings/api-keys", w.FormDataContentType(), bytes.NewReader(mp.Bytes())); r.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("an owner's multipart POST: %d, want 415", r.StatusCode)
	}
}

func TestPasswordChangeEndsTheOtherSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	here, elsewhere := e.owner(), e.owner()
	before := e.sessionCookie(here)
	r := e.do(here, http.MethodPost, "/dashboard/settings/password",
		url.Values{"current": {e.demo.DashboardPassword}, "new": {"a-brand-new-secret-42"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("change password: %d: %s", r.StatusCode, r.body)
	}
	if r := e.do(here, http.MethodGet, "/dashboard/settings/password", nil); r.StatusCode != http.StatusOK || !strings.Contains(r.body, "Your password was changed.") {
		t.Errorf("the session that changed the password: %d, want 200 and the flash", r.StatusCode)
	}
	if r := e.do(elsewhere, http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("another session after the change: %d to %q, want 303 to sign in", r.StatusCode, r.Header.Get("Location"))
	}
	if r := e.do(e.withCookie(before), http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusSeeOther {
		t.Errorf("the token from before the change: %d, want 303 to sign in", r.StatusCode)
	}
	if r := e.do(e.client(), http.MethodPost, "/dashboard/sign-in", url.Values{"email": {e.demo.DashboardEmail}, "password": {e.demo.DashboardPassword}}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old password: %d, want 401", r.StatusCode)
	}
	e.signIn(e.client(), e.demo.DashboardEmail, "a-brand-new-secret-42")
}

func TestPasswordPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	link := e.inviteURL(owner, "ana@loja-demo.example.com", "viewer")
	for _, tc := range []struct{ password, says string }{
		{"elevenchars", "at least 12 characters"},
		{"password1234", "most common passwords"},
		{"PassWord1234", "most common passwords"},
		{"qwertyuiop12", "most common passwords"},
		{strings.Repeat("é", 37), "at most 72 bytes"},
	} {
		r := e.do(owner, http.MethodPost, "/dashboard/settings/password", url.Values{"current": {e.demo.DashboardPassword}, "new": {tc.password}})
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `role="alert"`) || !strings.Contains(r.body, tc.says) {
			t.Errorf("new password %q: %d, want 422 saying %q", tc.password, r.StatusCode, tc.says)
		}
		r = e.do(e.client(), http.MethodPost, strings.TrimPrefix(link, e.url), url.Values{"password": {tc.password}})
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, tc.says) || !strings.Contains(r.body, "ana@loja-demo.example.com") {
			t.Errorf("invitation with %q: %d, want 422 saying %q on the invitation's page", tc.password, r.StatusCode, tc.says)
		}
	}
	e.accept(link, "twelve chars")
}

func TestRemovedUserSignedOutEverywhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	link := e.inviteURL(owner, "ana@loja-demo.example.com", "viewer")
	first := e.accept(link, "ana-password-12")
	second := e.client()
	e.signIn(second, "ana@loja-demo.example.com", "ana-password-12")
	id := e.userID("ana@loja-demo.example.com")

	confirm := e.do(owner, http.MethodGet, "/dashboard/settings/users/"+id.String()+"/remove", nil)
	if confirm.StatusCode != http.StatusOK || !strings.Contains(confirm.body, "Yes, remove") || !strings.Contains(confirm.body, "ana@loja-demo.example.com") {
		t.Fatalf("the confirmation: %d: %s", confirm.StatusCode, confirm.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/"+id.String()+"/remove", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d: %s", r.StatusCode, r.body)
	}
	for i, c := range []*http.Client{first, second} {
		if r := e.do(c, http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
			t.Errorf("session %d of the removed user: %d to %q, want 303 to sign in", i+1, r.StatusCode, r.Header.Get("Location"))
		}
	}
	if r := e.do(e.client(), http.MethodPost, "/dashboard/sign-in", url.Values{"email": {"ana@loja-demo.example.com"}, "password": {"ana-password-12"}}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the removed user signs in: %d, want 401", r.StatusCode)
	}
	users := e.do(owner, http.MethodGet, "/dashboard/settings/users", nil)
	if !strings.Contains(users.body, "removed and signed out everywhere") || strings.Contains(users.body, "ana@loja-demo.example.com") {
		t.Errorf("the users page after the removal still lists ana, or no flash")
	}
	if r := e.do(e.client(), http.MethodGet, strings.TrimPrefix(link, e.url), nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("the used invitation link: %d, want 404", r.StatusCode)
	}
}

func TestLastOwnerStays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	me := e.userID(e.demo.DashboardEmail).String()
	confirm := e.do(owner, http.MethodGet, "/dashboard/settings/users/"+me+"/remove", nil)
	if confirm.StatusCode != http.StatusOK || !strings.Contains(confirm.body, "last owner") || strings.Contains(confirm.body, "Yes, remove") {
		t.Errorf("removing the last owner: the confirmation page should say why and offer no button: %d", confirm.StatusCode)
	}
	r := e.do(owner, http.MethodPost, "/dashboard/settings/users/"+me+"/remove", url.Values{})
	if r.StatusCode != http.StatusConflict || !strings.Contains(r.body, `role="alert"`) || !strings.Contains(r.body, "last owner, so it cannot be removed") {
		t.Errorf("remove the last owner: %d, want 409 and the page saying why: %.300s", r.StatusCode, r.body)
	}
	r = e.do(owner, http.MethodPost, "/dashboard/settings/users/"+me+"/role", url.Values{"role": {"viewer"}})
	if r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "last owner, so it stays an owner") {
		t.Errorf("demote the last owner: %d, want 409 and the page saying why", r.StatusCode)
	}
	// With a second owner, the first may step down; then the second is the last.
	second := e.accept(e.inviteURL(owner, "bia@loja-demo.example.com", "owner"), "bia-password-12")
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/"+me+"/role", url.Values{"role": {"viewer"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("an owner steps down beside another: %d", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/api-keys", url.Values{}); r.StatusCode != http.StatusForbidden {
		t.Errorf("the former owner generates a key: %d, want 403 (a viewer now)", r.StatusCode)
	}
	bia := e.userID("bia@loja-demo.example.com").String()
	if r := e.do(second, http.MethodPost, "/dashboard/settings/users/"+bia+"/remove", url.Values{}); r.StatusCode != http.StatusConflict {
		t.Errorf("the new last owner removes herself: %d, want 409", r.StatusCode)
	}
}

func TestRoleChangeTakesEffectAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, viewer := e.owner(), e.viewer()
	if r := e.do(viewer, http.MethodPost, "/dashboard/settings/api-keys", url.Values{}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("a viewer generates a key: %d, want 403", r.StatusCode)
	}
	id := e.userID("viewer@loja-demo.example.com").String()
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/"+id+"/role", url.Values{"role": {"owner"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("promote: %d: %s", r.StatusCode, r.body)
	}
	if r := e.do(viewer, http.MethodPost, "/dashboard/settings/api-keys", url.Values{}); r.StatusCode != http.StatusOK {
		t.Errorf("the promoted user's same session generates a key: %d, want 200", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/"+id+"/role", url.Values{"role": {"admin"}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("an unknown role: %d, want 422", r.StatusCode)
	}
}

func TestInvitationShownOnceNeverLoggedAndCancellable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	// An e-mail the sign-in form could never submit makes no invitation.
	for _, email := range []string{`"ana souza"@example.com`, "ana@loja_x.example.com", "Ana <ana@example.com>"} {
		r := e.do(owner, http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {email}, "role": {"viewer"}})
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Enter a valid email.") {
			t.Errorf("invite %s: %d, want 422 asking for a valid e-mail", email, r.StatusCode)
		}
	}
	r := e.do(owner, http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {"ana@loja-demo.example.com"}, "role": {"viewer"}})
	m := inviteLinkRe.FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil || !strings.Contains(r.body, `data-copy="invite-link"`) || !strings.Contains(r.body, "shown only this once") {
		t.Fatalf("invite: %d, want 200 with the link, a copy button and a warning: %s", r.StatusCode, r.body)
	}
	link := m[1]
	if !strings.HasPrefix(link, e.url+"/dashboard/invite/") {
		t.Fatalf("the link %q is not built from PUBLIC_URL %s", link, e.url)
	}
	token := path.Base(link)
	users := e.do(owner, http.MethodGet, "/dashboard/settings/users", nil)
	if strings.Contains(users.body, token) || !strings.Contains(users.body, "Pending invitations") || !strings.Contains(users.body, "ana@loja-demo.example.com") {
		t.Errorf("the users page later: shows the token again, or not the pending invitation")
	}
	invites, err := e.store.ListInvites(context.Background(), uuid.MustParse(e.demo.MerchantID), e.clock.Now())
	if err != nil || len(invites) != 1 {
		t.Fatalf("pending invitations: %v %v", invites, err)
	}

	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/invites/"+invites[0].ID.String()+"/cancel", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d: %s", r.StatusCode, r.body)
	}
	if r := e.do(e.client(), http.MethodGet, strings.TrimPrefix(link, e.url), nil); r.StatusCode != http.StatusNotFound || !strings.Contains(r.body, "cancelled") {
		t.Errorf("the cancelled link: %d, want the 404 page", r.StatusCode)
	}
	if r := e.do(e.client(), http.MethodPost, strings.TrimPrefix(link, e.url), url.Values{"password": {"ana-password-12"}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("accepting the cancelled link: %d, want 404", r.StatusCode)
	}
	if users := e.do(owner, http.MethodGet, "/dashboard/settings/users", nil); !strings.Contains(users.body, "No pending invitations.") {
		t.Errorf("the cancelled invitation is still listed")
	}
	activity := e.do(owner, http.MethodGet, "/dashboard/settings/activity?action=dashboard_user.invitation_cancelled", nil).body
	if !strings.Contains(activity, "<td>Invitation cancelled</td>") || !strings.Contains(activity, "User ana@loja-demo.example.com") {
		t.Errorf("the Activity page does not show the cancellation of Ana's invitation")
	}
	// Every log line of the run (the access log's included), after the link
	// was created, opened, refused and cancelled: none holds the token, one
	// names the invitation.
	logged := false
	for _, entry := range e.logs.All() {
		if strings.Contains(entry.Message, token) {
			t.Errorf("log line %q contains the invitation token", entry.Message)
		}
		for k, v := range entry.ContextMap() {
			if strings.Contains(fmt.Sprint(v), token) {
				t.Errorf("log line %q field %s contains the invitation token", entry.Message, k)
			}
		}
		logged = logged || entry.ContextMap()["invite_id"] == invites[0].ID.String()
	}
	if !logged {
		t.Errorf("no log line names the invitation id %s", invites[0].ID)
	}
}

// The new actions are owners' and scoped by merchant: a viewer gets 403,
// another merchant's ids are not found.
func TestUserActionsForOwnersOfTheMerchantOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	otherOwner := e.userID(other.DashboardEmail).String()
	_, hash := merchant.NewInviteToken()
	otherInvite := &merchant.Invite{MerchantID: uuid.MustParse(other.MerchantID), Email: "x@outra.example.com", Role: "viewer", ExpiresAt: e.clock.Now().Add(time.Hour)}
	if err := e.store.CreateInvite(context.Background(), otherInvite, hash); err != nil {
		t.Fatal(err)
	}
	owner, viewer := e.owner(), e.viewer()
	me := e.userID(e.demo.DashboardEmail).String()
	for _, tc := range []struct {
		c      *http.Client
		method string
		path   string
		want   int
	}{
		{viewer, http.MethodPost, "/dashboard/settings/users/" + me + "/role", http.StatusForbidden},
		{viewer, http.MethodPost, "/dashboard/settings/users/" + me + "/remove", http.StatusForbidden},
		{viewer, http.MethodPost, "/dashboard/settings/users/invites/" + uuid.NewString() + "/cancel", http.StatusForbidden},
		{owner, http.MethodPost, "/dashboard/settings/users/" + otherOwner + "/role", http.StatusNotFound},
		{owner, http.MethodGet, "/dashboard/settings/users/" + otherOwner + "/remove", http.StatusNotFound},
		{owner, http.MethodPost, "/dashboard/settings/users/" + otherOwner + "/remove", http.StatusNotFound},
		{owner, http.MethodPost, "/dashboard/settings/users/invites/" + otherInvite.ID.String() + "/cancel", http.StatusNotFound},
		{owner, http.MethodPost, "/dashboard/settings/users/not-a-uuid/remove", http.StatusNotFound},
	} {
		var form url.Values
		if tc.method == http.MethodPost {
			form = url.Values{"role": {"viewer"}}
		}
		if r := e.do(tc.c, tc.method, tc.path, form); r.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.StatusCode, tc.want)
		}
	}
	if u, err := e.store.FindUserByEmail(context.Background(), uuid.MustParse(e.demo.MerchantID), e.demo.DashboardEmail); err != nil || u.Role != merchant.RoleOwner {
		t.Errorf("the owner after the refused requests: %+v %v", u, err)
	}
	if list, _ := e.store.ListInvites(context.Background(), uuid.MustParse(other.MerchantID), e.clock.Now()); len(list) != 1 {
		t.Errorf("the other merchant's invitation was cancelled")
	}
}

// An anonymous visitor's language is a cookie of its own: choosing one
// creates no session on the server.
func TestAnonymousLanguageIsACookieNotASession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	anon := e.client()
	for range 3 {
		r := e.do(anon, http.MethodPost, "/dashboard/language", url.Values{"lang": {"pt-BR"}, "next": {"/dashboard/sign-in"}})
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("choose Portuguese: %d", r.StatusCode)
		}
		k := r.Header.Get("Set-Cookie")
		if !strings.HasPrefix(k, "convida_lang=pt-BR;") || !strings.Contains(k, "Path=/dashboard") || !strings.Contains(k, "SameSite=Lax") {
			t.Errorf("the language cookie: %q", k)
		}
	}
	if n := e.sessionRows(); n != 0 {
		t.Errorf("%d session rows after anonymous language switches, want 0", n)
	}
	if r := e.do(anon, http.MethodGet, "/dashboard/sign-in", nil, "Accept-Language", "en"); !strings.Contains(r.body, "Senha") || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("the chosen language does not stick, or the page set a cookie")
	}
	// Signed in, the same cookie keeps the choice.
	e.signIn(anon, e.demo.DashboardEmail, e.demo.DashboardPassword)
	if r := e.do(anon, http.MethodGet, "/dashboard/settings/users", nil, "Accept-Language", "en"); !strings.Contains(r.body, "Convidar usuário") {
		t.Errorf("signed in, the page is not in the chosen Portuguese")
	}
}

func TestSignOutEndsTheSessionOnTheServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	copied := e.sessionCookie(owner)
	if r := e.do(e.withCookie(copied), http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("the copied cookie before sign-out: %d, want 200", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/sign-out", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", r.StatusCode)
	}
	if r := e.do(e.withCookie(copied), http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("the copied cookie after sign-out: %d to %q, want 303 to sign in", r.StatusCode, r.Header.Get("Location"))
	}
	if n := e.sessionRows(); n != 0 {
		t.Errorf("%d session rows after the only session signed out, want 0", n)
	}
}
