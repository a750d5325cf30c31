package dashboard_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/dashboard"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
)

// logged reports whether any log line, message or field, contains s.
func (e *env) logged(s string) bool {
	for _, entry := range e.logs.All() {
		if strings.Contains(entry.Message, s) {
			return true
		}
		for _, v := range entry.ContextMap() {
			if str, ok := v.(string); ok && strings.Contains(str, s) {
				return true
			}
		}
	}
	return false
}

func (e *env) integration(merchantID, provider string) *merchant.Integration {
	e.t.Helper()
	in, err := postgres.NewMerchantStore(e.deps.Pool, e.deps.Box).FindIntegration(context.Background(), uuid.MustParse(merchantID), provider)
	if err != nil {
		e.t.Fatalf("FindIntegration(%s): %v", provider, err)
	}
	return in
}

// guruBody is the approved Guru sale of pkg/inbound/testdata carrying token.
func guruBody(t *testing.T, token string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "inbound", "testdata", "guru", "transaction-approved.json"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(raw, []byte("REPLACE_WITH_THE_MERCHANT_ACCOUNT_TOKEN_40"), []byte(token), 1)
}

// The owner saves Guru's account token alone; the page then says since
// when it is configured and shows the webhook URL the API gives, never the
// token, which no log line holds either. A blank field keeps its value.
func TestIntegrationsSaveWriteOnlySecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	wantURL := merchant.WebhookURL(e.deps.Config.IngestPublicURL, "guru", uuid.MustParse(e.demo.MerchantID))
	if page.StatusCode != http.StatusOK || !strings.Contains(page.body, `data-testid="webhook-url-guru" id="webhook-url-guru">`+wantURL+"<") ||
		!strings.Contains(page.body, "Not configured yet.") {
		t.Fatalf("the integrations page: %d, want the Guru webhook URL %s and not configured: %s", page.StatusCode, wantURL, page.body)
	}

	token := "guru-account-token-" + strings.Repeat("7", 21)
	r := e.do(owner, http.MethodPost, "/dashboard/integrations/guru", url.Values{"account_token": {"  " + token + " "}, "user_token": {""}, "api_url": {""}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/integrations" {
		t.Fatalf("save Guru: %d %s, want 303 back to the page: %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	saved := e.integration(e.demo.MerchantID, "guru")
	if saved.AccountToken != token || saved.UserToken != "" || saved.APIURL != (merchant.Integration{Provider: "guru"}).ValueOf("api_url") {
		t.Errorf("saved %+v, want the trimmed token alone and the default API URL", saved)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, "The Guru settings were saved.") || !strings.Contains(page.body, "Configured on ") {
		t.Errorf("after saving, the page does not say so: %s", page.body)
	}
	if strings.Contains(page.body, token) || strings.Contains(page.body, token[len(token)-4:]+"<") {
		t.Errorf("the page shows the saved token")
	}

	// A blank field keeps the token; the user token is added.
	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/guru", url.Values{"account_token": {""}, "user_token": {"guru-user"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save the user token: %d", r.StatusCode)
	}
	if saved := e.integration(e.demo.MerchantID, "guru"); saved.AccountToken != token || saved.UserToken != "guru-user" {
		t.Errorf("after a blank account token: %+v, want it kept and the user token set", saved)
	}

	// Yampi's fields, and the API's refusal of a bad API URL.
	r = e.do(owner, http.MethodPost, "/dashboard/integrations/yampi", url.Values{"webhook_secret": {"wh_sec"}, "user_token": {"yt"},
		"user_secret_key": {"ysk"}, "store_alias": {"minha-loja"}, "api_url": {"ftp://api.example.com"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `role="alert" class="alert">The API URL must be an http or https URL.`) {
		t.Errorf("a bad API URL: %d, want 422 with an alert: %s", r.StatusCode, r.body)
	}
	if !strings.Contains(r.body, `value="ftp://api.example.com"`) || strings.Contains(r.body, "wh_sec") {
		t.Errorf("the refused form should keep what was typed, secrets excepted: %s", r.body)
	}
	r = e.do(owner, http.MethodPost, "/dashboard/integrations/yampi", url.Values{"webhook_secret": {"wh_sec"}, "user_token": {"yt"},
		"user_secret_key": {"ysk"}, "store_alias": {"minha-loja"}, "api_url": {"https://api.example.com/v2"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save Yampi: %d: %s", r.StatusCode, r.body)
	}
	y := e.integration(e.demo.MerchantID, "yampi")
	if y.WebhookSecret != "wh_sec" || y.UserToken != "yt" || y.UserSecretKey != "ysk" || y.StoreAlias != "minha-loja" || y.APIURL != "https://api.example.com/v2" {
		t.Errorf("Yampi saved as %+v", y)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, `value="minha-loja"`) || strings.Contains(page.body, "wh_sec") || strings.Contains(page.body, "ysk") {
		t.Errorf("the page should show the store alias but no Yampi secret: %s", page.body)
	}

	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/shopify", url.Values{"account_token": {"x"}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown platform: %d, want 404", r.StatusCode)
	}
	for _, secret := range []string{token, "wh_sec", "ysk"} {
		if e.logged(secret) {
			t.Errorf("a log line holds the secret %q", secret)
		}
	}
}

// The form refuses an API URL on the operator's network, plain http, and
// an over-long field, each with its own alert; it says beside the API URL
// and the store alias that changing them clears the saved API credentials,
// and whether the platform's API is configured, which a new store alias
// saved alone undoes.
func TestIntegrationsGuardTheAPIURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	yampi := func(fields map[string]string) response {
		form := url.Values{}
		for k, v := range fields {
			form.Set(k, v)
		}
		return e.do(owner, http.MethodPost, "/dashboard/integrations/yampi", form)
	}
	for _, tc := range []struct{ apiURL, storeAlias, alert string }{
		{"https://169.254.169.254/latest/meta-data", "loja", "The API URL must name a public server: its address is not public."},
		{"https://127.0.0.1:8443/v2", "loja", "The API URL must name a public server: its address is not public."},
		{"https://localhost/v2", "loja", "The API URL must name a public server: its address is not public."},
		{"http://api.example.com/v2", "loja", "The API URL must be an https URL."},
		{"https://api.example.com/v2", strings.Repeat("a", 256), "A field is too long: at most 255 characters, 2048 for the API URL."},
	} {
		r := yampi(map[string]string{"user_token": "yt", "user_secret_key": "ysk", "store_alias": tc.storeAlias, "api_url": tc.apiURL})
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `role="alert" class="alert">`+tc.alert+"<") {
			t.Errorf("%s: %d, want 422 with the alert %q: %s", tc.apiURL, r.StatusCode, tc.alert, r.body)
		}
	}
	if _, err := postgres.NewMerchantStore(e.deps.Pool, e.deps.Box).FindIntegration(context.Background(),
		uuid.MustParse(e.demo.MerchantID), "yampi"); err == nil {
		t.Fatalf("a refused form saved Yampi")
	}

	page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	const rebinds = "Changing it clears the saved user token and user secret key unless you enter them again."
	for _, want := range []string{
		`data-testid="api-status-yampi">API access not configured: redemptions and members&#39; coupons still need: User token, User secret key, Store alias.<`,
		`id="yampi-store_alias" name="store_alias" type="text" value="" aria-describedby="yampi-store_alias-hint">`,
		`<small id="yampi-store_alias-hint" class="hint">` + rebinds + "<",
		`<small id="yampi-api_url-hint" class="hint">` + rebinds + "<",
		`<small id="guru-api_url-hint" class="hint">Changing it clears the saved user token unless you enter it again.<`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	if r := yampi(map[string]string{"user_token": "yt", "user_secret_key": "ysk", "store_alias": "loja", "api_url": "https://api.example.com/v2"}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save Yampi: %d: %s", r.StatusCode, r.body)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, `data-testid="api-status-yampi">API access configured: redemptions and members&#39; coupons can run.<`) {
		t.Errorf("after saving every credential the page does not say the API is configured: %s", page.body)
	}
	// The same URL, another store alias, the secrets left blank.
	if r := yampi(map[string]string{"store_alias": "outra-loja", "api_url": "https://api.example.com/v2"}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save the store alias: %d: %s", r.StatusCode, r.body)
	}
	if y := e.integration(e.demo.MerchantID, "yampi"); y.UserToken != "" || y.UserSecretKey != "" || y.StoreAlias != "outra-loja" {
		t.Errorf("after a new store alias alone: %+v, want the API credentials cleared", y)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, `data-testid="api-status-yampi">API access not configured: redemptions and members&#39; coupons still need: User token, User secret key.<`) {
		t.Errorf("after a new store alias the page does not say what the API needs: %s", page.body)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil, "Accept-Language", "pt-BR")
	if !strings.Contains(page.body, "Acesso à API não configurado: resgates e cupons dos membros ainda precisam de: Token de usuário, Chave secreta de usuário.") ||
		!strings.Contains(page.body, "Mudar este campo apaga o token de usuário e a chave secreta de usuário salvos") {
		t.Errorf("the Portuguese page lacks the API status or the note: %s", page.body)
	}
}

// A viewer sees the page but cannot save; nor can a request from another
// site.
func TestIntegrationsViewerCannotSave(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	viewer := e.viewer()
	if r := e.do(viewer, http.MethodGet, "/dashboard/integrations", nil); r.StatusCode != http.StatusOK {
		t.Errorf("a viewer's GET: %d, want 200", r.StatusCode)
	}
	for _, p := range []string{"guru", "yampi"} {
		r := e.do(viewer, http.MethodPost, "/dashboard/integrations/"+p, url.Values{"account_token": {"viewer-token"}, "webhook_secret": {"viewer-secret"}})
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer's save of %s: %d, want 403", p, r.StatusCode)
		}
	}
	if r := e.do(e.owner(), http.MethodPost, "/dashboard/integrations/guru", url.Values{"account_token": {"cross-site-token"}},
		"Origin", "https://evil.example"); r.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin save: %d, want 403", r.StatusCode)
	}
	_, err := postgres.NewMerchantStore(e.deps.Pool, e.deps.Box).FindIntegration(context.Background(), uuid.MustParse(e.demo.MerchantID), "guru")
	if err == nil {
		t.Errorf("a refused save configured Guru")
	}
}

