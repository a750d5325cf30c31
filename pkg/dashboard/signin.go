package dashboard

import (
	"net/http"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/merchant"
)

// dummyHash is compared against in place of users the e-mail does not
// have, so that an e-mail of no user, or of fewer than minComparisons
// users, takes as long as one of minComparisons.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("convida-dashboard-dummy"), bcrypt.DefaultCost)

// minComparisons is how many bcrypt comparisons every sign-in makes at
// least: an e-mail of no user, of one merchant's user or of two merchants'
// takes the same time, so a merchant that knows one of its users cannot
// tell from the time of a sign-in whether the e-mail is a user elsewhere.
// The comparisons run at once, so past it the time grows only with the
// e-mails of more merchants than the server has cores.
const minComparisons = 2

// passwordMatches returns the users whose password is password, comparing
// with each (and with dummyHash up to minComparisons) at once.
func passwordMatches(users []merchant.DashboardUser, password string) []merchant.DashboardUser {
	n := max(len(users), minComparisons)
	right := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		hash := dummyHash
		if i < len(users) {
			hash = []byte(users[i].PasswordHash)
		}
		wg.Go(func() { right[i] = bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil })
	}
	wg.Wait()
	var matched []merchant.DashboardUser
	for i, u := range users {
		if right[i] {
			matched = append(matched, u)
		}
	}
	return matched
}

type signInData struct {
	Email, Alert string
}

func (d *Dashboard) signInRoutes() {
	d.public("GET "+Prefix+"/sign-in", d.signInPage)
	d.public("POST "+Prefix+"/sign-in", d.signInSubmit)
	d.public("GET "+Prefix+"/sign-in/merchant", d.merchantChooser)
	d.public("POST "+Prefix+"/sign-in/merchant", d.chooseMerchant)
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
// pair). The password is compared with every user of the e-mail (one per
// merchant, each with its own password): one match signs in to its
// merchant and goes to the overview; more than one goes to the merchant
// chooser (signin_merchant.go).
//
// A wrong pair writes sign_in.failed in the trail of every merchant with a
// user of the e-mail, by nobody signed in, naming the e-mail by its
// digest (RecordFailedSignIn), and one log line for the operator whether
// or not the e-mail has a user. A right pair writes sign_in.succeeded once
// a merchant is entered. A throttled attempt, whose password is not
// checked, writes nothing: the failures that reached the limit are
// recorded, and the refusals beyond it would let a flood grow the trail.
// A user whose password did not match while another of the e-mail's did
// is not a failure: it is the same person entering another merchant.
func (d *Dashboard) signInSubmit(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostFormValue("email"))
	password := r.PostFormValue("password")
	var users, matched []merchant.DashboardUser
	res, err := d.throttled(r, email, func() (bool, error) {
		var err error
		if users, err = d.cfg.Stores.Users.FindUsersByEmail(ctx, email); err != nil {
			return false, err
		}
		matched = passwordMatches(users, password)
		return len(matched) > 0, nil
	})
	switch {
	case err != nil:
	case res == passwordWrong:
		d.log.Info("dashboard sign-in failed", zap.String("email_sha256", merchant.EmailDigest(email)),
			zap.String("client_ip", d.cfg.Access.TrustedProxies.String(r)))
		err = d.cfg.Stores.Users.RecordFailedSignIn(d.anonymous(r).Context(), users, merchant.EmailDigest(email))
	case res == passwordRight && len(matched) == 1:
		err = d.enter(r, &matched[0], nil)
	case res == passwordRight:
		err = d.offerMerchants(r, matched)
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	switch {
	case res == passwordThrottled:
		d.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Status: http.StatusTooManyRequests,
			Data: signInData{Email: email, Alert: "sign_in.throttled"}})
	case res == passwordWrong:
		d.render(w, r, c, Page{Template: "sign_in", Title: "sign_in.title", Status: http.StatusUnauthorized,
			Data: signInData{Email: email, Alert: "sign_in.invalid"}})
	case len(matched) > 1:
		http.Redirect(w, r, Prefix+"/sign-in/merchant", http.StatusSeeOther)
	default:
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
	}
}

// enter records u's sign-in (sign_in.succeeded by u, with details) and
// starts u's session.
func (d *Dashboard) enter(r *http.Request, u *merchant.DashboardUser, details map[string]any) error {
	if err := d.cfg.Stores.Users.RecordSignIn(d.actingAs(r, u).Context(), u, details); err != nil {
		return err
	}
	return d.signIn(r, u)
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
		version, err = d.cfg.Stores.Users.SetPassword(r.Context(), c.User.MerchantID, c.User.ID, hash)
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
