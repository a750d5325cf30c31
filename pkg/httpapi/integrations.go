package httpapi

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
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
// user_secret_key, store_alias and api_url; hotmart hottok, client_id,
// client_secret, basic_token, api_url and auth_url; kiwify webhook_token,
// client_id, client_secret, account_id, api_url and checkout_url. Absent
// fields keep their value, except the API secrets when api_url, auth_url
// or store_alias changes (merchant.Integration.Merge); another provider's
// fields are ignored.
type IntegrationRequest struct {
	AccountToken  string `json:"account_token"`
	WebhookSecret string `json:"webhook_secret"`
	UserToken     string `json:"user_token"`
	UserSecretKey string `json:"user_secret_key"`
	StoreAlias    string `json:"store_alias"`
	Hottok        string `json:"hottok"`
	WebhookToken  string `json:"webhook_token"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	BasicToken    string `json:"basic_token"`
	AccountID     string `json:"account_id"`
	APIURL        string `json:"api_url"`
	AuthURL       string `json:"auth_url"`
	CheckoutURL   string `json:"checkout_url"`
}

// integration is the request as provider p's settings: Hotmart's hottok
// is the role of Guru's account token, Kiwify's webhook token that of
// Yampi's webhook secret (merchant.Integration). Those two names are
// bounded here whatever the provider, as Clean bounds every other field.
func (req IntegrationRequest) integration(p string) (merchant.Integration, error) {
	for _, f := range []struct{ name, value string }{{"hottok", req.Hottok}, {"webhook_token", req.WebhookToken}} {
		if utf8.RuneCountInString(strings.TrimSpace(f.value)) > merchant.MaxIntegrationField {
			return merchant.Integration{}, bounds.TooLong(f.name, merchant.MaxIntegrationField)
		}
	}
	in := merchant.Integration{Provider: p, AccountToken: req.AccountToken, WebhookSecret: req.WebhookSecret,
		UserToken: req.UserToken, UserSecretKey: req.UserSecretKey, StoreAlias: req.StoreAlias, ClientID: req.ClientID,
		ClientSecret: req.ClientSecret, BasicToken: req.BasicToken, AccountID: req.AccountID, APIURL: req.APIURL,
		AuthURL: req.AuthURL, CheckoutURL: req.CheckoutURL}
	switch p {
	case merchant.ProviderHotmart:
		in.AccountToken = req.Hottok
	case merchant.ProviderKiwify:
		in.WebhookSecret = req.WebhookToken
	}
	return in, nil
}

// IntegrationView is the answer: secrets masked, the webhook URL to paste
// into the platform, and whether Convida can call the platform's API
// (redemptions and members' coupons for Guru and Yampi, the sales pull for
// Hotmart and Kiwify): APIMissing names the fields it still needs
// (redemption.MissingFields, merchant.Integration.PullMissing), as after
// a new URL or store_alias dropped the stored API secrets. Each provider
// shows only its own fields.
type IntegrationView struct {
	Provider      string   `json:"provider"`
	Configured    bool     `json:"configured"`
	APIConfigured bool     `json:"api_configured"`
	APIMissing    []string `json:"api_missing"`
	WebhookURL    string   `json:"webhook_url"`
	AccountToken  *string  `json:"account_token,omitempty"`
	WebhookSecret *string  `json:"webhook_secret,omitempty"`
	Hottok        *string  `json:"hottok,omitempty"`
	WebhookToken  *string  `json:"webhook_token,omitempty"`
	UserToken     *string  `json:"user_token,omitempty"`
	UserSecretKey *string  `json:"user_secret_key,omitempty"`
	StoreAlias    *string  `json:"store_alias,omitempty"`
	ClientID      *string  `json:"client_id,omitempty"`
	ClientSecret  *string  `json:"client_secret,omitempty"`
	BasicToken    *string  `json:"basic_token,omitempty"`
	AccountID     *string  `json:"account_id,omitempty"`
	APIURL        string   `json:"api_url"`
	AuthURL       *string  `json:"auth_url,omitempty"`
	CheckoutURL   *string  `json:"checkout_url,omitempty"`
	UpdatedAt     *string  `json:"updated_at"`
}

func provider(r *http.Request) (string, error) {
	p := mux.Vars(r)["provider"]
	if !merchant.KnownProvider(p) {
		return "", apperr.Errorf(apperr.NotFound, "unknown provider: use guru, yampi, hotmart or kiwify")
	}
	return p, nil
}

// providerPage reads the provider of a per-platform list and its page:
// an unknown provider is 404 before a malformed page is 400.
func providerPage(r *http.Request) (p string, pageNum, perPage int, err error) {
	if p, err = provider(r); err != nil {
		return "", 0, 0, err
	}
	pageNum, perPage, err = page(r)
	return p, pageNum, perPage, err
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
	in, err := req.integration(p)
	if err == nil {
		in, err = in.Clean(s.cfg.PlatformAllowPrivateNetworks)
	}
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
		in = &merchant.Integration{Provider: p, APIURL: merchant.DefaultAPIURL(p), AuthURL: merchant.DefaultAuthURL(p)}
	} else {
		v.Configured = true
		v.UpdatedAt = jsontime.Ptr(in.UpdatedAt)
	}
	v.APIURL = in.APIURL
	masked := func(secret string) *string { return ptr(secretbox.Mask(secret)) }
	switch p {
	case merchant.ProviderGuru:
		v.AccountToken, v.UserToken = masked(in.AccountToken), masked(in.UserToken)
	case merchant.ProviderYampi:
		v.WebhookSecret, v.UserToken, v.UserSecretKey = masked(in.WebhookSecret), masked(in.UserToken), masked(in.UserSecretKey)
		v.StoreAlias = ptr(in.StoreAlias)
	case merchant.ProviderHotmart:
		v.Hottok, v.ClientID, v.ClientSecret = masked(in.AccountToken), ptr(in.ClientID), masked(in.ClientSecret)
		v.BasicToken, v.AuthURL = masked(in.BasicToken), ptr(in.AuthURL)
	case merchant.ProviderKiwify:
		v.WebhookToken, v.ClientID, v.ClientSecret = masked(in.WebhookSecret), ptr(in.ClientID), masked(in.ClientSecret)
		v.AccountID, v.CheckoutURL = ptr(in.AccountID), ptr(in.CheckoutURL)
	}
	if p == merchant.ProviderHotmart || p == merchant.ProviderKiwify {
		v.APIMissing = in.PullMissing()
	} else {
		v.APIMissing = redemption.MissingFields(p, *in)
	}
	v.APIConfigured = len(v.APIMissing) == 0
	return v
}
