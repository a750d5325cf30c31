package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redemption"
)

// Integrations: the Guru, Yampi, Hotmart and Kiwify settings (write-only secrets, as
// PUT /api/v1/integrations/{provider}), the webhook URL to paste into each
// platform, and the last inbound deliveries with their bodies redacted.

// InboundDeliveries reads the records of the platforms' webhooks
// (postgres.DeliveryStore).
type InboundDeliveries interface {
	ListDeliveries(ctx context.Context, merchantID uuid.UUID, provider string, limit int) ([]inbound.Delivery, error)
	FindDelivery(ctx context.Context, merchantID, id uuid.UUID) (*inbound.Delivery, error)
}

// recentDeliveries is how many deliveries each platform's list shows.
const recentDeliveries = 20

// integrationField is one input of a platform's form. A secret is a
// password input never filled in: the page shows only since when it is set.
type integrationField struct {
	Name, Label string
	Secret      bool
	Value       string    // a non-secret field's saved value
	SetAt       time.Time // a secret's: when the settings holding it were saved; zero when unset
	Hint        string    // a non-secret field's note, a catalogue key; "" for none
}

// ID is the input's id, unique on the page.
func (f integrationField) ID(provider string) string { return provider + "-" + f.Name }

type platformView struct {
	Provider   string
	Name       string
	WebhookURL string
	Configured bool
	UpdatedAt  time.Time
	Fields     []integrationField
	Deliveries []inbound.Delivery
	Alert      string // why the last submission of this form was refused
	// APIMissing names the settings the platform's API still needs
	// (redemption.MissingFields, or merchant.Integration.PullMissing for
	// a platform whose sales are read), each a field Name; empty when
	// redemptions and members' coupons, or the reading of sales, can run.
	APIMissing []string
	// ReadsSales: Convida uses the platform's API to read its sales only
	// (Hotmart, Kiwify), not for redemptions or coupons.
	ReadsSales bool
	// CanReconcile: the settings hold the credentials of a pull
	// (reconcile.Configured) and the dashboard can ask for a run; Runs
	// are the last runs, newest first.
	CanReconcile bool
	Runs         []reconcile.Run
	// ReconcileFrom, when not zero, is when another run may be asked for:
	// the last one started less than RECONCILE_COOLDOWN ago.
	ReconcileFrom time.Time
}

// APIStatus is the catalogue key saying whether the platform's API can
// be used, and for what (followed by APIMissing when it cannot).
func (v platformView) APIStatus() string {
	use := "api"
	if v.ReadsSales {
		use = "pull"
	}
	if len(v.APIMissing) > 0 {
		return "integrations." + use + "_not_configured"
	}
	return "integrations." + use + "_configured"
}

type integrationsData struct{ Platforms []platformView }

type deliveryData struct {
	Delivery inbound.Delivery
	Body     string // redacted and indented; "" when the body cannot be shown
}

var platformNames = map[string]string{merchant.ProviderGuru: "Guru", merchant.ProviderYampi: "Yampi",
	merchant.ProviderHotmart: "Hotmart", merchant.ProviderKiwify: "Kiwify"}

// readsSales reports whether Convida's use of provider's API is reading
// its sales (Hotmart, Kiwify) rather than redemptions and members' coupons.
func readsSales(provider string) bool {
	return provider == merchant.ProviderHotmart || provider == merchant.ProviderKiwify
}

// apiMissing names the settings provider's API still needs, in is nil
// when nothing is saved.
func apiMissing(provider string, in *merchant.Integration) []string {
	saved := merchant.Integration{Provider: provider}
	if in != nil {
		saved = *in
	}
	if readsSales(provider) {
		return saved.PullMissing()
	}
	return redemption.MissingFields(provider, saved)
}

// platformFields lists each platform's inputs, in the form's order.
func platformFields(provider string, in *merchant.Integration) []integrationField {
	var saved merchant.Integration
	if in != nil {
		saved = *in
	}
	secret := func(name, label, value string) integrationField {
		f := integrationField{Name: name, Label: label, Secret: true}
		if value != "" {
			f.SetAt = saved.UpdatedAt
		}
		return f
	}
	// A new API URL or store alias drops the saved API credentials
	// (merchant.Integration.Merge): the form says so beside them.
	rebinds := "integrations.rebinds_" + provider
	apiURL := integrationField{Name: "api_url", Label: "integrations.api_url", Value: saved.APIURL, Hint: rebinds}
	switch provider {
	case merchant.ProviderGuru:
		return []integrationField{
			secret("account_token", "integrations.account_token", saved.AccountToken),
			secret("user_token", "integrations.user_token", saved.UserToken),
			apiURL,
		}
	case merchant.ProviderHotmart:
		return []integrationField{
			secret("hottok", "integrations.hottok", saved.AccountToken),
			{Name: "client_id", Label: "integrations.client_id", Value: saved.ClientID},
			secret("client_secret", "integrations.client_secret", saved.ClientSecret),
			secret("basic_token", "integrations.basic_token", saved.BasicToken),
			apiURL,
			{Name: "auth_url", Label: "integrations.auth_url", Value: saved.AuthURL, Hint: rebinds},
		}
	case merchant.ProviderKiwify:
		return []integrationField{
			secret("webhook_token", "integrations.webhook_token", saved.WebhookSecret),
			{Name: "client_id", Label: "integrations.client_id", Value: saved.ClientID},
			secret("client_secret", "integrations.client_secret", saved.ClientSecret),
			{Name: "account_id", Label: "integrations.account_id", Value: saved.AccountID},
			apiURL,
			{Name: "checkout_url", Label: "integrations.checkout_url", Value: saved.CheckoutURL, Hint: "integrations.checkout_url_hint"},
		}
	}
	return []integrationField{
		secret("webhook_secret", "integrations.webhook_secret", saved.WebhookSecret),
		secret("user_token", "integrations.user_token", saved.UserToken),
		secret("user_secret_key", "integrations.user_secret_key", saved.UserSecretKey),
		{Name: "store_alias", Label: "integrations.store_alias", Value: saved.StoreAlias, Hint: rebinds},
		apiURL,
	}
}

