package dashboard

import (
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/apperr"
)

// Sign-in throttling: after maxFailures failed sign-ins for one e-mail or
// from one client IP within failureWindow, sign-in answers 429 (even with
// the right password) until the window has passed. The count is in
// PostgreSQL, shared by every API replica.
const (
	maxFailures   = 10
	failureWindow = 15 * time.Minute
	minPassword   = 10
)

// dummyHash is compared against when the e-mail is unknown, so that an
// unknown e-mail takes as long as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("convida-dashboard-dummy"), bcrypt.DefaultCost)

type signInData struct {
	Email, Alert string
}

func (d *Dashboard) signInRoutes() {
	d.public("GET "+Prefix+"/sign-in", d.signInPage)
	d.public("POST "+Prefix+"/sign-in", d.signInSubmit)
	d.page("POST "+Prefix+"/sign-out", d.signOut)
	d.public("POST "+Prefix+"/language", d.chooseLanguage)
	d.page("GET "+Prefix+"/settings/password", d.passwordPage)
	d.page("POST "+Prefix+"/settings/password", d.changePassword)
}

func (d *Dashboard) signInPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if d.sessions.GetString(r.Context(), sessionUser) != "" {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	d.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Data: signInData{}})
}

func (d *Dashboard) signInSubmit(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostFormValue("email"))
	password := r.PostFormValue("password")
	ip := clientIP(r)
	again := func(status int, alert string) {
		d.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Status: status,
			Data: signInData{Email: email, Alert: alert}})
	}
	now := d.now()
	byEmail, byIP, err := d.cfg.Users.SignInFailures(ctx, email, ip, now.Add(-failureWindow))
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if byEmail >= maxFailures || byIP >= maxFailures {
		d.log.Warn("dashboard sign-in throttled", zap.String("client_ip", ip))
		again(http.StatusTooManyRequests, "sign_in.throttled")
		return
	}
	u, err := d.cfg.Users.FindUserByEmail(ctx, email)
	hash := dummyHash
	if err == nil {
		hash = []byte(u.PasswordHash)
	} else if !apperr.Is(err, apperr.NotFound) {
		d.fail(w, r, c, err)
		return
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || err != nil {
		if err := d.cfg.Users.RecordSignInFailure(ctx, email, ip, now); err != nil {
			d.fail(w, r, c, err)
			return
		}
		again(http.StatusUnauthorized, "sign_in.invalid")
		return
	}
	if err := d.signIn(r, u); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if err := d.cfg.Users.DeleteExpiredSessions(ctx); err != nil {
		d.log.Warn("dashboard: deleting expired sessions", zap.Error(err))
	}
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// clientIP is the connection's address: the dashboard trusts no
// forwarding header, which a client could forge to dodge the throttle.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if err := d.sessions.Destroy(r.Context()); err != nil {
		d.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
}

// chooseLanguage keeps the chosen language in the session and goes back
// to the page the switch was on.
func (d *Dashboard) chooseLanguage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if l := r.PostFormValue("lang"); l == English || l == Portuguese {
		d.sessions.Put(r.Context(), sessionLang, l)
	}
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

// localPath is next when it is a path of the dashboard, else the
// overview: a redirect never leaves the dashboard.
func localPath(next string) string {
	if next == Prefix || (strings.HasPrefix(next, Prefix+"/") && !strings.ContainsAny(next, "\\") && !strings.Contains(next, "//")) {
		return next
	}
	return Prefix
}

type passwordData struct{ Alert string }

func (d *Dashboard) passwordPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.render(w, r, c, Page{Template: "password", Title: "password.title", Nav: "password", Data: passwordData{}})
}

// changePassword changes the signed-in user's own password (any role may).
func (d *Dashboard) changePassword(w http.ResponseWriter, r *http.Request, c *Ctx) {
	again := func(status int, alert string) {
		d.render(w, r, c, Page{Template: "password", Title: "password.title", Nav: "password", Status: status,
			Data: passwordData{Alert: alert}})
	}
	if bcrypt.CompareHashAndPassword([]byte(c.User.PasswordHash), []byte(r.PostFormValue("current"))) != nil {
		again(http.StatusUnprocessableEntity, "password.wrong")
		return
	}
	hash, ok := hashPassword(r.PostFormValue("new"))
	if !ok {
		again(http.StatusUnprocessableEntity, "password.too_short")
		return
	}
	if err := d.cfg.Users.SetPassword(r.Context(), c.User.MerchantID, c.User.ID, hash); err != nil {
		d.fail(w, r, c, err)
		return
	}
	// A new token: a session stolen before the change does not survive it.
	if err := d.sessions.RenewToken(r.Context()); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "password.changed")
	http.Redirect(w, r, Prefix+"/settings/password", http.StatusSeeOther)
}

// hashPassword returns the bcrypt hash of a new password, or false when it
// is too short (bcrypt also refuses more than 72 bytes).
func hashPassword(p string) (string, bool) {
	if len([]rune(p)) < minPassword || len(p) > 72 {
		return "", false
	}
	h, err := bcrypt.GenerateFromPassword([]byte(p), bcrypt.DefaultCost)
	return string(h), err == nil
}
