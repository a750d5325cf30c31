package dashboard

import (
	"net/http"
	"strings"
)

// langCookie keeps the language chosen with the switch, for anonymous
// visitors and signed-in users alike: no session is created for a
// visitor who only chose a language.
const langCookie = "convida_lang"

// langCookieAge is how long the choice is remembered.
const langCookieAge = 365 * 24 * 60 * 60

// secureCookies reports whether the dashboard's cookies are Secure: when
// browsers reach it over https (PUBLIC_URL).
func secureCookies(publicURL string) bool { return strings.HasPrefix(publicURL, "https://") }

// chooseLanguage keeps the chosen language in its cookie and goes back to
// the page the switch was on.
func (d *Dashboard) chooseLanguage(w http.ResponseWriter, r *http.Request, _ *Ctx) {
	if l := r.PostFormValue("lang"); l == English || l == Portuguese {
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: Prefix, MaxAge: langCookieAge,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secureCookies(d.cfg.Access.PublicURL)})
	}
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

// localPath is next when it is a path of the dashboard, else the
// overview: a redirect never leaves the dashboard.
func localPath(next string) string {
	if next == Prefix || (strings.HasPrefix(next, Prefix+"/") && !strings.ContainsAny(next, "\\") && !strings.Contains(next, "//")) {
		return next
	}
	return Prefix
}
