package dashboard

import (
	"net/http"
	"net/mail"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// Settings → Users: the merchant's users, invitations by one-time link
// (logged as "dashboard invite" until the dashboard sends e-mail), and the
// page that accepts one.

// inviteLifetime is how long an invitation link works.
const inviteLifetime = 7 * 24 * time.Hour

type usersData struct {
	Users        []merchant.DashboardUser
	Email, Alert string
}

type inviteData struct {
	Token, Email, Alert string
	Invalid             bool
}

func (d *Dashboard) userRoutes() {
	d.page("GET "+Prefix+"/settings/users", d.users)
	d.action("POST "+Prefix+"/settings/users/invite", d.invite)
	d.public("GET "+Prefix+"/invite/{token}", d.invitePage)
	d.public("POST "+Prefix+"/invite/{token}", d.acceptInvite)
}

func (d *Dashboard) users(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showUsers(w, r, c, http.StatusOK, usersData{})
}

func (d *Dashboard) showUsers(w http.ResponseWriter, r *http.Request, c *Ctx, status int, data usersData) {
	users, err := d.cfg.Users.ListUsers(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data.Users = users
	d.render(w, r, c, Page{Template: "users", Title: "users.title", Nav: "users", Status: status, Data: data})
}

func (d *Dashboard) invite(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostFormValue("email"))
	role := r.PostFormValue("role")
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || !merchant.ValidRole(role) {
		d.showUsers(w, r, c, http.StatusUnprocessableEntity, usersData{Email: email, Alert: "users.bad_email"})
		return
	}
	if _, err := d.cfg.Users.FindUserByEmail(ctx, email); err == nil {
		d.showUsers(w, r, c, http.StatusConflict, usersData{Email: email, Alert: "users.exists"})
		return
	} else if !apperr.Is(err, apperr.NotFound) {
		d.fail(w, r, c, err)
		return
	}
	token, hash := merchant.NewInviteToken()
	in := &merchant.Invite{MerchantID: c.MerchantID(), Email: email, Role: role, ExpiresAt: d.now().Add(inviteLifetime)}
	if err := d.cfg.Users.CreateInvite(ctx, in, hash); err != nil {
		d.fail(w, r, c, err)
		return
	}
	// Until the dashboard sends e-mail, the owner gets the link from the
	// log (development) and passes it on.
	d.log.Info("dashboard invite", zap.String("url", strings.TrimSuffix(d.cfg.PublicURL, "/")+Prefix+"/invite/"+token),
		zap.String("merchant_id", in.MerchantID.String()), zap.String("email", email), zap.String("role", role))
	d.flash(r, "users.invited")
	http.Redirect(w, r, Prefix+"/settings/users", http.StatusSeeOther)
}

func (d *Dashboard) invitePage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	token := r.PathValue("token")
	in, err := d.cfg.Users.FindInvite(r.Context(), merchant.HashInviteToken(token), d.now())
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		d.fail(w, r, c, err)
		return
	}
	data := inviteData{Token: token, Invalid: err != nil}
	status := http.StatusOK
	if err != nil {
		status = http.StatusNotFound
	} else {
		data.Email = in.Email
	}
	d.render(w, r, c, Page{Template: "accept_invite", Title: "invite.title", Status: status, Data: data})
}

// acceptInvite creates the invited user with the chosen password and signs
// them in.
func (d *Dashboard) acceptInvite(w http.ResponseWriter, r *http.Request, c *Ctx) {
	token := r.PathValue("token")
	hash, ok := hashPassword(r.PostFormValue("password"))
	if !ok {
		in, err := d.cfg.Users.FindInvite(r.Context(), merchant.HashInviteToken(token), d.now())
		data := inviteData{Token: token, Invalid: err != nil, Alert: "password.too_short"}
		if err == nil {
			data.Email = in.Email
		}
		d.render(w, r, c, Page{Template: "accept_invite", Title: "invite.title", Status: http.StatusUnprocessableEntity, Data: data})
		return
	}
	u, err := d.cfg.Users.AcceptInvite(r.Context(), merchant.HashInviteToken(token), hash, d.now())
	if apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.Conflict) {
		d.render(w, r, c, Page{Template: "accept_invite", Title: "invite.title", Status: http.StatusNotFound,
			Data: inviteData{Invalid: true}})
		return
	}
	if err == nil {
		err = d.signIn(r, u)
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}
