package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/testenv"
)

// Sam's password opens two stores: after signing in, the chooser lists
// both, in English and, once switched, in Portuguese; a click on a store
// signs in to it. A second person signs in on a Portuguese page from the
// start and chooses the other store.
func TestBrowserMerchantChooser(t *testing.T) {
	e := newEnv(t)
	e.samAtTwoMerchants("sam-same-password", "sam-same-password")
	b := newBrowser(t, e)
	if status := b.signIn(samEmail, "sam-same-password"); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	if loc := b.location(); loc != "/dashboard/sign-in/merchant" {
		t.Fatalf("after signing in with a password of two stores: %s, want the chooser", loc)
	}
	if got := text(b, chromedp.CSS("h1")); got != "Choose a store" {
		t.Errorf("the chooser's heading: %q", got)
	}
	for _, name := range []string{"Loja Demo", "Outra Loja"} {
		if got := text(b, button(name)); got != name {
			t.Errorf("the chooser's button for %s reads %q", name, got)
		}
	}
	testenv.Screenshot(t, b.ctx, "choose-merchant")
	b.submit("Português", chromedp.Click(button("Português")))
	if loc, got := b.location(), text(b, chromedp.CSS("h1")); loc != "/dashboard/sign-in/merchant" || got != "Escolha uma loja" {
		t.Errorf("after switching to Portuguese: %s, heading %q", loc, got)
	}
	if got := text(b, link("Entrar com outro e-mail")); got != "Entrar com outro e-mail" {
		t.Errorf("the link back to sign-in reads %q", got)
	}
	testenv.Screenshot(t, b.ctx, "choose-merchant-pt-BR")
	if status := b.submit("choose Outra Loja", chromedp.Click(button("Outra Loja"))); status != http.StatusOK {
		t.Fatalf("choose: %d", status)
	}
	if loc, who := b.location(), text(b, chromedp.CSS("footer .who")); loc != "/dashboard" || !strings.Contains(who, "Outra Loja · Proprietário") {
		t.Errorf("after choosing Outra Loja: at %s, footer %q", loc, who)
	}

	pt := b.other()
	pt.open("/dashboard/sign-in")
	pt.submit("Português", chromedp.Click(button("Português")))
	if status := pt.submit("entrar", chromedp.SendKeys(field("E-mail"), samEmail), chromedp.SendKeys(field("Senha"), "sam-same-password"),
		chromedp.Click(button("Entrar"))); status != http.StatusOK {
		t.Fatalf("sign in on the Portuguese page: %d", status)
	}
	if got := text(pt, chromedp.CSS("h1")); got != "Escolha uma loja" {
		t.Errorf("the chooser in Portuguese from the start: %q", got)
	}
	pt.submit("choose Loja Demo", chromedp.Click(button("Loja Demo")))
	if who := text(pt, chromedp.CSS("footer .who")); !strings.Contains(who, "Loja Demo · Leitor") {
		t.Errorf("after choosing Loja Demo: footer %q", who)
	}
}
