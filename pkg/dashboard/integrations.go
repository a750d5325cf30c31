package dashboard

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
)

// Integrations: the Guru and Yampi settings (write-only secrets, as
// PUT /api/v1/integrations/{provider}), the webhook URL to paste into each
// platform, and the last inbound deliveries with their bodies redacted.

// IntegrationStore reads and saves a merchant's platform settings
// (postgres.MerchantStore).
type IntegrationStore interface {
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error)
	PutIntegration(ctx context.Context, merchantID uuid.UUID, in merchant.Integration) (*merchant.Integration, error)
}

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
}

type integrationsData struct{ Platforms []platformView }

type deliveryData struct {
	Delivery inbound.Delivery
	Body     string // redacted and indented; "" when the body cannot be shown
}

var platformNames = map[string]string{merchant.ProviderGuru: "Guru", merchant.ProviderYampi: "Yampi"}

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
	apiURL := integrationField{Name: "api_url", Label: "integrations.api_url", Value: saved.APIURL}
	if provider == merchant.ProviderGuru {
		return []integrationField{
			secret("account_token", "integrations.account_token", saved.AccountToken),
			secret("user_token", "integrations.user_token", saved.UserToken),
			apiURL,
		}
	}
	return []integrationField{
		secret("webhook_secret", "integrations.webhook_secret", saved.WebhookSecret),
		secret("user_token", "integrations.user_token", saved.UserToken),
		secret("user_secret_key", "integrations.user_secret_key", saved.UserSecretKey),
		{Name: "store_alias", Label: "integrations.store_alias", Value: saved.StoreAlias},
		apiURL,
	}
}

func (d *Dashboard) integrationRoutes() {
	d.page("GET "+Prefix+"/integrations", d.integrations)
	d.action("POST "+Prefix+"/integrations/{provider}", d.saveIntegration)
	d.page("GET "+Prefix+"/integrations/deliveries/{id}", d.inboundDelivery)
}

func (d *Dashboard) integrations(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showIntegrations(w, r, c, "", "", http.StatusOK)
}

// showIntegrations renders the page; alert, when set, is shown in the
// form of provider alertFor, whose non-secret fields keep what was typed.
func (d *Dashboard) showIntegrations(w http.ResponseWriter, r *http.Request, c *Ctx, alertFor, alert string, status int) {
	var data integrationsData
	for _, p := range []string{merchant.ProviderGuru, merchant.ProviderYampi} {
		in, err := d.cfg.Integrations.FindIntegration(r.Context(), c.MerchantID(), p)
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			d.fail(w, r, c, err)
			return
		}
		v := platformView{Provider: p, Name: platformNames[p], Fields: platformFields(p, in),
			WebhookURL: merchant.WebhookURL(d.cfg.IngestPublicURL, p, c.MerchantID())}
		if in != nil {
			v.Configured, v.UpdatedAt = true, in.UpdatedAt
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
		data.Platforms = append(data.Platforms, v)
	}
	d.render(w, r, c, Page{Template: "integrations", Title: "title.integrations", Nav: "integrations", Status: status, Data: data})
}

// saveIntegration saves a platform's form by the API's rules: a blank
// field keeps its saved value.
func (d *Dashboard) saveIntegration(w http.ResponseWriter, r *http.Request, c *Ctx) {
	p := r.PathValue("provider")
	if !merchant.KnownProvider(p) {
		d.notFound(w, r, c)
		return
	}
	in, err := merchant.Integration{Provider: p, AccountToken: r.PostFormValue("account_token"),
		WebhookSecret: r.PostFormValue("webhook_secret"), UserToken: r.PostFormValue("user_token"),
		UserSecretKey: r.PostFormValue("user_secret_key"), StoreAlias: r.PostFormValue("store_alias"),
		APIURL: r.PostFormValue("api_url")}.Clean()
	if apperr.Is(err, apperr.Invalid) {
		d.showIntegrations(w, r, c, p, "integrations.bad_api_url", http.StatusUnprocessableEntity)
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
