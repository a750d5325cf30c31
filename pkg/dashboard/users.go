package dashboard

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// Settings → Users: the merchant's users (change a role, remove one after
// a confirmation), invitations by one-time link (shown once, to the owner
// who made it, like a new API key; pending ones can be cancelled), and the
// page that accepts one. A merchant always keeps an owner.

// inviteLifetime is how long an invitation link works.
const inviteLifetime = 7 * 24 * time.Hour

type usersData struct {
	Users   []merchant.DashboardUser
	Invites []merchant.Invite // pending
	// Email and Alert refill the invitation form after a refusal; Alert
	// also says why a role change or a removal was refused.
	Email, Alert string
	// InviteLink and InvitedEmail are only in the response to "Send
	// invite": the link exists in plain text nowhere else.
	InviteLink, InvitedEmail string
}

type removeData struct {
	User      merchant.DashboardUser
	LastOwner bool
}

type inviteData struct {
	Token, Email, Alert string
	Invalid             bool
}

func (d *Dashboard) userRoutes() {
	d.page("GET "+Prefix+"/settings/users", d.users)
	d.action("POST "+Prefix+"/settings/users/invite", d.invite)
	d.action("POST "+Prefix+"/settings/users/invites/{id}/cancel", d.cancelInvite)
	d.action("POST "+Prefix+"/settings/users/{id}/role", d.changeRole)
	d.page("GET "+Prefix+"/settings/users/{id}/remove", d.confirmRemove)
	d.action("POST "+Prefix+"/settings/users/{id}/remove", d.removeUser)
	d.public("GET "+Prefix+"/invite/{token}", d.invitePage)
	d.public("POST "+Prefix+"/invite/{token}", d.acceptInvite)
}

func (d *Dashboard) users(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showUsers(w, r, c, http.StatusOK, usersData{})
}

func (d *Dashboard) showUsers(w http.ResponseWriter, r *http.Request, c *Ctx, status int, data usersData) {
	users, err := d.cfg.Stores.Users.ListUsers(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	invites, err := d.cfg.Stores.Users.ListInvites(r.Context(), c.MerchantID(), d.now())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data.Users, data.Invites = users, invites
	d.render(w, r, c, Page{Template: "users", Title: "users.title", Nav: "users", Status: status, Data: data})
}

// invite creates an invitation and answers the users page with its link,
// shown this once (no-store, like every dashboard page). The link is never
// logged: the log line names the invitation by its id.
func (d *Dashboard) invite(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostFormValue("email"))
	role := r.PostFormValue("role")
	if !merchant.ValidLogin(email) || !merchant.ValidRole(role) { // an e-mail the sign-in takes
		d.showUsers(w, r, c, http.StatusUnprocessableEntity, usersData{Email: email, Alert: "users.bad_email"})
		return
	}
	// Only this merchant's users are looked at: an e-mail that is a user
	// elsewhere is invited as any new one, and nothing here tells.
	if _, err := d.cfg.Stores.Users.FindUserByEmail(ctx, c.MerchantID(), email); err == nil {
		d.showUsers(w, r, c, http.StatusConflict, usersData{Email: email, Alert: "users.exists"})
		return
	} else if !apperr.Is(err, apperr.NotFound) {
		d.fail(w, r, c, err)
		return
	}
	token, hash := merchant.NewInviteToken()
	in := &merchant.Invite{MerchantID: c.MerchantID(), Email: email, Role: role, ExpiresAt: d.now().Add(inviteLifetime)}
	if err := d.cfg.Stores.Users.CreateInvite(ctx, in, hash); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.log.Info("dashboard invitation created", zap.String("invite_id", in.ID.String()),
		zap.String("merchant_id", in.MerchantID.String()), zap.String("role", role), zap.String("by", c.User.ID.String()))
	d.showUsers(w, r, c, http.StatusOK, usersData{
		InviteLink: strings.TrimSuffix(d.cfg.Access.PublicURL, "/") + Prefix + "/invite/" + token, InvitedEmail: email})
}

// cancelInvite deletes a pending invitation: its link is the 404 page
// from then on.
func (d *Dashboard) cancelInvite(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err == nil {
		err = d.cfg.Stores.Users.CancelInvite(r.Context(), c.MerchantID(), id)
	} else {
		err = apperr.Errorf(apperr.NotFound, "invitation not found")
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.log.Info("dashboard invitation cancelled", zap.String("invite_id", id.String()),
		zap.String("merchant_id", c.MerchantID().String()), zap.String("by", c.User.ID.String()))
	d.flash(r, "users.invite_cancelled")
	http.Redirect(w, r, Prefix+"/settings/users", http.StatusSeeOther)
}

// findUser returns the merchant's user of the path's {id}; false (and a
// 404 written) for a malformed id, another merchant's user or none.
func (d *Dashboard) findUser(w http.ResponseWriter, r *http.Request, c *Ctx) (*merchant.DashboardUser, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		d.notFound(w, r, c)
		return nil, false
	}
	u, err := d.cfg.Stores.Users.FindUser(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, false
	}
	return u, true
}

