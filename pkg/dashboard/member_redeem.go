package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/redemption"
)

// Redeem on a member's behalf: the ledger command every edge runs
// (ledger.Redeemer).

// redeemAlerts are the catalogue keys of the refusals a redemption can
// meet; another refusal shows the generic alert with its message.
var redeemAlerts = map[apperr.Code]string{
	apperr.InsufficientBalance:      "members.redeem_insufficient",
	apperr.BelowMinRedemption:       "members.redeem_below_min",
	apperr.IntegrationNotConfigured: "members.redeem_not_configured",
	apperr.RedemptionFailed:         "members.redeem_failed",
	apperr.InvalidState:             "members.redeem_not_active",
}

// redeemForMember redeems on the member's behalf: the amount in reais
// (either language's notation), the type, and a subscription id for a
// subscription discount. It runs the ledger command the API runs and
// waits for the platform's result; the form's one-time key names the
// redemption, so sending the form twice redeems once.
func (d *Dashboard) redeemForMember(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	form := memberData{Amount: strings.TrimSpace(r.PostFormValue("amount")), Type: r.PostFormValue("type"),
		SubscriptionID: strings.TrimSpace(r.PostFormValue("subscription_id"))}
	refuse := func(alert, detail string) {
		form.Alert, form.AlertDetail = alert, detail
		d.showMember(w, r, c, m, http.StatusUnprocessableEntity, form)
	}
	amount, err := money.ParseTypedReais(form.Amount)
	if err != nil || amount < 1 {
		refuse("members.redeem_bad_amount", "")
		return
	}
	typ, ok := redemption.TypeOf(form.Type)
	if !ok {
		refuse("members.redeem_bad_type", "")
		return
	}
	if redemption.CheckSubscriptionID("subscription_id", typ, form.SubscriptionID) != nil {
		refuse("members.redeem_need_subscription", "")
		return
	}
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		key = uuid.NewString()
	}
	red, pending, err := d.redeemer().Redeem(r.Context(), ledger.RedeemRequest{Member: m,
		RedemptionID: ledger.RedemptionIDFor(c.MerchantID(), "dashboard:"+key), Amount: amount, Type: typ,
		SubscriptionID: form.SubscriptionID, IssuedAt: d.now()}, time.Now().Add(d.cfg.Actions.timeout()))
	if err != nil {
		if alert, ok := redeemAlerts[apperr.CodeOf(err)]; ok {
			detail := problem(c.Lang, err)
			if red != nil && apperr.Is(err, apperr.RedemptionFailed) {
				detail = red.FailureReason // the platform's own words
			}
			refuse(alert, detail)
			return
		}
		if apperr.Is(err, apperr.Unavailable) {
			// The command may still be applied: sending the form again
			// must name the same redemption, not make a second one.
			form.RedeemKey = key
		}
		if apperr.Is(err, apperr.Unavailable) || apperr.Is(err, apperr.Invalid) || apperr.Is(err, apperr.IdempotencyReused) {
			refuse("members.redeem_refused", problem(c.Lang, err))
			return
		}
		d.fail(w, r, c, err)
		return
	}
	switch {
	case pending:
		d.flash(r, "members.redeem_pending_flash")
	case red.Status == redemption.StatusCompleted:
		d.flash(r, "members.redeem_done_flash")
	}
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

// redeemer runs a redemption as the API does.
func (d *Dashboard) redeemer() ledger.Redeemer {
	a, s := d.cfg.Actions, d.cfg.Stores
	return ledger.Redeemer{Commands: a.Commands, Waiter: a.Waiter, Redemptions: s.Outcomes, Integrations: s.Merchants}
}
