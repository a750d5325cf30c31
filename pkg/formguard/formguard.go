// Package formguard refuses the requests a server-rendered form must not
// act on: a state change from another site (the standard library's
// CrossOriginProtection, then Origin against the request's own origin or
// PUBLIC_URL's) and a body that is a file upload, too large or not a form.
// The dashboard and the member's portal put it in front of their pages;
// each words the refusal in its own pages (Refuse).
package formguard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// MaxBody bounds every form's body: the largest form is a few KiB.
const MaxBody = 64 << 10

// Reason is why a request was refused.
type Reason int

// The reasons, each with its status (Status).
const (
	CrossOrigin Reason = iota // 403
	Unsupported               // 415: a multipart body
	TooLarge                  // 413
	BadForm                   // 400
)

// Status is the HTTP status of a refusal for reason.
func (r Reason) Status() int {
	switch r {
	case Unsupported:
		return http.StatusUnsupportedMediaType
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case BadForm:
		return http.StatusBadRequest
	}
	return http.StatusForbidden
}

// Guard is the check in front of a set of pages.
type Guard struct {
	// PublicURL is how browsers reach the pages (PUBLIC_URL): its origin is
	// allowed besides the request's own.
	PublicURL string
	// Refuse answers a refused request (before any session is read).
	Refuse func(w http.ResponseWriter, r *http.Request, why Reason)
}

// Handler refuses cross-origin state changes, then bounds the body and
// parses a state change's form before next runs: a handler's
// PostFormValue reads what was parsed, and cannot swallow the error of a
// body cut short.
func (g Guard) Handler(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.Refuse(w, r, CrossOrigin) }))
	allowed := ""
	if u, err := url.Parse(g.PublicURL); err == nil && u.Host != "" {
		allowed = u.Scheme + "://" + u.Host
	}
	guarded := cop.Handler(g.limitBody(next))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !SafeMethod(r.Method) {
			if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r, allowed) {
				g.Refuse(w, r, CrossOrigin)
				return
			}
		}
		guarded.ServeHTTP(w, r)
	})
}

// SafeMethod reports whether m changes nothing.
func SafeMethod(m string) bool {
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

// limitBody refuses a multipart body (no form uploads a file, and parsing
// one would buffer up to 32 MiB) and one past MaxBody, and parses a state
// change's form.
func (g Guard) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Type"))), "multipart/") {
			g.Refuse(w, r, Unsupported)
			return
		}
		if r.ContentLength > MaxBody {
			g.Refuse(w, r, TooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		if !SafeMethod(r.Method) {
			if err := r.ParseForm(); err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					g.Refuse(w, r, TooLarge)
				} else {
					g.Refuse(w, r, BadForm)
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
