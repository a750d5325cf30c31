package dashboard

import (
	"net/http"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"
)

// The session cookie is Secure exactly when PUBLIC_URL is https, and
// sessions end after both timeouts.
func TestSessionCookieSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		publicURL string
		secure    bool
	}{
		{"https://convida.example.com", true},
		{"http://localhost:8080", false},
	} {
		d, err := New(Config{Access: Access{Sessions: memstore.New(), PublicURL: tc.publicURL}})
		if err != nil {
			t.Fatal(err)
		}
		c := d.sessions.Cookie
		if c.Name != "convida_session" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure != tc.secure || c.Path != "/dashboard" {
			t.Errorf("%s: cookie %+v, want convida_session HttpOnly Lax Secure=%v on /dashboard", tc.publicURL, c, tc.secure)
		}
		if d.sessions.IdleTimeout != 2*time.Hour || d.sessions.Lifetime != 12*time.Hour {
			t.Errorf("%s: idle %v lifetime %v, want 2h and 12h", tc.publicURL, d.sessions.IdleTimeout, d.sessions.Lifetime)
		}
	}
}
