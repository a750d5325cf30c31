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
	var req PortalSessionRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := portalaccess.CheckLocale(req.Locale); err != nil {
		s.fail(w, r, err)
		return
	}
	m, err := s.portalMember(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t, g, err := portalaccess.Mint(r.Context(), s.cfg.Portal.Tokens, portalaccess.KindEmbed, m, "", req.Locale, s.cfg.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[EmbedToken]{Data: EmbedToken{Token: t.Plain,
		URL: s.publicBase() + "/embed/portal?token=" + url.QueryEscape(t.Plain), ExpiresAt: jsontime.Format(g.ExpiresAt)}})
}
