package httpapi

import (
	"net/http"
	"net/url"

	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/respond"
)

// EmbedToken is a minted embed token and the iframe's URL.
type EmbedToken struct {
	Token     string `json:"token"`
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// createEmbedToken mints a token that opens the member's portal inside an
// iframe on the merchant's site, valid an hour.
func (s *Server) createEmbedToken(w http.ResponseWriter, r *http.Request) {
	t, g, ok := s.mintPortalToken(w, r, portalaccess.KindEmbed)
	if ok {
		respond.JSON(w, http.StatusCreated, Data[EmbedToken]{Data: EmbedToken{Token: t.Plain,
			URL: s.publicBase() + "/embed/portal?token=" + url.QueryEscape(t.Plain), ExpiresAt: jsontime.Format(g.ExpiresAt)}})
	}
}
