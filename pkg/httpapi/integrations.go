package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/secretbox"
)

// registerIntegrations adds the platform settings of the merchant.
func (s *Server) registerIntegrations(admin *mux.Router) {
	admin.HandleFunc(v1+"/integrations/{provider}", s.putIntegration).Methods(http.MethodPut)
	admin.HandleFunc(v1+"/integrations/{provider}", s.getIntegration).Methods(http.MethodGet)
}

// IntegrationRequest is the body of PUT /integrations/{provider}: the
// platform's settings by the names its descriptor gives them
// (provider.Descriptor.Settings), each a string or null. Absent fields
// keep their value, except the API secrets when a URL or store_alias
// changes (merchant.Integration.Merge); other names are ignored.
type IntegrationRequest map[string]any

// values reads the request's settings of d by name ("" when absent or
// null). A setting name of any platform is checked, d's or not: it must
// be a string (apperr.Invalid) within its bound, as every request string
// is, even one that is then ignored.
func (req IntegrationRequest) values(d provider.Descriptor) (func(name string) string, error) {
	for _, p := range provider.All() {
		for _, s := range p.Settings {
			switch v := req[s.Name].(type) {
			case nil:
			case string:
				if utf8.RuneCountInString(strings.TrimSpace(v)) > s.Bound() {
					return nil, bounds.TooLong(s.Name, s.Bound())
				}
			default:
				return nil, apperr.Errorf(apperr.Invalid, "%s: must be a string", s.Name)
			}
		}
	}
	return func(name string) string { v, _ := req[name].(string); return v }, nil
}

// IntegrationView is the answer: the platform's settings by their names,
// secrets masked, the webhook URL to paste into the platform, and whether
// Convida can call the platform's API (redemptions, members' coupons, the
// sales pull): APIMissing names the settings it still needs
// (merchant.Integration.APIMissing), as after a new URL or store_alias
// dropped the stored API secrets.
type IntegrationView struct {
	Provider      string
	Configured    bool
	APIConfigured bool
	APIMissing    []string
	WebhookURL    string
	Settings      []SettingView
	UpdatedAt     *string
}

// SettingView is one setting as shown: a secret masked.
type SettingView struct {
	Name  string
	Value string
}

// MarshalJSON writes the view's fields in a fixed order, the platform's
// settings between the webhook URL and updated_at.
func (v IntegrationView) MarshalJSON() ([]byte, error) {
	type field struct {
		name  string
		value any
	}
	fields := []field{{"provider", v.Provider}, {"configured", v.Configured}, {"api_configured", v.APIConfigured},
		{"api_missing", v.APIMissing}, {"webhook_url", v.WebhookURL}}
	for _, s := range v.Settings {
		fields = append(fields, field{s.Name, s.Value})
	}
	fields = append(fields, field{"updated_at", v.UpdatedAt})
	b := []byte("{")
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.name)
		val, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), val...)
	}
	return append(b, '}'), nil
}

// platformOf reads the platform of the request's path, apperr.NotFound for
// an unknown one.
func platformOf(r *http.Request) (provider.Descriptor, error) {
	d, ok := provider.Lookup(mux.Vars(r)["provider"])
	if !ok {
		return d, unknownPlatform()
	}
	return d, nil
}

// unknownPlatform is the answer for a platform the service does not know.
func unknownPlatform() error {
	return apperr.Errorf(apperr.NotFound, "unknown provider: use %s", orList(provider.Names()))
}

// orList writes names as "a, b or c".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " or " + names[len(names)-1]
}

// providerPage reads the provider of a per-platform list and its page:
// an unknown provider is 404 before a malformed page is 400.
func providerPage(r *http.Request) (p string, pageNum, perPage int, err error) {
	d, err := platformOf(r)
	if err != nil {
		return "", 0, 0, err
	}
	pageNum, perPage, err = page(r)
	return d.Name, pageNum, perPage, err
}

func (s *Server) putIntegration(w http.ResponseWriter, r *http.Request) {
	d, err := platformOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req IntegrationRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	value, err := req.values(d)
	var in merchant.Integration
	if err == nil {
		in, err = merchant.CleanFields(d.Name, value, netguard.URLChecker(s.cfg.PlatformAllowPrivateNetworks))
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
	respond.JSON(w, http.StatusOK, Data[IntegrationView]{Data: s.integrationView(r, d, saved)})
}

func (s *Server) getIntegration(w http.ResponseWriter, r *http.Request) {
	d, err := platformOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	in, err := s.cfg.Merchants.FindIntegration(r.Context(), merchantOf(r).ID, d.Name)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[IntegrationView]{Data: s.integrationView(r, d, in)})
}

// integrationView renders in (nil when not configured) with every secret
// masked.
func (s *Server) integrationView(r *http.Request, d provider.Descriptor, in *merchant.Integration) IntegrationView {
	v := IntegrationView{Provider: d.Name, WebhookURL: merchant.WebhookURL(s.cfg.IngestPublicURL, d.Name, merchantOf(r).ID)}
	if in == nil {
		in = &merchant.Integration{Provider: d.Name}
	} else {
		v.Configured = true
		v.UpdatedAt = jsontime.Ptr(in.UpdatedAt)
	}
	for _, setting := range d.Settings {
		value := in.Value(setting)
		if setting.Kind == provider.Secret {
			value = secretbox.Mask(value)
		}
		v.Settings = append(v.Settings, SettingView{Name: setting.Name, Value: value})
	}
	v.APIMissing = in.APIMissing()
	v.APIConfigured = len(v.APIMissing) == 0
	return v
}
