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
	t, g, ok := s.mintPortalToken(w, r, portalaccess.KindSession)
	if ok {
		respond.JSON(w, http.StatusCreated, Data[PortalSession]{Data: PortalSession{
			URL: s.publicBase() + "/portal/s/" + t.Plain, ExpiresAt: jsontime.Format(g.ExpiresAt)}})
	}
}

// mintPortalToken reads the body (return_url, locale), checks the member
// of the path and mints her a token of kind; false when it answered a
// refusal.
func (s *Server) mintPortalToken(w http.ResponseWriter, r *http.Request, kind portalaccess.Kind) (portalaccess.Token, portalaccess.Grant, bool) {
	var req PortalSessionRequest
	err := decode(w, r, &req)
	req.ReturnURL, req.Locale = strings.TrimSpace(req.ReturnURL), strings.TrimSpace(req.Locale)
	if err == nil {
		err = portalaccess.CheckReturnURL(req.ReturnURL)
	}
	if err == nil {
		err = portalaccess.CheckLocale(req.Locale)
	}
	var m *member.Member
	if err == nil {
		m, err = s.portalMember(r)
	}
	var t portalaccess.Token
	var g portalaccess.Grant
	if err == nil {
		t, g, err = portalaccess.Mint(r.Context(), s.cfg.Portal.Tokens, kind, m, req.ReturnURL, req.Locale, s.cfg.Now())
	}
	if err != nil {
		s.fail(w, r, err)
		return t, g, false
	}
	return t, g, true
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
