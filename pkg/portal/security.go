package portal

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/convida/convida/pkg/formguard"
	"github.com/convida/convida/pkg/portalaccess"
)

// policy is the Content-Security-Policy of every page: only the portal's
// own scripts and styles, and the one inline style that carries the
// merchant's colour, by its nonce. frame-ancestors is 'none' on the hosted
// pages; the embedded ones name the merchant's origins (frameAncestors).
func policy(nonce, ancestors string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-" + nonce + "'; img-src 'self' data:; " +
		"frame-ancestors " + ancestors + "; base-uri 'self'; form-action 'self'"
}

type nonceKey struct{}

// secure sets the security headers and refuses cross-site state changes
// and bodies no form sends (formguard), before any session is read.
func (p *Portal) secure(embed bool, next http.Handler) http.Handler {
	guarded := formguard.Guard{PublicURL: p.cfg.PublicURL, Refuse: p.refuseForm}.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		nonce := base64.RawStdEncoding.EncodeToString(b[:])
		h := w.Header()
		h.Set("Content-Security-Policy", policy(nonce, "'none'"))
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer Chromium sends
		// Origin: null on a form's POST, which the origin check refuses.
		h.Set("Referrer-Policy", "same-origin")
		if !embed {
			h.Set("X-Frame-Options", "DENY")
		}
		h.Set("Cache-Control", "no-store")
		guarded.ServeHTTP(w, r.WithContext(withNonce(r.Context(), nonce)))
	})
}

// frameAncestors lets the merchant's embed origins, and only them, frame
// the answer; none configured is 'none'.
func (p *Portal) frameAncestors(w http.ResponseWriter, r *http.Request, s portalaccess.Settings) {
	ancestors := "'none'"
	if len(s.EmbedOrigins) > 0 {
		ancestors = strings.Join(s.EmbedOrigins, " ")
	}
	w.Header().Set("Content-Security-Policy", policy(nonceOf(r), ancestors))
}

// refusals are the catalogue keys (title, message) of each refusal.
var refusals = map[formguard.Reason][2]string{
	formguard.CrossOrigin: {"error.forbidden.title", "error.forbidden"},
	formguard.Unsupported: {"error.bad_request.title", "error.bad_request"},
	formguard.TooLarge:    {"error.bad_request.title", "error.bad_request"},
	formguard.BadForm:     {"error.bad_request.title", "error.bad_request"},
}

func (p *Portal) refuseForm(w http.ResponseWriter, r *http.Request, why formguard.Reason) {
	keys := refusals[why]
	p.message(w, r, &Ctx{Lang: p.langNoSession(r), Loc: defaultZone, Base: base(r), Embedded: embedded(r)},
		why.Status(), keys[0], keys[1])
}

func withNonce(ctx context.Context, nonce string) context.Context {
	return context.WithValue(ctx, nonceKey{}, nonce)
}

// nonceOf is the nonce of r's answer's inline style.
func nonceOf(r *http.Request) string {
	n, _ := r.Context().Value(nonceKey{}).(string)
	return n
}
