package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/respond"
)

// PortalConfig wires the member's portal operations (portal_sessions.go,
// embed_tokens.go, portal_settings.go); nil stores leave them out.
type PortalConfig struct {
	Tokens   portalaccess.Tokens
	Settings portalaccess.SettingsStore
}

func (s *Server) registerPortal(admin *mux.Router) {
	if s.cfg.Portal.Tokens == nil || s.cfg.Portal.Settings == nil {
		return
	}
	admin.HandleFunc(v1+"/members/{id}/portal-sessions", s.createPortalSession).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/members/{id}/embed-tokens", s.createEmbedToken).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/portal/settings", s.getPortalSettings).Methods(http.MethodGet)
	admin.HandleFunc(v1+"/portal/settings", s.putPortalSettings).Methods(http.MethodPut)
}

// PortalSessionRequest is the body of POST /members/{id}/portal-sessions.
type PortalSessionRequest struct {
	ReturnURL string `json:"return_url"`
	Locale    string `json:"locale"`
}

// PortalSession is a minted portal link.
type PortalSession struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// createPortalSession mints a one-time link into the member's portal,
// valid 120 s: the merchant's backend sends its member there.
func (s *Server) createPortalSession(w http.ResponseWriter, r *http.Request) {
	var req PortalSessionRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	req.ReturnURL, req.Locale = strings.TrimSpace(req.ReturnURL), strings.TrimSpace(req.Locale)
	if err := portalaccess.CheckReturnURL(req.ReturnURL); err != nil {
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
	t, g, err := portalaccess.Mint(r.Context(), s.cfg.Portal.Tokens, portalaccess.KindSession, m, req.ReturnURL, req.Locale, s.cfg.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[PortalSession]{Data: PortalSession{
		URL: s.publicBase() + "/portal/s/" + t.Plain, ExpiresAt: jsontime.Format(g.ExpiresAt)}})
}

// portalMember is the member of the path, when the merchant's portal is
// on (409 portal_disabled) and the member may have a session (409
// member_unavailable).
func (s *Server) portalMember(r *http.Request) (*member.Member, error) {
	m, err := s.memberByPath(r)
	if err != nil {
		return nil, err
	}
	settings, err := s.cfg.Portal.Settings.PortalSettings(r.Context(), m.MerchantID)
	if err != nil {
		return nil, err
	}
	if !settings.Enabled {
		return nil, apperr.Errorf(apperr.PortalDisabled, "the member's portal is turned off (PUT /api/v1/portal/settings)")
	}
	return m, portalaccess.Available(m)
}

// publicBase is PUBLIC_URL without its trailing slash.
func (s *Server) publicBase() string { return strings.TrimSuffix(s.cfg.PublicURL, "/") }
