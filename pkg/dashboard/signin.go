package dashboard

import (
	"net/http"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
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

// signInSubmit checks the e-mail and password through the throttle: 401
// for a wrong pair, 429 past the throttle's limit (even for the right
// pair), else a new session and the overview.
//
// A checked password of a user's e-mail writes sign_in.succeeded or
// sign_in.failed in that user's merchant's trail, by the user as claimed,
// from the client's address. An e-mail of no user belongs to no merchant,
// so its attempts are in no trail (nor is the e-mail kept); a throttled
// attempt, whose password is not checked, writes nothing either: the
// failures that reached the limit are in the trail, and the refusals
// beyond it would let a flood from one address grow it.
func (d *Dashboard) signInSubmit(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostFormValue("email"))
	password := r.PostFormValue("password")
	var claimed *merchant.DashboardUser // the user of the e-mail, when there is one
	res, err := d.throttled(r, email, func() (bool, error) {
		found, err := d.cfg.Users.FindUserByEmail(ctx, email)
		hash := dummyHash
		if err == nil {
			hash, claimed = []byte(found.PasswordHash), found
		} else if !apperr.Is(err, apperr.NotFound) {
			return false, err
		}
		return bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil && err == nil, nil
	})
	if err == nil && res != passwordThrottled && claimed != nil {
		err = d.cfg.Users.RecordSignIn(d.actingAs(r, claimed).Context(), claimed, res == passwordRight, nil)
	}
	if err == nil && res == passwordRight {
		err = d.signIn(r, claimed)
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	switch res {
	case passwordThrottled:
		d.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Status: http.StatusTooManyRequests,
			Data: signInData{Email: email, Alert: "sign_in.throttled"}})
	case passwordWrong:
		d.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Status: http.StatusUnauthorized,
			Data: signInData{Email: email, Alert: "sign_in.invalid"}})
	default:
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
	}
}

// signOut destroys the session on the server (its row is deleted), so the
// old cookie signs in no more, wherever it was copied to.
func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if err := d.sessions.Destroy(r.Context()); err != nil {
		d.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
}

type passwordData struct{ Alert string }

func (d *Dashboard) passwordPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.render(w, r, c, Page{Template: "password", Title: "password.title", Nav: "password", Data: passwordData{}})
}

// changePassword changes the signed-in user's own password (any role may).
// The current password is checked through the sign-in throttle (the
// user's e-mail and the client's address). The change bumps the user's
// session version: every other session of the user is signed out at its
// next request, and this one goes on under a new token.
func (d *Dashboard) changePassword(w http.ResponseWriter, r *http.Request, c *Ctx) {
	again := func(status int, alert string) {
		d.render(w, r, c, Page{Template: "password", Title: "password.title", Nav: "password", Status: status,
			Data: passwordData{Alert: alert}})
	}
	newPassword := r.PostFormValue("new")
	if problem := passwordProblem(newPassword); problem != "" {
		again(http.StatusUnprocessableEntity, problem)
		return
	}
	res, err := d.throttled(r, c.User.Email, func() (bool, error) {
		return bcrypt.CompareHashAndPassword([]byte(c.User.PasswordHash), []byte(r.PostFormValue("current"))) == nil, nil
	})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	switch res {
	case passwordThrottled:
		again(http.StatusTooManyRequests, "password.throttled")
		return
	case passwordWrong:
		again(http.StatusUnprocessableEntity, "password.wrong")
		return
	}
	hash, err := hashPassword(newPassword)
	var version int64
	if err == nil {
		version, err = d.cfg.Users.SetPassword(r.Context(), c.User.MerchantID, c.User.ID, hash)
	}
	if err == nil {
		// A new token: a session stolen before the change does not survive it.
		err = d.sessions.RenewToken(r.Context())
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.sessions.Put(r.Context(), sessionVersion, version)
	d.flash(r, "password.changed")
	http.Redirect(w, r, Prefix+"/settings/password", http.StatusSeeOther)
}
