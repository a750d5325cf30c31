package dashboard

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// The merchant chooser: an e-mail may be a user of several merchants, each
// with its own password. When the password typed at sign-in is right for
// more than one of them, the session (under a new token, with no user in
// it yet) keeps those users for choiceLifetime, and the chooser lists
// their merchants: choosing one signs in to it. Only merchants whose
// password was right are listed, so the page tells a person nothing they
// could not have signed in to.

// choiceLifetime is how long the chooser waits for a choice before the
// password has to be typed again.
const choiceLifetime = 10 * time.Minute

// merchantChoice is a merchant the chooser lists.
type merchantChoice struct {
	MerchantID   uuid.UUID
	MerchantName string
	Role         string
	user         merchant.DashboardUser
}

type chooserData struct {
	Choices []merchantChoice
}

// offerMerchants keeps the users whose password was right in a session
// under a new token, for the chooser.
func (d *Dashboard) offerMerchants(r *http.Request, users []merchant.DashboardUser) error {
	ctx := r.Context()
	if err := d.sessions.RenewToken(ctx); err != nil {
		return err
	}
	parts := make([]string, len(users))
	for i, u := range users {
		parts[i] = u.MerchantID.String() + " " + u.ID.String() + " " + strconv.FormatInt(u.SessionVersion, 10)
	}
	d.sessions.Put(ctx, sessionChoices, strings.Join(parts, ";"))
	d.sessions.Put(ctx, sessionChoicesAt, d.now().Unix())
	return nil
}

// choices reads the session's offered merchants, by name: none once
// choiceLifetime has passed, and not a user removed since, or whose
// password changed since (the session version moved on).
func (d *Dashboard) choices(r *http.Request) ([]merchantChoice, error) {
	ctx := r.Context()
	at := time.Unix(d.sessions.GetInt64(ctx, sessionChoicesAt), 0)
	kept := d.sessions.GetString(ctx, sessionChoices)
	if kept == "" || d.now().Sub(at) > choiceLifetime {
		return nil, nil
	}
	var list []merchantChoice
	for _, part := range strings.Split(kept, ";") {
		f := strings.Fields(part)
		if len(f) != 3 {
			continue
		}
		mid, err1 := uuid.Parse(f[0])
		uid, err2 := uuid.Parse(f[1])
		version, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		u, err := d.cfg.Stores.Users.FindUser(ctx, mid, uid)
		if apperr.Is(err, apperr.NotFound) || (err == nil && u.SessionVersion != version) {
			continue
		}
		if err != nil {
			return nil, err
		}
		m, err := d.cfg.Stores.Merchants.FindMerchantByID(ctx, mid)
		if err != nil {
			return nil, err
		}
		list = append(list, merchantChoice{MerchantID: mid, MerchantName: m.Name, Role: u.Role, user: *u})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].MerchantName < list[j].MerchantName })
	return list, nil
}

// merchantChooser lists the merchants to choose from; without an offer
// (none made, or expired) it goes back to sign-in, and a signed-in user
// to the overview.
func (d *Dashboard) merchantChooser(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if d.sessions.GetString(r.Context(), sessionUser) != "" {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	list, err := d.choices(r)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if len(list) == 0 {
		http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
		return
	}
	d.render(w, r, c, Page{Template: "choose_merchant", Title: "choose_merchant.title", Data: chooserData{Choices: list}})
}

// chooseMerchant signs in to the merchant chosen, when it is one of the
// offer's (else the 404 page); without an offer it goes back to sign-in.
func (d *Dashboard) chooseMerchant(w http.ResponseWriter, r *http.Request, c *Ctx) {
	list, err := d.choices(r)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if len(list) == 0 {
		http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
		return
	}
	chosen := r.PostFormValue("merchant")
	for _, ch := range list {
		if ch.MerchantID.String() == chosen {
			if err := d.enter(r, &ch.user, nil); err != nil {
				d.fail(w, r, c, err)
				return
			}
			http.Redirect(w, r, Prefix, http.StatusSeeOther)
			return
		}
	}
	d.notFound(w, r, c)
}
