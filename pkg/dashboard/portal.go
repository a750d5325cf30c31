package dashboard

import (
	"net/http"
	"strings"

	"github.com/convida/convida/pkg/portalaccess"
)

// Settings → Portal (the member's portal: on or off, the origins that may
// embed it, its colour), and the member page's "Open the member's
// portal", for owners.

type portalData struct {
	Settings portalaccess.Settings
	Origins  string // one per line, as the form shows and takes them
	Alert    string // the refusal, in the reader's language
	Saved    bool
}

func (d *Dashboard) portalRoutes() {
	if d.cfg.Stores.PortalSettings == nil || d.cfg.Stores.PortalTokens == nil {
		return
	}
	d.page("GET "+Prefix+"/settings/portal", d.portalSettings)
	d.action("POST "+Prefix+"/settings/portal", d.savePortalSettings)
	d.action("POST "+Prefix+"/members/{id}/portal", d.openMemberPortal)
}

func (d *Dashboard) portalSettings(w http.ResponseWriter, r *http.Request, c *Ctx) {
	s, err := d.cfg.Stores.PortalSettings.PortalSettings(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.showPortal(w, r, c, http.StatusOK, portalData{Settings: s, Origins: strings.Join(s.EmbedOrigins, "\n")})
}

func (d *Dashboard) showPortal(w http.ResponseWriter, r *http.Request, c *Ctx, status int, data portalData) {
	d.render(w, r, c, Page{Template: "portal_settings", Title: "portal.title", Nav: "portal", Status: status, Data: data})
}

// savePortalSettings saves the form: the portal's settings as the API's
// PUT does (portalaccess.Settings.Normalize), audited by the user.
func (d *Dashboard) savePortalSettings(w http.ResponseWriter, r *http.Request, c *Ctx) {
	s := portalaccess.Settings{MerchantID: c.MerchantID(), Enabled: r.PostFormValue("enabled") == "on",
		BrandColor: r.PostFormValue("brand_color"), EmbedOrigins: []string{}}
	origins := r.PostFormValue("embed_origins")
	for _, line := range strings.Split(origins, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			s.EmbedOrigins = append(s.EmbedOrigins, line)
		}
	}
	if err := s.Normalize(); err != nil {
		d.showPortal(w, r, c, http.StatusBadRequest, portalData{Settings: s, Origins: origins, Alert: problem(c.Lang, err)})
		return
	}
	s.UpdatedAt = d.now()
	saved, err := d.cfg.Stores.PortalSettings.SavePortalSettings(r.Context(), s)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.showPortal(w, r, c, http.StatusOK, portalData{Settings: saved, Origins: strings.Join(saved.EmbedOrigins, "\n"), Saved: true})
}

// openMemberPortal mints a portal link for the member, as the API's
// POST /members/{id}/portal-sessions does, and sends the owner there: the
// portal as the member sees it.
func (d *Dashboard) openMemberPortal(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	s, err := d.cfg.Stores.PortalSettings.PortalSettings(r.Context(), c.MerchantID())
	if err == nil && !s.Enabled {
		d.flash(r, "portal.disabled")
		http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
		return
	}
	var t portalaccess.Token
	if err == nil {
		t, _, err = portalaccess.Mint(r.Context(), d.cfg.Stores.PortalTokens, portalaccess.KindSession, m, "", c.Lang, d.now())
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, "/portal/s/"+t.Plain, http.StatusSeeOther)
}
