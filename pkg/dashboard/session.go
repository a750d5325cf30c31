package dashboard

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/l10n"
	"github.com/convida/convida/pkg/merchant"
)

// The session's keys. A session exists only for a signed-in user, or for
// one whose password was right for several merchants and who has yet to
// choose one (sessionChoices, signin_merchant.go): an anonymous visitor's
// language is a cookie of its own (language.go).
const (
	sessionUser      = "user_id"
	sessionMerchant  = "merchant_id"
	sessionVersion   = "session_version"
	sessionFlash     = "flash"
	sessionChoices   = "merchant_choices"
	sessionChoicesAt = "merchant_choices_at"
)

// Ctx is what every handler is given: the signed-in user and merchant
// (nil on the public pages), the language and the time zone to show.
type Ctx struct {
	User     *merchant.DashboardUser
	Merchant *merchant.Merchant
	Lang     string
	Loc      *time.Location
}

// IsOwner reports whether the signed-in user may change things.
func (c *Ctx) IsOwner() bool { return c.User != nil && c.User.Role == merchant.RoleOwner }

// MerchantID is the signed-in user's merchant: every store call of a page
// is scoped by it, so another merchant's ids are not found (404).
func (c *Ctx) MerchantID() uuid.UUID { return c.Merchant.ID }

// handler is a dashboard handler: a page or an action.
type handler func(w http.ResponseWriter, r *http.Request, c *Ctx)

// defaultZone is the merchants' time zone until a merchant can choose one.
var defaultZone = l10n.Zone

// public registers a handler anyone may reach (sign in, invitations).
func (d *Dashboard) public(pattern string, h handler) {
	d.routes.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h(w, r, &Ctx{Lang: requestLang(r), Loc: defaultZone})
	})
}

// page registers a handler for any signed-in user: pages to look at, and
// the few POSTs that change only the user's own things (sign out, own
// password). Without a session it redirects to sign in. The user is the
// actor of the audit events the handler's changes write.
func (d *Dashboard) page(pattern string, h handler) {
	d.routes.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if c := d.signedIn(w, r); c != nil {
			typedDays(r, c.Lang)
			h(w, d.actingAs(r, c.User), c)
		}
	})
}

// actingAs returns r carrying u, from r's client address (clientip, as
// TRUSTED_PROXIES tells it), as the actor of the audit events written
// under its context: the user's id, labelled with their e-mail.
func (d *Dashboard) actingAs(r *http.Request, u *merchant.DashboardUser) *http.Request {
	actor := audit.Actor{Type: audit.ActorDashboardUser, ID: u.ID.String(), Label: u.Email}
	return r.WithContext(audit.WithActor(r.Context(), actor, d.cfg.Access.TrustedProxies.String(r)))
}

// anonymous returns r carrying a client who has not signed in, from r's
// client address, as the actor of the audit events written under its
// context (a failed sign-in names no user as its actor).
func (d *Dashboard) anonymous(r *http.Request) *http.Request {
	return r.WithContext(audit.WithActor(r.Context(), audit.Anonymous, d.cfg.Access.TrustedProxies.String(r)))
}

// action registers a state-changing handler for owners only: a viewer
// gets 403 and a page saying so. Every phase-2 POST that changes merchant
// data registers through action.
func (d *Dashboard) action(pattern string, h handler) {
	d.page(pattern, func(w http.ResponseWriter, r *http.Request, c *Ctx) {
		if !c.IsOwner() {
			d.render(w, r, c, Page{Template: "error", Title: "error.forbidden.title", Status: http.StatusForbidden,
				Data: errorData{Message: "error.forbidden.viewer"}})
			return
		}
		h(w, r, c)
	})
}

// signedIn loads the session's user and merchant, or redirects to sign in
// (303) and returns nil. A user removed since signing in, or whose session
// version moved on (a password change in another session), is signed out:
// the session is destroyed on the server.
func (d *Dashboard) signedIn(w http.ResponseWriter, r *http.Request) *Ctx {
	ctx := r.Context()
	uid, err1 := uuid.Parse(d.sessions.GetString(ctx, sessionUser))
	mid, err2 := uuid.Parse(d.sessions.GetString(ctx, sessionMerchant))
	if err1 != nil || err2 != nil {
		http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
		return nil
	}
	c := &Ctx{Lang: requestLang(r), Loc: defaultZone}
	u, err := d.cfg.Stores.Users.FindUser(ctx, mid, uid)
	if apperr.Is(err, apperr.NotFound) || (err == nil && u.SessionVersion != d.sessions.GetInt64(ctx, sessionVersion)) {
		if err := d.sessions.Destroy(ctx); err != nil {
			d.fail(w, r, c, err)
			return nil
		}
		http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
		return nil
	}
	if err != nil {
		d.fail(w, r, c, err)
		return nil
	}
	m, err := d.cfg.Stores.Merchants.FindMerchantByID(ctx, mid)
	if err != nil {
		d.fail(w, r, c, err)
		return nil
	}
	c.User, c.Merchant = u, m
	noteUser(r, u)
	return c
}

// noteUser names the user and the merchant on r's access-log line.
func noteUser(r *http.Request, u *merchant.DashboardUser) {
	accesslog.Merchant(r, u.MerchantID.String())
	accesslog.User(r, u.ID.String())
}

// signIn starts the user's session under a new token (no fixation), at
// the user's current session version.
func (d *Dashboard) signIn(r *http.Request, u *merchant.DashboardUser) error {
	ctx := r.Context()
	if err := d.sessions.RenewToken(ctx); err != nil {
		return err
	}
	d.sessions.Put(ctx, sessionUser, u.ID.String())
	d.sessions.Put(ctx, sessionMerchant, u.MerchantID.String())
	d.sessions.Put(ctx, sessionVersion, u.SessionVersion)
	d.sessions.Remove(ctx, sessionChoices)
	d.sessions.Remove(ctx, sessionChoicesAt)
	noteUser(r, u)
	return nil
}

// flash keeps a catalogue key to show once on the next page.
func (d *Dashboard) flash(r *http.Request, key string) {
	d.sessions.Put(r.Context(), sessionFlash, key)
}