// The last deliveries are listed per platform in the merchant's zone, each
// linking to its body with the token redacted; another merchant's delivery
// is not found.
func TestIntegrationsDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	token := "guru-token-" + strings.Repeat("9", 29)
	at := time.Date(2026, 11, 25, 17, 3, 0, 0, time.UTC)
	mine, theirs, junk := uuid.New(), uuid.New(), uuid.New()
	err := postgres.NewDeliveryStore(e.deps.Pool).RecordDeliveries(context.Background(), []inbound.Delivery{
		{ID: mine, MerchantID: uuid.MustParse(e.demo.MerchantID), Provider: "guru", Outcome: inbound.DeliveryUnauthorized,
			HTTPStatus: 401, Error: "api_token does not match", Body: guruBody(t, token), ReceivedAt: at,
			BodyLength: 900_000, BodySHA256: bytes.Repeat([]byte{0xab}, 32)},
		{ID: junk, MerchantID: uuid.MustParse(e.demo.MerchantID), Provider: "yampi", Outcome: inbound.DeliveryUnprocessable,
			HTTPStatus: 422, Body: []byte(`secret=` + token), ReceivedAt: at},
		{ID: theirs, MerchantID: uuid.MustParse(other.MerchantID), Provider: "guru", Outcome: inbound.DeliveryAccepted,
			HTTPStatus: 200, Body: []byte(`{}`), ReceivedAt: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	owner := e.owner()
	page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	for _, want := range []string{`href="/dashboard/integrations/deliveries/` + mine.String() + `">11/25/2026 2:03 PM<`,
		"<td>Unauthorized</td><td>401</td><td>Webhook</td><td>api_token does not match</td>", "/dashboard/integrations/deliveries/" + junk.String()} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the integrations page lacks %q", want)
		}
	}
	if strings.Contains(page.body, theirs.String()) {
		t.Errorf("the page lists another merchant's delivery")
	}
	d := e.do(owner, http.MethodGet, "/dashboard/integrations/deliveries/"+mine.String(), nil)
	if d.StatusCode != http.StatusOK || !strings.Contains(d.body, "&#34;api_token&#34;: &#34;[redacted]&#34;") ||
		!strings.Contains(d.body, "Ana Souza") || strings.Contains(d.body, token) {
		t.Errorf("the delivery page: %d, want the body with api_token redacted: %s", d.StatusCode, d.body)
	}
	if !strings.Contains(d.body, ">"+strings.Repeat("ab", 32)+"</code> · 900000<") {
		t.Errorf("the delivery page lacks the digest and length of the body received: %s", d.body)
	}
	if d := e.do(owner, http.MethodGet, "/dashboard/integrations/deliveries/"+junk.String(), nil); strings.Contains(d.body, token) ||
		!strings.Contains(d.body, "not shown") {
		t.Errorf("a body that is not JSON is shown: %s", d.body)
	}
	if d := e.do(owner, http.MethodGet, "/dashboard/integrations/deliveries/"+ids.Format(ids.InboundDelivery, mine), nil); d.StatusCode != http.StatusOK ||
		!strings.Contains(d.body, "Ana Souza") {
		t.Errorf("the delivery's page by the id the API shows (dlv_…): %d", d.StatusCode)
	}
	for _, p := range []string{theirs.String(), ids.Format(ids.InboundDelivery, theirs), uuid.NewString(), "not-a-uuid"} {
		if r := e.do(owner, http.MethodGet, "/dashboard/integrations/deliveries/"+p, nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("delivery %s: %d, want 404", p, r.StatusCode)
		}
	}
}

