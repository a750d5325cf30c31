package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// contentSecurityPolicy allows only the dashboard's own scripts, styles
// and images: no inline script or style anywhere (htmx is configured not
// to inject its indicator styles).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// maxBody bounds every request body under /dashboard. The largest form (a
// campaign with its commission tiers) is a few KiB.
const maxBody = 64 << 10

// secure sets the security headers on every response under /dashboard
// (404s and assets included) and refuses cross-origin state changes: the
// standard library's CrossOriginProtection (Sec-Fetch-Site, then Origin
// against Host) and, when a browser sends Origin, a check that it is the
// request's own or PUBLIC_URL's origin. Then it bounds the body (limitBody).
// All of it happens before the session is loaded.
func (d *Dashboard) secure(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(d.forbiddenOrigin))
	allowed := ""
	if u, err := url.Parse(d.cfg.Access.PublicURL); err == nil && u.Host != "" {
		allowed = u.Scheme + "://" + u.Host
	}
	guarded := cop.Handler(d.limitBody(next))
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

// limitBody refuses a multipart body (415: no dashboard form uploads a
// file, and parsing one would buffer up to 32 MiB) and one past maxBody
// (413), and parses a state change's form here, before any handler: a
// handler's PostFormValue then reads what was parsed, and cannot swallow
// the error of a body cut short.
func (d *Dashboard) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Type"))), "multipart/") {
			d.refuseEarly(w, r, http.StatusUnsupportedMediaType, "error.unsupported.title", "error.unsupported")
			return
		}
		if r.ContentLength > maxBody {
			d.refuseEarly(w, r, http.StatusRequestEntityTooLarge, "error.too_large.title", "error.too_large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if !safeMethod(r.Method) {
			if err := r.ParseForm(); err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					d.refuseEarly(w, r, http.StatusRequestEntityTooLarge, "error.too_large.title", "error.too_large")
				} else {
					d.refuseEarly(w, r, http.StatusBadRequest, "error.bad_request.title", "error.bad_form")
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuseEarly answers a request refused before its session was loaded: the
// status and the error page saying why, in the visitor's language.
func (d *Dashboard) refuseEarly(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	d.render(w, r, &Ctx{Lang: requestLang(r), Loc: defaultZone}, Page{Template: "error", Title: title,
		Status: status, Data: errorData{Message: message}})
}

// forbiddenOrigin answers a cross-origin state change: 403 and a page
// saying so, in the request's language, without touching the session.
func (d *Dashboard) forbiddenOrigin(w http.ResponseWriter, r *http.Request) {
	d.refuseEarly(w, r, http.StatusForbidden, "error.forbidden.title", "error.forbidden.origin")
}
