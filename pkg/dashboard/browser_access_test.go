package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/testenv"
)

// other is a second person at another computer: a browser context of its
// own (its own cookies) in the same Chromium.
func (b *browser) other() *browser {
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	return &browser{t: b.t, e: b.e, ctx: ctx}
}

// labelled is the element whose aria-label is name (a row's button or
// link: "Remove ana@…").
func labelled(name string) chromedp.Search {
	return chromedp.Search(`//*[@aria-label=` + xpathString(name) + `]`)
}

func (b *browser) exists(css string) bool {
	b.t.Helper()
	ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q) !== null`, css)))
	if err != nil {
		b.t.Fatal(err)
	}
	return ok
}

// The owner invites Ana; the link is shown once, with a copy button; Ana
// accepts it in her own browser; the owner removes her, and her session
// is gone at her next click.
func TestBrowserInvitationAndRemoval(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	b.open("/dashboard/settings/users")
	if status := b.submit("invite", chromedp.SendKeys(field("Email"), "ana@loja-demo.example.com"),
		chromedp.SetValue(field("Role"), "viewer"), chromedp.Click(button("Send invite"))); status != http.StatusOK {
		t.Fatalf("invite: %d", status)
	}
	link := text(b, chromedp.CSS(`[data-testid="invite-link"]`))
	if !strings.HasPrefix(link, e.url+"/dashboard/invite/") {
		t.Fatalf("the page shows the link %q", link)
	}
	visible, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`!document.querySelector('button[aria-label="Copy the invitation link"]').hidden`))
	if err != nil || !visible {
		t.Errorf("no visible copy button for the link (%v)", err)
	}
	testenv.Screenshot(t, b.ctx, "users-invite")
	b.open("/dashboard/settings/users")
	if b.exists(`[data-testid="invite-link"]`) {
		t.Errorf("the link is shown again on the users page")
	}
	if got := text(b, labelled("Cancel invitation for ana@loja-demo.example.com")); got != "Cancel invitation" {
		t.Errorf("the pending invitation's button reads %q", got)
	}

	ana := b.other()
	ana.do("open the invitation", chromedp.Navigate(link))
	if status := ana.submit("accept", chromedp.SendKeys(field("Password"), "ana-password-12"), chromedp.Click(button("Accept invitation"))); status != http.StatusOK {
		t.Fatalf("accept: %d", status)
	}
	if loc := ana.location(); loc != "/dashboard" {
		t.Fatalf("after accepting, Ana is at %s", loc)
	}
	// The owner's own browser is still the owner's: the contexts do not share cookies.
	b.open("/dashboard/settings/users")
	if got := text(b, chromedp.CSS("footer .who")); !strings.Contains(got, e.demo.DashboardEmail) {
		t.Fatalf("the owner's browser now shows %q", got)
	}

	b.submit("remove", chromedp.Click(labelled("Remove ana@loja-demo.example.com")))
	b.submit("confirm", chromedp.Click(button("Yes, remove")))
	if got := text(b, chromedp.CSS(`[role="status"]`)); got != "The user was removed and signed out everywhere." {
		t.Errorf("after removing: %q", got)
	}
	ana.open("/dashboard/settings/users")
	if loc := ana.location(); loc != "/dashboard/sign-in" {
		t.Errorf("the removed user's next request went to %s, want the sign-in page", loc)
	}
	if status := ana.submit("the used link", chromedp.Navigate(link)); status != http.StatusNotFound {
		t.Errorf("the used invitation link: %d, want 404", status)
	}
}

// The owner makes a viewer an owner (who can then generate a key in the
// session she already has), and cannot remove herself as the last owner.
func TestBrowserRoleChange(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	link := e.inviteURL(e.owner(), "ana@loja-demo.example.com", "viewer")
	ana := b.other()
	ana.do("open the invitation", chromedp.Navigate(link))
	ana.submit("accept", chromedp.SendKeys(field("Password"), "ana-password-12"), chromedp.Click(button("Accept invitation")))
	ana.open("/dashboard/settings/api-keys")
	if status := ana.submit("generate as a viewer", chromedp.Click(button("Generate new key"))); status != http.StatusForbidden {
		t.Fatalf("a viewer generates a key: %d, want 403", status)
	}

	b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword)
	b.open("/dashboard/settings/users")
	b.submit("make Ana an owner", chromedp.SetValue(labelled("Role of ana@loja-demo.example.com"), "owner"),
		chromedp.Click(labelled("Change role of ana@loja-demo.example.com")))
	if got := text(b, chromedp.CSS(`[role="status"]`)); got != "The role was changed." {
		t.Errorf("after the role change: %q", got)
	}
	if got := text(b, chromedp.Search(`//tr[td[text()="ana@loja-demo.example.com"]]/td[2]`)); got != "Owner" {
		t.Errorf("Ana's role reads %q, want Owner", got)
	}
	ana.open("/dashboard/settings/api-keys")
	if status := ana.submit("generate as an owner", chromedp.Click(button("Generate new key"))); status != http.StatusOK {
		t.Errorf("Ana, now an owner, generates a key: %d, want 200", status)
	}

	// Back to a viewer; then the demo owner is the last one and may not go.
	b.open("/dashboard/settings/users")
	b.submit("make Ana a viewer", chromedp.SetValue(labelled("Role of ana@loja-demo.example.com"), "viewer"),
		chromedp.Click(labelled("Change role of ana@loja-demo.example.com")))
	b.submit("remove myself", chromedp.Click(labelled("Remove "+e.demo.DashboardEmail)))
	if got := b.alert(); !strings.Contains(got, "last owner") {
		t.Errorf("removing the last owner says %q", got)
	}
	if b.exists(`button.danger`) {
		t.Errorf("the last owner's removal page offers the button")
	}
	b.submit("demote myself", chromedp.Navigate(e.url+"/dashboard/settings/users"),
		chromedp.SetValue(labelled("Role of "+e.demo.DashboardEmail), "viewer"),
		chromedp.Click(labelled("Change role of "+e.demo.DashboardEmail)))
	if got := b.alert(); !strings.Contains(got, "stays an owner") {
		t.Errorf("demoting the last owner says %q", got)
	}
}