// Hotmart's and Kiwify's forms save their own fields by the API's rules:
// the hottok and the webhook token are write-only, Kiwify's checkout link
// is checked (never fetched) and shown, and the page says what reading the
// sales still needs.
func TestIntegrationsHotmartKiwify(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	mid := uuid.MustParse(e.demo.MerchantID)
	page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	for _, p := range []string{"hotmart", "kiwify"} {
		want := `data-testid="webhook-url-` + p + `" id="webhook-url-` + p + `">` + merchant.WebhookURL(e.deps.Config.IngestPublicURL, p, mid) + "<"
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks the %s webhook URL: %s", p, page.body)
		}
	}
	if !strings.Contains(page.body, "reading the sales still needs: Client ID, Client secret, Basic token.") {
		t.Errorf("the page does not say what Hotmart's sales pull needs: %s", page.body)
	}

	const hottok, kwToken = "hottok-secret-0123456789", "kiwify-token-secret-9876"
	r := e.do(owner, http.MethodPost, "/dashboard/integrations/hotmart", url.Values{"hottok": {hottok}, "client_id": {"hm-client"},
		"client_secret": {"hm-secret-1"}, "basic_token": {"hm-basic-1"}, "account_token": {"not-hotmart's"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save Hotmart: %d: %s", r.StatusCode, r.body)
	}
	h := e.integration(e.demo.MerchantID, "hotmart")
	if h.AccountToken != hottok || h.ClientID != "hm-client" || h.ClientSecret != "hm-secret-1" || h.BasicToken != "hm-basic-1" ||
		h.AuthURL != (merchant.Integration{Provider: "hotmart"}).ValueOf("auth_url") {
		t.Errorf("Hotmart saved as %+v", h)
	}
	r = e.do(owner, http.MethodPost, "/dashboard/integrations/kiwify", url.Values{"webhook_token": {kwToken},
		"checkout_url": {"http://pay.kiwify.com.br/x"}})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "The checkout link must be an https URL") {
		t.Errorf("an http checkout link: %d, want 422 with its alert: %s", r.StatusCode, r.body)
	}
	r = e.do(owner, http.MethodPost, "/dashboard/integrations/kiwify", url.Values{"webhook_token": {kwToken},
		"checkout_url": {"https://pay.kiwify.com.br/AbC123x"}, "account_id": {"acc-1"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save Kiwify: %d: %s", r.StatusCode, r.body)
	}
	if k := e.integration(e.demo.MerchantID, "kiwify"); k.WebhookSecret != kwToken || k.CheckoutURL != "https://pay.kiwify.com.br/AbC123x" || k.AccountID != "acc-1" {
		t.Errorf("Kiwify saved as %+v", k)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, `value="https://pay.kiwify.com.br/AbC123x"`) || !strings.Contains(page.body, "The Kiwify settings were saved.") ||
		!strings.Contains(page.body, "Convida can read the sales") {
		t.Errorf("the page after saving Kiwify: %s", page.body)
	}
	// A member's page shows her Kiwify referral link.
	e.campaignFor(e.demo)
	ana := e.createMember(owner, "Ana Souza", "ana@example.com")
	stored, err := postgres.NewMemberStore(e.deps.Pool).FindMemberByID(context.Background(), mid, ana)
	if err != nil {
		t.Fatal(err)
	}
	memberPage := e.do(owner, http.MethodGet, "/dashboard/members/"+ana.String(), nil)
	if want := `data-testid="kiwify-link">https://pay.kiwify.com.br/AbC123x?sck=` + stored.CouponCode + "<"; !strings.Contains(memberPage.body, want) {
		t.Errorf("the member's page lacks her Kiwify link %s: %s", want, memberPage.body)
	}
	for _, secret := range []string{hottok, kwToken, "hm-secret-1", "hm-basic-1"} {
		if strings.Contains(page.body, secret) || e.logged(secret) {
			t.Errorf("the page or a log line shows the secret %q", secret)
		}
	}
}

// Eduzz's form saves its webhook secret (write-only) and checkout link;
// the page says its sales are not read (no reconciliation, in both
// languages), and asking for one is 404; a member's page shows her Eduzz
// referral link, her code in utm_content.
func TestIntegrationsEduzz(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	mid := uuid.MustParse(e.demo.MerchantID)
	const secret = "eduzz-secret-0123456789"
	r := e.do(owner, http.MethodPost, "/dashboard/integrations/eduzz", url.Values{"webhook_secret": {secret},
		"checkout_url": {"https://sun.eduzz.com/2384756?utm_source=insta"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save Eduzz: %d: %s", r.StatusCode, r.body)
	}
	if in := e.integration(e.demo.MerchantID, "eduzz"); in.WebhookSecret != secret || in.CheckoutURL != "https://sun.eduzz.com/2384756?utm_source=insta" {
		t.Errorf("Eduzz saved as %+v", in)
	}
	page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	for _, want := range []string{"The Eduzz settings were saved.", `value="https://sun.eduzz.com/2384756?utm_source=insta"`,
		`data-testid="webhook-url-eduzz" id="webhook-url-eduzz">` + merchant.WebhookURL(e.deps.Config.IngestPublicURL, "eduzz", mid) + "<",
		`data-testid="no-pull-eduzz">Convida cannot read this platform&#39;s sales`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %s: %s", want, page.body)
		}
	}
	if strings.Contains(page.body, `data-testid="api-status-eduzz"`) || strings.Contains(page.body, `data-testid="no-pull-kiwify"`) ||
		strings.Contains(page.body, secret) || e.logged(secret) {
		t.Errorf("the page shows an API status or a no-pull sentence where it should not, or the secret: %s", page.body)
	}
	if pt := e.do(owner, http.MethodGet, "/dashboard/integrations", nil, "Accept-Language", "pt-BR"); !strings.Contains(pt.body,
		`data-testid="no-pull-eduzz">O Convida não lê as vendas desta plataforma`) {
		t.Errorf("the Portuguese page does not say Eduzz's sales are not read: %s", pt.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/eduzz/reconcile", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("reconcile Eduzz: %d, want 404", r.StatusCode)
	}
	e.campaignFor(e.demo)
	ana := e.createMember(owner, "Ana Souza", "ana@example.com")
	stored, err := postgres.NewMemberStore(e.deps.Pool).FindMemberByID(context.Background(), mid, ana)
	if err != nil {
		t.Fatal(err)
	}
	memberPage := e.do(owner, http.MethodGet, "/dashboard/members/"+ana.String(), nil)
	if want := `Eduzz referral link</dt><dd><code data-testid="eduzz-link">https://sun.eduzz.com/2384756?utm_content=` + stored.CouponCode +
		"&amp;utm_source=insta<"; !strings.Contains(memberPage.body, want) {
		t.Errorf("the member's page lacks her Eduzz link %s: %s", want, memberPage.body)
	}
}

// "Reconcile now": shown once the platform's API credentials are saved;
// a click records a run over RECONCILE_WINDOW for the scheduler and says
// so, in the Activity page too; a second within RECONCILE_COOLDOWN says
// it is too soon and from when another may be asked for (in both
// languages), one after it while the run still runs says one is running,
// and the page lists the last runs. A viewer cannot ask for one.
func TestIntegrationsReconcileNow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if strings.Contains(page.body, `data-testid="reconcile-guru"`) || !strings.Contains(page.body, "No reconciliation yet.") {
		t.Errorf("before the API credentials: the page offers a reconciliation: %s", page.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/guru/reconcile", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("reconcile without credentials: %d", r.StatusCode)
	}
	if page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil); !strings.Contains(page.body, "Reconciliation needs the platform&#39;s API credentials") {
		t.Errorf("reconcile without credentials: the page does not say why: %s", page.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/guru", url.Values{"user_token": {"guru-user"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save the user token: %d", r.StatusCode)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, `data-testid="reconcile-guru">Reconcile now<`) || strings.Contains(page.body, `data-testid="reconcile-yampi"`) {
		t.Errorf("with Guru's user token: want the button for Guru alone: %s", page.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/guru/reconcile", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("reconcile: %d", r.StatusCode)
	}
	page = e.do(owner, http.MethodGet, "/dashboard/integrations", nil)
	if !strings.Contains(page.body, "Reconciliation requested") || !strings.Contains(page.body, `data-testid="runs-guru"`) ||
		!strings.Contains(page.body, "<td>Running</td>") {
		t.Errorf("after asking: want the notice and the running run: %s", page.body)
	}
	var from, to time.Time
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT window_from, window_to FROM reconciliation_runs WHERE merchant_id = $1 AND provider = 'guru'`,
		uuid.MustParse(e.demo.MerchantID)).Scan(&from, &to); err != nil || to.Sub(from) != e.deps.Config.ReconcileWindow {
		t.Errorf("the run's window: %s to %s (%v), want RECONCILE_WINDOW", from, to, err)
	}
	var started time.Time
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT started_at FROM reconciliation_runs WHERE merchant_id = $1`,
		uuid.MustParse(e.demo.MerchantID)).Scan(&started); err != nil {
		t.Fatal(err)
	}
	saoPaulo, err := time.LoadLocation("America/Sao_Paulo") // the merchant's zone
	if err != nil {
		t.Fatal(err)
	}
	next := dashboard.FormatDate(dashboard.English, saoPaulo, started.Add(e.deps.Config.ReconcileCooldown))
	e.do(owner, http.MethodPost, "/dashboard/integrations/guru/reconcile", nil)
	if page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil); !strings.Contains(page.body, "Too soon: a reconciliation of this platform started only minutes ago") ||
		!strings.Contains(page.body, `data-testid="reconcile-next-guru">You can ask for the next reconciliation from `+next+".<") {
		t.Errorf("a second within the cooldown: the page does not say it is too soon, and from %s: %s", next, page.body)
	}
	e.do(owner, http.MethodPost, "/dashboard/integrations/guru/reconcile", nil, "Accept-Language", "pt-BR")
	if page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil, "Accept-Language", "pt-BR"); !strings.Contains(page.body, "Cedo demais: uma conciliação desta plataforma começou há poucos minutos") ||
		!strings.Contains(page.body, "Você pode pedir a próxima conciliação a partir de") {
		t.Errorf("a third within the cooldown, in Portuguese: the page does not say it is too soon: %s", page.body)
	}
	var runs int
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM reconciliation_runs WHERE merchant_id = $1`,
		uuid.MustParse(e.demo.MerchantID)).Scan(&runs); err != nil || runs != 1 {
		t.Errorf("runs = %d (%v) after the refusals, want 1", runs, err)
	}
	e.clock.Advance(e.deps.Config.ReconcileCooldown)
	e.do(owner, http.MethodPost, "/dashboard/integrations/guru/reconcile", nil)
	if page := e.do(owner, http.MethodGet, "/dashboard/integrations", nil); !strings.Contains(page.body, "already running") ||
		strings.Contains(page.body, `data-testid="reconcile-next-guru"`) {
		t.Errorf("a second after the cooldown while one runs: the page does not say so: %s", page.body)
	}
	// The request that recorded the run is on the Activity page, the
	// refused ones are not.
	activity := e.do(owner, http.MethodGet, "/dashboard/settings/activity?action=reconciliation.requested", nil)
	if n := strings.Count(activity.body, "<td>Reconciliation requested</td>"); n != 1 {
		t.Errorf("the Activity page shows %d reconcile requests, want 1: %s", n, activity.body)
	}
	if r := e.do(e.viewer(), http.MethodPost, "/dashboard/integrations/guru/reconcile", nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's reconcile: %d, want 403", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/integrations/shopify/reconcile", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown platform: %d, want 404", r.StatusCode)
	}
}
