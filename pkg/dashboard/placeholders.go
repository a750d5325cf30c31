package dashboard

import "net/http"

// comingSoon are the sections whose pages phase 2 builds: each answers a
// placeholder so that the navigation is complete. A phase-2 page removes
// its line here and registers its own routes (docs/dashboard.md).
var comingSoon = []struct{ pattern, nav string }{}

func (d *Dashboard) comingSoonRoutes() {
	for _, s := range comingSoon {
		d.page(s.pattern, func(w http.ResponseWriter, r *http.Request, c *Ctx) {
			d.render(w, r, c, Page{Template: "coming_soon", Title: "title." + s.nav, Nav: s.nav})
		})
	}
}
