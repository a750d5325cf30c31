package dashboard

import (
	"net/http"

	"github.com/convida/convida/pkg/formguard"
)

// contentSecurityPolicy allows only the dashboard's own scripts, styles
// and images: no inline script or style anywhere (htmx is configured not
// to inject its indicator styles).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// secure sets the security headers on every response under /dashboard
// (404s and assets included) and refuses cross-origin state changes and
// bodies no form sends (formguard). All of it happens before the session
// is loaded.
func (d *Dashboard) secure(next http.Handler) http.Handler {
	guarded := formguard.Guard{PublicURL: d.cfg.Access.PublicURL, Refuse: d.refuseForm}.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		// Nothing under /dashboard is cached but the assets (which set their
		// own): a page may show a key, a secret or a token.
		h.Set("Cache-Control", "no-store")
		guarded.ServeHTTP(w, r)
	})
}

// refusals are the catalogue keys (title, message) of each refusal.
var refusals = map[formguard.Reason][2]string{
	formguard.CrossOrigin: {"error.forbidden.title", "error.forbidden.origin"},
	formguard.Unsupported: {"error.unsupported.title", "error.unsupported"},
	formguard.TooLarge:    {"error.too_large.title", "error.too_large"},
	formguard.BadForm:     {"error.bad_request.title", "error.bad_form"},
}

// refuseForm answers a request formguard refused.
func (d *Dashboard) refuseForm(w http.ResponseWriter, r *http.Request, why formguard.Reason) {
	keys := refusals[why]
	d.refuseEarly(w, r, why.Status(), keys[0], keys[1])
}

// refuseEarly answers a request refused before its session was loaded: the
// status and the error page saying why, in the visitor's language.
func (d *Dashboard) refuseEarly(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	d.render(w, r, &Ctx{Lang: requestLang(r), Loc: defaultZone}, Page{Template: "error", Title: title,
		Status: status, Data: errorData{Message: message}})
}
