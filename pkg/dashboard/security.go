package dashboard

import (
	"net/http"
	"net/url"
)

// contentSecurityPolicy allows only the dashboard's own scripts, styles
// and images: no inline script or style anywhere (htmx is configured not
// to inject its indicator styles).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// secure sets the security headers on every response under /dashboard
// (404s and assets included) and refuses cross-origin state changes: the
// standard library's CrossOriginProtection (Sec-Fetch-Site, then Origin
// against Host) and, when a browser sends Origin, a check that it is the
// request's own or PUBLIC_URL's origin.
func (d *Dashboard) secure(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(d.forbiddenOrigin))
	allowed := ""
	if u, err := url.Parse(d.cfg.PublicURL); err == nil && u.Host != "" {
		allowed = u.Scheme + "://" + u.Host
	}
	guarded := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		// Nothing under /dashboard is cached but the assets (which set their
		// own): a page may show a key, a secret or a token.
		h.Set("Cache-Control", "no-store")
		if !safeMethod(r.Method) {
			if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r, allowed) {
				d.forbiddenOrigin(w, r)
				return
			}
		}
		guarded.ServeHTTP(w, r)
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOrigin reports whether origin is the request's own (either scheme on
// its Host) or the configured public origin.
func sameOrigin(origin string, r *http.Request, public string) bool {
	if public != "" && origin == public {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host && u.Path == ""
}

// forbiddenOrigin answers a cross-origin state change: 403 and a page
// saying so, in the request's language, without touching the session.
func (d *Dashboard) forbiddenOrigin(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, &Ctx{Lang: langFromHeader(r), Loc: defaultZone}, Page{Template: "error", Title: "error.forbidden.title",
		Status: http.StatusForbidden, Data: errorData{Message: "error.forbidden.origin"}})
}
