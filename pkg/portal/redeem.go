package portal

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/l10n"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
)

type redeemData struct {
	Available    int64
	Min          int64
	Destinations []destination
	Amount       string // as typed, or all available
	Type         string
	Subscription string
	Key          string // names the redemption: the form sent twice redeems once
	Alert        string // catalogue key of a refusal
	Coupon       string // the coupon code of a completed store-coupon redemption
	Done         bool
	Pending      bool
	Redeemed     int64
}

type destination struct {
	Type         string
	Label        string // catalogue key
	Platform     string
	Subscription bool // asks for her subscription id
}

// destinations are the redemptions the merchant's integrations allow.
func (p *Portal) destinations(r *http.Request, c *Ctx) ([]destination, error) {
	var out []destination
	for _, d := range provider.With(provider.Redeem) {
		err := p.cfg.Redeemer.IntegrationReady(r.Context(), c.Merchant.ID, d.Redemption)
		if apperr.Is(err, apperr.IntegrationNotConfigured) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, destination{Type: d.Redemption, Label: "redeem.type." + d.Redemption,
			Platform: provider.TitleOf(d.Name), Subscription: d.Redemption == redemption.TypeSubscriptionDiscount})
	}
	return out, nil
}

// redeemPage loads what the Redeem page shows besides the form.
func (p *Portal) redeemPage(r *http.Request, c *Ctx, data *redeemData) error {
	wal, err := p.cfg.Wallets.FindWallet(r.Context(), c.Merchant.ID, c.Member.ID)
	if err != nil {
		return err
	}
	data.Available = wal.Available
	if camp, err := p.cfg.Campaigns.FindCampaignByID(r.Context(), c.Merchant.ID, c.Member.CampaignID); err == nil {
		data.Min = camp.MinRedemption
	} else if !apperr.Is(err, apperr.NotFound) {
		return err
	}
	data.Destinations, err = p.destinations(r, c)
	return err
}

// redeemForm is the Redeem page: all available by default.
func (p *Portal) redeemForm(w http.ResponseWriter, r *http.Request, c *Ctx) {
	data := redeemData{Key: uuid.NewString()}
	if err := p.redeemPage(r, c, &data); err != nil {
		p.fail(w, r, c, err)
		return
	}
	data.Amount = l10n.TypedReais(c.Lang, data.Available)
	if len(data.Destinations) > 0 {
		data.Type = data.Destinations[0].Type
	}
	p.render(w, r, c, Page{Template: "redeem", Title: "redeem.title", Nav: "redeem", Data: data})
}

// redeemAlerts are the catalogue keys of the refusals a redemption meets.
var redeemAlerts = map[apperr.Code]string{
	apperr.InsufficientBalance:      "redeem.insufficient",
	apperr.BelowMinRedemption:       "redeem.below_min",
	apperr.IntegrationNotConfigured: "redeem.not_available",
	apperr.RedemptionFailed:         "redeem.failed",
	apperr.InvalidState:             "redeem.not_active",
	apperr.Unavailable:              "redeem.try_again",
}

// redeem runs the redemption through the ledger's command, as the API
// does, and shows its result: the coupon code with a copy button.
func (p *Portal) redeem(w http.ResponseWriter, r *http.Request, c *Ctx) {
	data := redeemData{Amount: strings.TrimSpace(r.PostFormValue("amount")), Type: r.PostFormValue("type"),
		Subscription: strings.TrimSpace(r.PostFormValue("subscription_id")), Key: strings.TrimSpace(r.PostFormValue("key"))}
	if _, err := uuid.Parse(data.Key); err != nil {
		data.Key = uuid.NewString()
	}
	refuse := func(alert string) {
		data.Alert = alert
		if err := p.redeemPage(r, c, &data); err != nil {
			p.fail(w, r, c, err)
			return
		}
		p.render(w, r, c, Page{Template: "redeem", Title: "redeem.title", Nav: "redeem",
			Status: http.StatusUnprocessableEntity, Data: data})
	}
	amount, err := money.ParseTypedReais(data.Amount)
	if err != nil || amount < 1 {
		refuse("redeem.bad_amount")
		return
	}
	typ, ok := redemption.TypeOf(data.Type)
	if !ok {
		refuse("redeem.bad_type")
		return
	}
	if redemption.CheckSubscriptionID("subscription_id", typ, data.Subscription) != nil {
		refuse("redeem.need_subscription")
		return
	}
	red, pending, err := p.cfg.Redeemer.Redeem(r.Context(), ledger.RedeemRequest{Member: c.Member,
		RedemptionID: ledger.RedemptionIDFor(c.Merchant.ID, "portal:"+c.Member.ID.String()+":"+data.Key),
		Amount:       amount, Type: typ, SubscriptionID: data.Subscription, IssuedAt: p.now()},
		time.Now().Add(p.redeemTimeout()))
	if err != nil {
		if alert, ok := redeemAlerts[apperr.CodeOf(err)]; ok {
			refuse(alert)
			return
		}
		if apperr.Is(err, apperr.Invalid) || apperr.Is(err, apperr.IdempotencyReused) {
			refuse("redeem.try_again")
			return
		}
		p.fail(w, r, c, err)
		return
	}
	data.Done, data.Pending, data.Redeemed = true, pending, amount
	if red != nil {
		data.Redeemed = red.Amount
		data.Coupon = red.Result.CouponCode
	}
	p.render(w, r, c, Page{Template: "redeemed", Title: "redeem.done_title", Nav: "redeem", Data: data})
}

func (p *Portal) redeemTimeout() time.Duration {
	if p.cfg.ActionTimeout > 0 {
		return p.cfg.ActionTimeout
	}
	return 10 * time.Second
}
