package portal

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/l10n"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/portalaccess"
)

// The session's keys: the member and her merchant, the language chosen,
// and where "back to the store" goes.
const (
	sessionMember    = "member_id"
	sessionMerchant  = "merchant_id"
	sessionLang      = "lang"
	sessionReturnURL = "return_url"
)

// Ctx is what a page is given: the member, her merchant and its portal
// settings (nil on the pages without a session), the language and time
// zone.
type Ctx struct {
	Member    *member.Member
	Merchant  *merchant.Merchant
	Settings  portalaccess.Settings
	Lang      string
	Loc       *time.Location
	Base      string // /portal or /embed/portal
	ReturnURL string
	Embedded  bool
}

// AllowedOrigins are the origins the embedded page may tell its height
// to (assets/portal.js): the merchant's embed origins, space-separated.
func (c *Ctx) AllowedOrigins() string { return strings.Join(c.Settings.EmbedOrigins, " ") }

type handler func(w http.ResponseWriter, r *http.Request, c *Ctx)

// defaultZone is the merchants' time zone until a merchant can choose one.
var defaultZone = l10n.Zone

// lang is the language of r: the session's (the switch, or the locale the
// link was minted with), else the switch's cookie, else Accept-Language,
// else Portuguese.
func (p *Portal) lang(r *http.Request) string {
	if l := p.sessions(r).GetString(r.Context(), sessionLang); l10n.Valid(l) {
		return l
	}
	return p.langNoSession(r)
}

// langNoSession is lang before the session is loaded.
func (p *Portal) langNoSession(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil && l10n.Valid(c.Value) {
		return c.Value
	}
	return l10n.FromHeader(r, l10n.Portuguese)
}

// anonymous is the Ctx of a page without a member.
func (p *Portal) anonymous(r *http.Request) *Ctx {
	return &Ctx{Lang: p.lang(r), Loc: defaultZone, Base: base(r), Embedded: embedded(r)}
}

// member registers a page for a member with a session: without one, 401
// and a page saying to open the portal again from the store.
func (p *Portal) member(pattern string, h handler) {
	p.routes.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if c := p.signedIn(w, r); c != nil {
			h(w, r, c)
		}
	})
}

// signedIn loads the session's member, or answers and returns nil: 401
// without a session, 404 when the merchant turned the portal off, 403 when
// the member was blocked or erased since (the session ends).
func (p *Portal) signedIn(w http.ResponseWriter, r *http.Request) *Ctx {
	ctx := r.Context()
	sm := p.sessions(r)
	c := p.anonymous(r)
	mid, err1 := uuid.Parse(sm.GetString(ctx, sessionMerchant))
	uid, err2 := uuid.Parse(sm.GetString(ctx, sessionMember))
	if err1 != nil || err2 != nil {
		p.message(w, r, c, http.StatusUnauthorized, "session.expired.title", "session.expired")
		return nil
	}
	accesslog.Merchant(r, mid.String())
	settings, err := p.cfg.Settings.PortalSettings(ctx, mid)
	if err != nil {
		p.fail(w, r, c, err)
		return nil
	}
	c.Settings = settings
	if !settings.Enabled {
		p.notFound(w, r, c)
		return nil
	}
	m, err := p.cfg.Members.FindMemberByID(ctx, mid, uid)
	if err == nil {
		err = portalaccess.Available(m)
	}
	if apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.MemberUnavailable) {
		if err := sm.Destroy(ctx); err != nil {
			p.fail(w, r, c, err)
			return nil
		}
		p.message(w, r, c, http.StatusForbidden, "unavailable.title", "unavailable")
		return nil
	}
	if err != nil {
		p.fail(w, r, c, err)
		return nil
	}
	mer, err := p.cfg.Merchants.FindMerchantByID(ctx, mid)
	if err != nil {
		p.fail(w, r, c, err)
		return nil
	}
	c.Member, c.Merchant = m, mer
	c.ReturnURL = sm.GetString(ctx, sessionReturnURL)
	return c
}