// changeRole makes a user an owner or a viewer; the last owner stays one
// (409 and the page saying why). It takes effect at the user's next
// request: every request reads the role afresh.
func (d *Dashboard) changeRole(w http.ResponseWriter, r *http.Request, c *Ctx) {
	u, ok := d.findUser(w, r, c)
	if !ok {
		return
	}
	role := r.PostFormValue("role")
	if !merchant.ValidRole(role) {
		d.showUsers(w, r, c, http.StatusUnprocessableEntity, usersData{Alert: "users.bad_role"})
		return
	}
	err := d.cfg.Stores.Users.SetRole(r.Context(), c.MerchantID(), u.ID, role)
	if errors.Is(err, merchant.ErrLastOwner) {
		d.showUsers(w, r, c, http.StatusConflict, usersData{Alert: "users.last_owner_role"})
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.log.Info("dashboard user role changed", zap.String("user_id", u.ID.String()), zap.String("role", role),
		zap.String("merchant_id", c.MerchantID().String()), zap.String("by", c.User.ID.String()))
	d.flash(r, "users.role_changed")
	http.Redirect(w, r, Prefix+"/settings/users", http.StatusSeeOther)
}

func (d *Dashboard) confirmRemove(w http.ResponseWriter, r *http.Request, c *Ctx) {
	u, ok := d.findUser(w, r, c)
	if !ok {
		return
	}
	users, err := d.cfg.Stores.Users.ListUsers(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	owners := 0
	for _, o := range users {
		if o.Role == merchant.RoleOwner {
			owners++
		}
	}
	d.render(w, r, c, Page{Template: "user_remove", Title: "users.remove_title", Nav: "users",
		Data: removeData{User: *u, LastOwner: u.Role == merchant.RoleOwner && owners <= 1}})
}

// removeUser deletes a user: every session of theirs finds no user at its
// next request and is signed out (signedIn). The last owner stays (409
// and the page saying why).
func (d *Dashboard) removeUser(w http.ResponseWriter, r *http.Request, c *Ctx) {
	u, ok := d.findUser(w, r, c)
	if !ok {
		return
	}
	err := d.cfg.Stores.Users.RemoveUser(r.Context(), c.MerchantID(), u.ID)
	if errors.Is(err, merchant.ErrLastOwner) {
		d.showUsers(w, r, c, http.StatusConflict, usersData{Alert: "users.last_owner"})
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.log.Info("dashboard user removed", zap.String("user_id", u.ID.String()),
		zap.String("merchant_id", c.MerchantID().String()), zap.String("by", c.User.ID.String()))
	d.flash(r, "users.removed")
	http.Redirect(w, r, Prefix+"/settings/users", http.StatusSeeOther)
}

func (d *Dashboard) invitePage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showInvite(w, r, c, http.StatusOK, "")
}

// showInvite renders the invitation of the path's token, or the 404 page
// saying it is invalid, used, cancelled or expired.
func (d *Dashboard) showInvite(w http.ResponseWriter, r *http.Request, c *Ctx, status int, alert string) {
	token := r.PathValue("token")
	in, err := d.cfg.Stores.Users.FindInvite(r.Context(), merchant.HashInviteToken(token), d.now())
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		d.fail(w, r, c, err)
		return
	}
	data := inviteData{Token: token, Alert: alert}
	if err != nil {
		status, data = http.StatusNotFound, inviteData{Invalid: true}
	} else {
		data.Email = in.Email
	}
	d.render(w, r, c, Page{Template: "accept_invite", Title: "invite.title", Status: status, Data: data})
}

// acceptInvite creates the invited user with the chosen password and signs
// them in; the invitation is used up.
func (d *Dashboard) acceptInvite(w http.ResponseWriter, r *http.Request, c *Ctx) {
	password := r.PostFormValue("password")
	if problem := passwordProblem(password); problem != "" {
		d.showInvite(w, r, c, http.StatusUnprocessableEntity, problem)
		return
	}
	hash, err := hashPassword(password)
	var u *merchant.DashboardUser
	if err == nil {
		u, err = d.cfg.Stores.Users.AcceptInvite(r.Context(), merchant.HashInviteToken(r.PathValue("token")), hash, d.now())
	}
	if apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.Conflict) {
		d.render(w, r, c, Page{Template: "accept_invite", Title: "invite.title", Status: http.StatusNotFound,
			Data: inviteData{Invalid: true}})
		return
	}
	if err == nil {
		// The invitee's first sign-in, in the trail like any other.
		err = d.enter(r, u, map[string]any{"via": "invitation"})
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}
