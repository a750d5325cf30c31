package dashboard

import (
	"net/http"

	"github.com/convida/convida/pkg/member"
)

// The owners' actions on a member: block and unblock, provision her
// coupons, erase her personal data (after a confirmation page;
// docs/privacy.md).

// setMemberStatus blocks or unblocks the member.
func (d *Dashboard) setMemberStatus(status, flash string) handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) {
		m, ok := d.memberByPath(w, r, c)
		if !ok {
			return
		}
		if _, err := d.cfg.Stores.Members.UpdateMember(r.Context(), c.MerchantID(), m.ID, member.Update{Status: &status}); err != nil {
			d.fail(w, r, c, err)
			return
		}
		d.flash(r, flash)
		http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
	}
}

// provisionCoupon asks for the member's coupons at every platform, as the
// API's POST /members/{id}/provision-coupon does; the dispatcher carries
// it out.
func (d *Dashboard) provisionCoupon(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	if err := d.cfg.Stores.Coupons.RequestCoupons(r.Context(), c.MerchantID(), m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.provision_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

// confirmErase asks an owner to confirm the erasure of the member's
// personal data, saying what goes and that it cannot be undone.
func (d *Dashboard) confirmErase(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if m, ok := d.memberByPath(w, r, c); ok {
		d.render(w, r, c, Page{Template: "member_erase", Title: "members.erase_title", Nav: "members", Data: m})
	}
}

// eraseMember erases the member's personal data (the store's EraseMember,
// as POST /api/v1/members/{id}/erase does) and shows the member's page
// with a flash; erasing an erased member changes nothing.
func (d *Dashboard) eraseMember(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	if _, _, err := d.cfg.Stores.Members.EraseMember(r.Context(), c.MerchantID(), m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.erased_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}
