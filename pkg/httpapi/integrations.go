package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/secretbox"
)

// registerIntegrations adds the provider settings of the merchant.
func (s *Server) registerIntegrations(admin *mux.Router) {
	admin.HandleFunc(v1+"/integrations/{provider}", s.putIntegration).Methods(http.MethodPut)
	admin.HandleFunc(v1+"/integrations/{provider}", s.getIntegration).Methods(http.MethodGet)
}

// IntegrationRequest is the body of PUT /integrations/{provider}: guru uses
// account_token, user_token and api_url; yampi webhook_secret, user_token,
// user_secret_key, store_alias and api_url. Absent fields keep their value,
// except the API credentials when api_url or store_alias changes
// (merchant.Integration.Merge).
type IntegrationRequest struct {
	AccountToken  string `json:"account_token"`
	WebhookSecret string `json:"webhook_secret"`
	UserToken     string `json:"user_token"`
	UserSecretKey string `json:"user_secret_key"`
	StoreAlias    string `json:"store_alias"`
	APIURL        string `json:"api_url"`
}

// IntegrationView is the answer: secrets masked, the webhook URL to paste
// into the platform, and whether Convida can call the platform's API
// (redemptions, members' coupons): APIMissing names the fields it still
// needs (redemption.MissingFields), as after a new api_url or store_alias
// dropped the stored API credentials.
type IntegrationView struct {
	Provider      string   `json:"provider"`
	Configured    bool     `json:"configured"`
	APIConfigured bool     `json:"api_configured"`
	APIMissing    []string `json:"api_missing"`
	WebhookURL    string   `json:"webhook_url"`
	AccountToken  *string  `json:"account_token,omitempty"`
	WebhookSecret *string  `json:"webhook_secret,omitempty"`
	UserToken     string   `json:"user_token"`
	UserSecretKey *string  `json:"user_secret_key,omitempty"`
	StoreAlias    *string  `json:"store_alias,omitempty"`
	APIURL        string   `json:"api_url"`
	UpdatedAt     *string  `json:"updated_at"`
}

func provider(r *http.Request) (string, error) {
	p := mux.Vars(r)["provider"]
	if !merchant.KnownProvider(p) {
		return "", apperr.Errorf(apperr.NotFound, "unknown provider: use guru or yampi")
	}
	return p, nil
}

func (s *Server) putIntegration(w http.ResponseWriter, r *http.Request) {
	p, err := provider(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req IntegrationRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	in, err := merchant.Integration{Provider: p, AccountToken: req.AccountToken, WebhookSecret: req.WebhookSecret,
		UserToken: req.UserToken, UserSecretKey: req.UserSecretKey, StoreAlias: req.StoreAlias, APIURL: req.APIURL}.Clean(s.cfg.PlatformAllowPrivateNetworks)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := s.cfg.Merchants.PutIntegration(r.Context(), merchantOf(r).ID, in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[IntegrationView]{Data: s.integrationView(r, p, saved)})
}

func (s *Server) getIntegration(w http.ResponseWriter, r *http.Request) {
	p, err := provider(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	in, err := s.cfg.Merchants.FindIntegration(r.Context(), merchantOf(r).ID, p)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[IntegrationView]{Data: s.integrationView(r, p, in)})
}

// integrationView renders in (nil when not configured) with every secret
// masked.
func (s *Server) integrationView(r *http.Request, p string, in *merchant.Integration) IntegrationView {
	v := IntegrationView{Provider: p, WebhookURL: merchant.WebhookURL(s.cfg.IngestPublicURL, p, merchantOf(r).ID)}
	if in == nil {
		in = &merchant.Integration{APIURL: merchant.DefaultAPIURL(p)}
	} else {
		v.Configured = true
		v.UpdatedAt = jsontime.Ptr(in.UpdatedAt)
	}
	v.UserToken, v.APIURL = secretbox.Mask(in.UserToken), in.APIURL
	v.APIMissing = redemption.MissingFields(p, *in)
	v.APIConfigured = len(v.APIMissing) == 0
	if p == merchant.ProviderGuru {
		v.AccountToken = ptr(secretbox.Mask(in.AccountToken))
	} else {
		v.WebhookSecret = ptr(secretbox.Mask(in.WebhookSecret))
		v.UserSecretKey = ptr(secretbox.Mask(in.UserSecretKey))
		v.StoreAlias = ptr(in.StoreAlias)
	}
	return v
}
