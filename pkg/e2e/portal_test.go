package e2e

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/l10n"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/testenv"
)

// member is a browser of the portal: its own cookies, redirects not
// followed, so that each answer is seen.
type portalBrowser struct {
	t      *testing.T
	base   string
	client *http.Client
}

func newPortalBrowser(t *testing.T, base string) *portalBrowser {
	jar, _ := cookiejar.New(nil)
	return &portalBrowser{t: t, base: base, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

// get and post send what a browser on the portal's own origin sends.
func (b *portalBrowser) get(path string) page { return b.send(http.MethodGet, path, nil, nil) }

func (b *portalBrowser) post(path string, form url.Values) page {
	return b.send(http.MethodPost, path, form, map[string]string{"Origin": b.base, "Sec-Fetch-Site": "same-origin"})
}

func (b *portalBrowser) send(method, path string, form url.Values, header map[string]string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 {
		b.t.Errorf("%s %s answered %d: %s", method, path, res.StatusCode, raw)
	}
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

// pathOf is the path and query of a URL the API minted under PUBLIC_URL.
func pathOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

// TestPortalDoors: the member's portal as issue 31's acceptance says,
// from outside: a minted link lands on /portal with her code and link,
// once (then 410); another member's session shows only hers; the wallet in
// Portuguese and English; referrals masked; the QR code; a store-coupon
// redemption debits once and shows the code; sign-in by e-mail through a
// local SMTP server; the embed's CSP and cookie; cross-site POSTs 403.
func TestPortalDoors(t *testing.T) {
	t.Parallel()
	smtp := testenv.NewSMTPServer(t)
	s := startStack(t, stackOptions{dispatcher: true, observe: true, env: map[string]string{"REDEMPTION_RETRY_DELAYS": "50ms,50ms",
		"ACTION_TIMEOUT": "60s", "SMTP_URL": smtp.URL(), "SMTP_FROM": "rewards@convida.example"}})
	yampi := newPlatform(t)
	tn, ana := s.richMember(t, 5000, 500, nil, yampi)
	anaID := ids.Format(ids.Member, ana.ID)
	bia := s.newMember(tn, "bia@example.com", "Bia Lima")

	status, body := s.api(tn, http.MethodPost, "/members/"+anaID+"/portal-sessions", []byte(`{"locale":"pt-BR"}`))
	if status != 201 {
		t.Fatalf("mint = %d %v", status, body)
	}
	link := pathOf(t, body["data"].(map[string]any)["url"].(string))
	b := newPortalBrowser(t, s.apiURL)
	p := b.get(link)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/portal" {
		t.Fatalf("GET %s = %d %v", link, p.status, p.header)
	}
	if c := p.header.Get("Set-Cookie"); !strings.HasPrefix(c, "convida_portal=") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
		t.Errorf("session cookie = %q", c)
	}
	if again := newPortalBrowser(t, s.apiURL).get(link); again.status != http.StatusGone {
		t.Errorf("the same link again = %d, want 410", again.status)
	}

	// Share: her code, her link, WhatsApp, the QR code.
	status, me := s.api(tn, http.MethodGet, "/member/me?email=ana@example.com", nil)
	refLink := me["data"].(map[string]any)["referralLink"].(string)
	if status != 200 || refLink == "" {
		t.Fatalf("member/me = %d %v", status, me)
	}
	share := b.get("/portal")
	if share.status != 200 || !strings.Contains(share.body, ana.CouponCode) || !strings.Contains(share.body, html.EscapeString(refLink)) {
		t.Fatalf("share page = %d, want her code %s and link %s:\n%s", share.status, ana.CouponCode, refLink, share.body)
	}
	if !strings.Contains(share.body, html.EscapeString("https://wa.me/?text=")) || !strings.Contains(share.body, url.QueryEscape(refLink)) {
		t.Errorf("no WhatsApp link carrying %s", url.QueryEscape(refLink))
	}
	if csp := share.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") ||
		share.header.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("headers = %v", share.header)
	}
	if qr := b.get("/portal/qr.svg"); qr.status != 200 || qr.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(qr.body, "<svg") {
		t.Errorf("qr.svg = %d %s %.60s", qr.status, qr.header.Get("Content-Type"), qr.body)
	}

	// Another member's session sees her own only.
	status, body = s.api(tn, http.MethodPost, "/members/"+ids.Format(ids.Member, bia.ID)+"/portal-sessions", nil)
	if status != 201 {
		t.Fatalf("mint bia = %d %v", status, body)
	}
	other := newPortalBrowser(t, s.apiURL)
	other.get(pathOf(t, body["data"].(map[string]any)["url"].(string)))
	for _, path := range []string{"/portal", "/portal/wallet", "/portal/referrals", "/portal/redeem"} {
		pg := other.get(path)
		if pg.status != 200 || strings.Contains(pg.body, ana.CouponCode) || strings.Contains(pg.body, "50,00") {
			t.Errorf("bia's %s = %d shows ana's data", path, pg.status)
		}
	}

	// Cross-site POSTs: 403.
	for _, path := range []string{"/portal/redeem", "/portal/language", "/portal/sign-out", "/portal/sign-in"} {
		for _, h := range []map[string]string{{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
			if pg := b.send(http.MethodPost, path, url.Values{"amount": {"10,00"}, "type": {"store_credit"}}, h); pg.status != http.StatusForbidden {
				t.Errorf("cross-site POST %s %v = %d, want 403", path, h, pg.status)
			}
		}
	}

	// Redeem a store coupon: once, the code shown.
	form := url.Values{"amount": {"10,00"}, "type": {"store_credit"}, "key": {uuid.NewString()}}
	done := b.post("/portal/redeem", form)
	code := regexp.MustCompile(`id="coupon-code">([^<]+)<`).FindStringSubmatch(done.body)
	if done.status != 200 || code == nil {
		t.Fatalf("redeem = %d:\n%s", done.status, done.body)
	}
	if again := b.post("/portal/redeem", form); again.status != 200 || !strings.Contains(again.body, code[1]) {
		t.Errorf("the same form again = %d", again.status)
	}
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 5000, available: 4000, totalRedeemed: 1000})
	if seen := yampi.seen(); len(seen) != 1 || !strings.Contains(seen[0], `"code":"`+code[1]+`"`) {
		t.Errorf("yampi saw %q", seen)
	}
	if below := b.post("/portal/redeem", url.Values{"amount": {"1,00"}, "type": {"store_credit"}, "key": {uuid.NewString()}}); below.status != 422 {
		t.Errorf("below the minimum = %d", below.status)
	}

	// A pending credit: the wallet says when it becomes available.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "portal-2", ana.CouponCode, 100, "approved")), 200)
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 10000, available: 4000, pending: 5000, totalRedeemed: 1000})
	var release time.Time
	var buyerEmail string
	if err := s.deps.Pool.QueryRow(context.Background(), `SELECT warranty_expires_at, referee_email FROM referrals
  WHERE merchant_id = $1 AND order_id = 'portal-2'`, tn.merchant.ID).Scan(&release, &buyerEmail); err != nil {
		t.Fatal(err)
	}
	zone, _ := time.LoadLocation("America/Sao_Paulo")
	wal := b.get("/portal/wallet")
	for _, want := range []string{"R$ 40,00", "R$ 50,00", "R$ 10,00", l10n.FormatDay(l10n.Portuguese, zone, release), "portal-2"} {
		if !strings.Contains(wal.body, want) {
			t.Errorf("the wallet in Portuguese has no %q:\n%s", want, wal.body)
		}
	}
	refs := b.get("/portal/referrals")
	if refs.status != 200 || buyerEmail == "" || strings.Contains(refs.body, buyerEmail) || !strings.Contains(refs.body, portalaccess.MaskEmail(buyerEmail)) {
		t.Errorf("referrals = %d, want %s masked as %s:\n%s", refs.status, buyerEmail, portalaccess.MaskEmail(buyerEmail), refs.body)
	}
	if sw := b.post("/portal/language", url.Values{"lang": {"en"}, "next": {"/portal/wallet"}}); sw.status != http.StatusSeeOther || sw.header.Get("Location") != "/portal/wallet" {
		t.Errorf("language switch = %d %v", sw.status, sw.header)
	}
	if en := b.get("/portal/wallet"); !strings.Contains(en.body, "R$40.00") || !strings.Contains(en.body, l10n.FormatDay(l10n.English, zone, release)) {
		t.Errorf("the wallet in English:\n%s", en.body)
	}

	// Sign-in by e-mail: the same answer for a known and an unknown
	// e-mail; one e-mail, whose link signs in after the button, once.
	anon := newPortalBrowser(t, s.apiURL)
	if f := anon.get("/portal/sign-in?merchant=" + tn.merchant.ID.String()); f.status != 200 || !strings.Contains(f.body, `name="email"`) {
		t.Fatalf("sign-in form = %d %s", f.status, f.body)
	}
	reqID := regexp.MustCompile(`(?s)<p class="request-id">.*?</p>`)
	known := anon.post("/portal/sign-in", url.Values{"merchant": {tn.merchant.ID.String()}, "email": {"ana@example.com"}})
	unknown := anon.post("/portal/sign-in", url.Values{"merchant": {tn.merchant.ID.String()}, "email": {"nobody@example.com"}})
	if known.status != 200 || reqID.ReplaceAllString(known.body, "") != reqID.ReplaceAllString(unknown.body, "") {
		t.Errorf("known %d and unknown %d answers differ", known.status, unknown.status)
	}
	var mail []testenv.Mail
	testenv.Eventually(t, 10*time.Second, "the sign-in e-mail", func() bool { mail = smtp.Mail(); return len(mail) >= 1 })
	time.Sleep(200 * time.Millisecond)
	if mail = smtp.Mail(); len(mail) != 1 || mail[0].To[0] != "ana@example.com" {
		t.Fatalf("mail = %+v, want one to ana", mail)
	}
	m := regexp.MustCompile(`/portal/m/([A-Za-z0-9_-]{43})`).FindStringSubmatch(mail[0].Data)
	if m == nil {
		t.Fatalf("no link in %q", mail[0].Data)
	}
	reader := newPortalBrowser(t, s.apiURL)
	if c := reader.get("/portal/m/" + m[1]); c.status != 200 || c.header.Get("Set-Cookie") != "" || !strings.Contains(c.body, `method="post"`) {
		t.Errorf("the e-mailed link = %d %v", c.status, c.header)
	}
	if in := reader.post("/portal/m/"+m[1], url.Values{}); in.status != http.StatusSeeOther || in.header.Get("Location") != "/portal" {
		t.Fatalf("the button = %d %v", in.status, in.header)
	}
	if home := reader.get("/portal"); !strings.Contains(home.body, ana.CouponCode) {
		t.Errorf("signed in by e-mail: %d", home.status)
	}
	if twice := newPortalBrowser(t, s.apiURL).post("/portal/m/"+m[1], url.Values{}); twice.status != http.StatusGone {
		t.Errorf("the e-mailed link twice = %d, want 410", twice.status)
	}

	// The embed: CSP frame-ancestors, a Partitioned cookie; a wrong token 401.
	status, body = s.api(tn, http.MethodPut, "/portal/settings", []byte(`{"embed_origins":["https://shop.example","https://b.example"],"brand_color":"#112233"}`))
	if status != 200 {
		t.Fatalf("settings = %d %v", status, body)
	}
	status, body = s.api(tn, http.MethodPost, "/members/"+anaID+"/embed-tokens", nil)
	if status != 201 {
		t.Fatalf("embed token = %d %v", status, body)
	}
	emb := newPortalBrowser(t, s.apiURL).get(pathOf(t, body["data"].(map[string]any)["url"].(string)))
	if emb.status != http.StatusSeeOther || !strings.Contains(emb.header.Get("Content-Security-Policy"), "frame-ancestors https://shop.example https://b.example;") {
		t.Errorf("embed = %d CSP %q", emb.status, emb.header.Get("Content-Security-Policy"))
	}
	if c := emb.header.Get("Set-Cookie"); !strings.HasPrefix(c, "convida_portal_embed=") || !strings.Contains(c, "Partitioned") ||
		!strings.Contains(c, "SameSite=None") || !strings.Contains(c, "Secure") {
		t.Errorf("embed cookie = %q", c)
	}
	if bad := newPortalBrowser(t, s.apiURL).get("/embed/portal?token=" + strings.Repeat("A", 43)); bad.status != http.StatusUnauthorized {
		t.Errorf("a wrong embed token = %d, want 401", bad.status)
	}
	if js := b.get("/embed/portal.js"); js.status != 200 || strings.Contains(js.body, `"*"`) {
		t.Errorf("loader = %d", js.status)
	}

	// No token in the logs: the access log names the route's template.
	tokens := []string{strings.TrimPrefix(link, "/portal/s/"), m[1]}
	templates := map[string]bool{}
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	for _, e := range s.logs.All() {
		buf, err := enc.EncodeEntry(e.Entry, e.Context)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			if strings.Contains(buf.String(), tok) {
				t.Errorf("a log line holds a portal token: %s", buf.String())
			}
		}
		for _, f := range e.Context {
			if f.Key == "route" {
				templates[f.String] = true
			}
		}
	}
	if !templates["/portal/s/{token}"] || !templates["/portal/m/{token}"] {
		t.Errorf("the access log's routes = %v, want the portal's templates", templates)
	}

	// The portal off: its pages 404.
	if status, _ := s.api(tn, http.MethodPut, "/portal/settings", []byte(`{"enabled":false}`)); status != 200 {
		t.Fatal(status)
	}
	if off := b.get("/portal"); off.status != http.StatusNotFound {
		t.Errorf("the portal off = %d, want 404", off.status)
	}
}
