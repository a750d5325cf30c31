package portal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/portalaccess"
)

// The e-mailed sign-in's limits: per e-mail and per client address, over
// a window.
const (
	signInWindow    = 15 * time.Minute
	signInPerEmail  = 3
	signInPerClient = 20
	mailTimeout     = 30 * time.Second
)

type signInData struct {
	MerchantID string
	Available  bool // e-mail sign-in is configured (SMTP_URL)
	Sent       bool
	Token      string
}

func (p *Portal) signInRoutes() {
	p.routes.HandleFunc("GET "+Prefix+"/sign-in", p.signInForm)
	p.routes.HandleFunc("POST "+Prefix+"/sign-in", p.requestSignIn)
	p.routes.HandleFunc("GET "+Prefix+"/m/{token}", p.confirmSignIn)
	p.routes.HandleFunc("POST "+Prefix+"/m/{token}", p.signInByEmail)
}

// signInMerchant is the merchant a sign-in names, with its name on the
// page; nil (and a 404 answered) when unknown or its portal is off.
func (p *Portal) signInMerchant(w http.ResponseWriter, r *http.Request, c *Ctx, raw string) bool {
	id, err := uuid.Parse(strings.TrimSpace(raw))
	if err != nil {
		p.notFound(w, r, c)
		return false
	}
	mer, err := p.cfg.Merchants.FindMerchantByID(r.Context(), id)
	if err != nil {
		p.fail(w, r, c, err)
		return false
	}
	settings, err := p.cfg.Settings.PortalSettings(r.Context(), id)
	if err != nil {
		p.fail(w, r, c, err)
		return false
	}
	if !settings.Enabled {
		p.notFound(w, r, c)
		return false
	}
	c.Merchant, c.Settings = mer, settings
	return true
}

// signInForm is GET /portal/sign-in?merchant=: the e-mail form.
func (p *Portal) signInForm(w http.ResponseWriter, r *http.Request) {
	c := p.anonymous(r)
	if !p.signInMerchant(w, r, c, r.URL.Query().Get("merchant")) {
		return
	}
	p.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title",
		Data: signInData{MerchantID: c.Merchant.ID.String(), Available: p.cfg.Mailer != nil}})
}

// requestSignIn is POST /portal/sign-in: the same page whether or not the
// e-mail is a member's; a member's gets a link, sent after the answer.
func (p *Portal) requestSignIn(w http.ResponseWriter, r *http.Request) {
	c := p.anonymous(r)
	if !p.signInMerchant(w, r, c, r.PostFormValue("merchant")) {
		return
	}
	data := signInData{MerchantID: c.Merchant.ID.String(), Available: p.cfg.Mailer != nil, Sent: true}
	email := strings.ToLower(strings.TrimSpace(r.PostFormValue("email")))
	if p.cfg.Mailer != nil && email != "" && len(email) <= bounds.Email && member.ValidEmail(email) {
		lang := p.lang(r)
		client := p.cfg.TrustedProxies.String(r)
		go p.sendSignIn(c.Merchant.ID, c.Merchant.Name, email, client, lang)
	}
	p.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Data: data})
}

// sendSignIn e-mails a sign-in link to email if it is a member's of the
// merchant, within the limits; it runs after the answer, and at most 16
// at once (more are dropped: the member asks again).
func (p *Portal) sendSignIn(merchantID uuid.UUID, merchantName, email, client, lang string) {
	select {
	case p.mail <- struct{}{}:
		defer func() { <-p.mail }()
	default:
		p.log.Warn("portal: too many sign-in e-mails at once: one dropped")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mailTimeout)
	defer cancel()
	sum := sha256.Sum256([]byte(email))
	digest := hex.EncodeToString(sum[:])
	ok, err := p.cfg.SignIns.ClaimPortalSignIn(ctx, digest, client, p.now(), signInWindow, signInPerEmail, signInPerClient)
	if err != nil || !ok {
		if err != nil {
			p.log.Warn("portal: sign-in limit", zap.Error(err))
		}
		return
	}
	m, err := p.cfg.Members.FindMemberByEmailOrExternalID(ctx, merchantID, email, "")
	if err != nil || portalaccess.Available(m) != nil {
		return // unknown, blocked or erased: nothing is sent, and the page said the same
	}
	token, _, err := portalaccess.Mint(ctx, p.cfg.Tokens, portalaccess.KindSignIn, m, "", lang, p.now())
	if err != nil {
		p.log.Warn("portal: sign-in token", zap.Error(err))
		return
	}
	subject := strings.ReplaceAll(texts.Text(lang, "mail.subject"), "{store}", merchantName)
	body := strings.ReplaceAll(texts.Text(lang, "mail.body"), "{store}", merchantName) + "\n\n" +
		strings.TrimSuffix(p.cfg.PublicURL, "/") + Prefix + "/m/" + token.Plain + "\n\n" + texts.Text(lang, "mail.ignore") + "\n"
	if err := p.cfg.Mailer.Send(ctx, m.Email, subject, body); err != nil {
		// The error, never the link.
		p.log.Warn("portal: sign-in e-mail not sent", zap.String("merchant_id", merchantID.String()), zap.Error(err))
	}
}

// confirmSignIn is GET /portal/m/{token}: a page with one button. A mail
// scanner that opens the link signs no one in; the button's POST does.
func (p *Portal) confirmSignIn(w http.ResponseWriter, r *http.Request) {
	c := p.anonymous(r)
	token := r.PathValue("token")
	if !portalaccess.WellFormed(token) {
		p.message(w, r, c, http.StatusGone, "link.gone.title", "link.gone")
		return
	}
	p.render(w, r, c, Page{Template: "sign_in_confirm", Title: "sign_in.confirm_title", Data: signInData{Token: token}})
}

// signInByEmail is POST /portal/m/{token}: the link, once, within 15 min.
func (p *Portal) signInByEmail(w http.ResponseWriter, r *http.Request) {
	p.useToken(w, r, portalaccess.KindSignIn, r.PathValue("token"), http.StatusGone)
}