// start begins g's member's session under a new session token (no
// fixation) and sends her to the share page.
func (p *Portal) start(w http.ResponseWriter, r *http.Request, g *portalaccess.Grant) {
	ctx := r.Context()
	sm := p.sessions(r)
	c := p.anonymous(r)
	settings, err := p.cfg.Settings.PortalSettings(ctx, g.MerchantID)
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	if !settings.Enabled {
		p.notFound(w, r, c)
		return
	}
	if embedded(r) {
		p.frameAncestors(w, r, settings)
	}
	m, err := p.cfg.Members.FindMemberByID(ctx, g.MerchantID, g.MemberID)
	if err == nil {
		err = portalaccess.Available(m)
	}
	if err != nil {
		if apperr.Is(err, apperr.MemberUnavailable) || apperr.Is(err, apperr.NotFound) {
			p.message(w, r, c, http.StatusForbidden, "unavailable.title", "unavailable")
			return
		}
		p.fail(w, r, c, err)
		return
	}
	if err := sm.RenewToken(ctx); err != nil {
		p.fail(w, r, c, err)
		return
	}
	sm.Put(ctx, sessionMerchant, g.MerchantID.String())
	sm.Put(ctx, sessionMember, g.MemberID.String())
	if g.Locale != "" {
		sm.Put(ctx, sessionLang, g.Locale)
	}
	sm.Put(ctx, sessionReturnURL, g.ReturnURL)
	accesslog.Merchant(r, g.MerchantID.String())
	http.Redirect(w, r, base(r), http.StatusSeeOther)
}

// exchange is GET /portal/s/{token}: the link a merchant's backend minted,
// once, within two minutes; otherwise 410 and a page saying so.
func (p *Portal) exchange(w http.ResponseWriter, r *http.Request) {
	p.useToken(w, r, portalaccess.KindSession, r.PathValue("token"), http.StatusGone)
}

// useToken opens the portal with a token of kind, or answers refused and
// a page saying the link is used or expired.
func (p *Portal) useToken(w http.ResponseWriter, r *http.Request, kind portalaccess.Kind, token string, refused int) {
	c := p.anonymous(r)
	if !portalaccess.WellFormed(token) {
		p.message(w, r, c, refused, "link.gone.title", "link.gone")
		return
	}
	g, err := p.cfg.Tokens.UseToken(r.Context(), kind, portalaccess.HashToken(token), p.now())
	if apperr.Is(err, apperr.NotFound) {
		p.message(w, r, c, refused, "link.gone.title", "link.gone")
		return
	}
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	p.start(w, r, g)
}

// signOut ends the session.
func (p *Portal) signOut(w http.ResponseWriter, r *http.Request) {
	if err := p.sessions(r).Destroy(r.Context()); err != nil {
		p.fail(w, r, nil, err)
		return
	}
	p.message(w, r, p.anonymous(r), http.StatusOK, "signed_out.title", "signed_out")
}

// chooseLanguage keeps the language chosen: in the session when there is
// one, else in a cookie; then back to the page the switch was on.
func (p *Portal) chooseLanguage(w http.ResponseWriter, r *http.Request) {
	l := r.PostFormValue("lang")
	if l10n.Valid(l) {
		sm := p.sessions(r)
		if sm.Exists(r.Context(), sessionMember) {
			sm.Put(r.Context(), sessionLang, l)
		} else {
			http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: base(r), MaxAge: 365 * 24 * 3600,
				HttpOnly: true, SameSite: p.sessions(r).Cookie.SameSite, Secure: p.sessions(r).Cookie.Secure,
				Partitioned: p.sessions(r).Cookie.Partitioned})
		}
	}
	http.Redirect(w, r, localPath(r, r.PostFormValue("next")), http.StatusSeeOther)
}

// localPath is next when it is a path of r's door, else its share page.
func localPath(r *http.Request, next string) string {
	b := base(r)
	if len(next) < 2000 && (next == b || (len(next) > len(b) && next[:len(b)+1] == b+"/")) &&
		!strings.Contains(next, "\\") && !strings.Contains(next, "//") {
		return next
	}
	return b
}
