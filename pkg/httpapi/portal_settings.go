package httpapi

import (
	"net/http"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/respond"
)

// PortalSettingsView is the merchant's portal settings as the API shows
// and takes them.
type PortalSettingsView struct {
	Enabled      bool     `json:"enabled"`
	EmbedOrigins []string `json:"embed_origins"`
	BrandColor   string   `json:"brand_color"`
	UpdatedAt    *string  `json:"updated_at"` // null until the settings are first saved
}

// PutPortalSettingsRequest is the body of PUT /portal/settings: a field
// left out keeps its value.
type PutPortalSettingsRequest struct {
	Enabled      *bool     `json:"enabled"`
	EmbedOrigins *[]string `json:"embed_origins"`
	BrandColor   *string   `json:"brand_color"`
}

func portalSettingsView(s portalaccess.Settings) PortalSettingsView {
	v := PortalSettingsView{Enabled: s.Enabled, EmbedOrigins: s.EmbedOrigins, BrandColor: s.BrandColor}
	if v.EmbedOrigins == nil {
		v.EmbedOrigins = []string{}
	}
	if !s.UpdatedAt.IsZero() {
		at := jsontime.Format(s.UpdatedAt)
		v.UpdatedAt = &at
	}
	return v
}

func (s *Server) getPortalSettings(w http.ResponseWriter, r *http.Request) {
	settings, err := s.cfg.Portal.Settings.PortalSettings(r.Context(), merchantOf(r).ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[PortalSettingsView]{Data: portalSettingsView(settings)})
}

func (s *Server) putPortalSettings(w http.ResponseWriter, r *http.Request) {
	var req PutPortalSettingsRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.EmbedOrigins != nil && len(*req.EmbedOrigins) > portalaccess.MaxEmbedOrigins {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "embed_origins: at most %d origins", portalaccess.MaxEmbedOrigins))
		return
	}
	settings, err := s.cfg.Portal.Settings.PortalSettings(r.Context(), merchantOf(r).ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Enabled != nil {
		settings.Enabled = *req.Enabled
	}
	if req.EmbedOrigins != nil {
		settings.EmbedOrigins = *req.EmbedOrigins
	}
	if req.BrandColor != nil {
		settings.BrandColor = *req.BrandColor
	}
	if err := settings.Normalize(); err != nil {
		s.fail(w, r, err)
		return
	}
	settings.UpdatedAt = s.cfg.Now()
	saved, err := s.cfg.Portal.Settings.SavePortalSettings(r.Context(), settings)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[PortalSettingsView]{Data: portalSettingsView(saved)})
}