func (d *Dashboard) integrationRoutes() {
	d.page("GET "+Prefix+"/integrations", d.integrations)
	d.action("POST "+Prefix+"/integrations/{provider}", d.saveIntegration)
	d.action("POST "+Prefix+"/integrations/{provider}/reconcile", d.reconcileIntegration)
	d.page("GET "+Prefix+"/integrations/deliveries/{id}", d.inboundDelivery)
}

func (d *Dashboard) integrations(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showIntegrations(w, r, c, "", "", http.StatusOK)
}

// showIntegrations renders the page; alert, when set, is shown in the
// form of provider alertFor, whose non-secret fields keep what was typed.
func (d *Dashboard) showIntegrations(w http.ResponseWriter, r *http.Request, c *Ctx, alertFor, alert string, status int) {
	var data integrationsData
	for _, p := range merchant.Providers {
		in, err := d.cfg.Integrations.FindIntegration(r.Context(), c.MerchantID(), p)
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			d.fail(w, r, c, err)
			return
		}
		v := platformView{Provider: p, Name: platformNames[p], Fields: platformFields(p, in),
			WebhookURL: merchant.WebhookURL(d.cfg.IngestPublicURL, p, c.MerchantID()), APIMissing: apiMissing(p, in),
			ReadsSales: readsSales(p)}
		if in != nil {
			v.Configured, v.UpdatedAt = true, in.UpdatedAt
			v.CanReconcile = d.cfg.Reconciler != nil && reconcile.Configured(*in)
		}
		if p == alertFor {
			v.Alert = alert
			for i, f := range v.Fields {
				if !f.Secret {
					v.Fields[i].Value = r.PostFormValue(f.Name)
				}
			}
		}
		if v.Deliveries, err = d.cfg.Deliveries.ListDeliveries(r.Context(), c.MerchantID(), p, recentDeliveries); err != nil {
			d.fail(w, r, c, err)
			return
		}
		if v.Runs, err = d.runsOf(r.Context(), c.MerchantID(), p); err != nil {
			d.fail(w, r, c, err)
			return
		}
		v.ReconcileFrom = d.reconcileFrom(v.Runs)
		data.Platforms = append(data.Platforms, v)
	}
	d.render(w, r, c, Page{Template: "integrations", Title: "title.integrations", Nav: "integrations", Status: status, Data: data})
}

// saveIntegration saves a platform's form by the API's rules: a blank
// field keeps its saved value, a new API URL or store alias drops the API
// credentials not entered again.
func (d *Dashboard) saveIntegration(w http.ResponseWriter, r *http.Request, c *Ctx) {
	p := r.PathValue("provider")
	if !merchant.KnownProvider(p) {
		d.notFound(w, r, c)
		return
	}
	in, err := merchant.FromFields(p, r.PostFormValue).Clean(d.cfg.PlatformAllowPrivateNetworks)
	if apperr.Is(err, apperr.Invalid) {
		d.showIntegrations(w, r, c, p, integrationAlert(err), http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if _, err := d.cfg.Integrations.PutIntegration(r.Context(), c.MerchantID(), in); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "integrations.saved_"+p)
	http.Redirect(w, r, Prefix+"/integrations", http.StatusSeeOther)
}

// integrationAlert is the catalogue key of Clean's refusal err: the
// address is not public, http instead of https, a field too long, or
// else an API URL that is not a URL.
func integrationAlert(err error) string {
	switch {
	case isField(err, "checkout_url") && !errors.Is(err, merchant.ErrFieldTooLong):
		return "integrations.bad_checkout_url"
	case errors.Is(err, netguard.ErrNotPublic):
		return "integrations.api_url_not_public"
	case errors.Is(err, netguard.ErrNotHTTPS):
		return "integrations.api_url_not_https"
	case errors.Is(err, merchant.ErrFieldTooLong):
		return "integrations.too_long"
	}
	return "integrations.bad_api_url"
}

// inboundDelivery shows one delivery with its body redacted
// (inbound.Redact): the platform's token never reaches the page.
func (d *Dashboard) inboundDelivery(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		d.notFound(w, r, c)
		return
	}
	del, err := d.cfg.Deliveries.FindDelivery(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data := deliveryData{Delivery: *del}
	if body, ok := inbound.Redact(del.Body); ok {
		data.Body = string(body)
	}
	d.render(w, r, c, Page{Template: "integration_delivery", Title: "integrations.delivery_title", Nav: "integrations", Data: data})
}
