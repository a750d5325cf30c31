package respond

import (
	"net/http"
	"strconv"
	"strings"
)

// HSTSMaxAge is the Strict-Transport-Security a browser is told to keep,
// in seconds: a year, the figure browsers' preload lists ask for.
const HSTSMaxAge = 365 * 24 * 60 * 60

// HSTS is the Strict-Transport-Security header of the answers of a server
// clients reach at publicURL (PUBLIC_URL): for a year, when publicURL is
// https; "" when it is not, since a browser ignores the header over http
// and an operator trying Convida on http://localhost must not have
// https pinned on localhost for a year. Subdomains are not included: the
// operator's other hosts are not Convida's to pin.
func HSTS(publicURL string) string {
	if !strings.HasPrefix(strings.ToLower(publicURL), "https://") {
		return ""
	}
	return "max-age=" + strconv.Itoa(HSTSMaxAge)
}

// StrictTransport sets HSTS(publicURL) on every answer of next, and
// returns next itself when publicURL is not https.
func StrictTransport(publicURL string) func(http.Handler) http.Handler {
	value := HSTS(publicURL)
	return func(next http.Handler) http.Handler {
		if value == "" {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Strict-Transport-Security", value)
			next.ServeHTTP(w, r)
		})
	}
}
