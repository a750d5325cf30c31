package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
)

// Integrations: each platform's settings (write-only secrets, as
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
	// (merchant.Integration.APIMissing), each a field Name; empty when
	// redemptions and members' coupons, or the reading of sales, can run.
	APIMissing []string
	// HasAPI: Convida calls the platform's API (redemptions, members'
	// coupons or the reading of sales); a platform it only takes webhooks
	// from has no API status.
	HasAPI bool
	// ReadsSales: Convida uses the platform's API to read its sales only
	// (Hotmart, Kiwify), not for redemptions or coupons.
	ReadsSales bool
	// Pulls: Convida can read the platform's sales (provider.Pull); a
	// platform without a pull has no reconciliation, and the page says so.
	Pulls bool
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

// readsSales reports whether Convida's use of the platform's API is
// reading its sales only (Hotmart, Kiwify) rather than redemptions and
// members' coupons too.
func readsSales(d provider.Descriptor) bool { return d.Can(provider.Pull) && !d.Can(provider.Redeem) }

// platformFields lists each platform's inputs, in the form's order, from
// its descriptor.
func platformFields(d provider.Descriptor, in *merchant.Integration) []integrationField {
	saved := merchant.Integration{Provider: d.Name}
	if in != nil {
		saved = *in
	}
	fields := make([]integrationField, 0, len(d.Settings))
	for _, s := range d.Settings {
		f := integrationField{Name: s.Name, Label: "integrations." + s.Name}
		switch {
		case s.Kind == provider.Secret:
			f.Secret = true
			if saved.Value(s) != "" {
				f.SetAt = saved.UpdatedAt
			}
		case s.Kind == provider.CalledURL || s.Role == provider.StoreAlias:
			// A new API URL or store alias drops the saved API
			// credentials (merchant.Integration.Merge): the form says so
			// beside them.
			f.Value, f.Hint = saved.Value(s), "integrations.rebinds_"+d.Name
		case s.Kind == provider.ShownURL:
			f.Value, f.Hint = saved.Value(s), "integrations."+s.Name+"_hint"
		default:
			f.Value = saved.Value(s)
		}
		fields = append(fields, f)
	}
	return fields
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
	for _, pd := range provider.All() {
		p := pd.Name
		in, err := d.cfg.Stores.Merchants.FindIntegration(r.Context(), c.MerchantID(), p)
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			d.fail(w, r, c, err)
			return
		}
		saved := merchant.Integration{Provider: p}
		if in != nil {
			saved = *in
		}
		v := platformView{Provider: p, Name: pd.Title, Fields: platformFields(pd, in),
			WebhookURL: merchant.WebhookURL(d.cfg.Integrations.IngestPublicURL, p, c.MerchantID()), APIMissing: saved.APIMissing(),
			ReadsSales: readsSales(pd), Pulls: pd.Can(provider.Pull),
			HasAPI: pd.Can(provider.Redeem) || pd.Can(provider.Coupon) || pd.Can(provider.Pull)}
		if in != nil {
			v.Configured, v.UpdatedAt = true, in.UpdatedAt
			v.CanReconcile = d.cfg.Integrations.Reconciler != nil && reconcile.Configured(*in)
		}
		if p == alertFor {
			v.Alert = alert
			for i, f := range v.Fields {
				if !f.Secret {
					v.Fields[i].Value = r.PostFormValue(f.Name)
				}
			}
		}
		if v.Deliveries, err = d.cfg.Stores.Deliveries.ListDeliveries(r.Context(), c.MerchantID(), p, recentDeliveries); err != nil {
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
	if !provider.Known(p) {
		d.notFound(w, r, c)
		return
	}
	in, err := merchant.CleanFields(p, r.PostFormValue, netguard.URLChecker(d.cfg.Integrations.AllowPrivateNetworks))
	if apperr.Is(err, apperr.Invalid) {
		d.showIntegrations(w, r, c, p, integrationAlert(err), http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if _, err := d.cfg.Stores.Merchants.PutIntegration(r.Context(), c.MerchantID(), in); err != nil {
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
	id, ok := ids.Parse(ids.InboundDelivery, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return
	}
	del, err := d.cfg.Stores.Deliveries.FindDelivery(r.Context(), c.MerchantID(), id)
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
