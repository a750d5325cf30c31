package ledger

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redemption"
)

// A redemption a person starts is a ledger command: an edge (the API, the
// dashboard) publishes it with Issue (decision.go) and waits for the
// ledger's outcome and then the platform's result. This is that path,
// shared by every edge.

// RedemptionFinder reads redemptions.
type RedemptionFinder interface {
	FindRedemption(ctx context.Context, merchantID, id uuid.UUID) (*redemption.Redemption, error)
}

// IntegrationFinder reads a merchant's platform settings (apperr.NotFound
// when the platform was never configured).
type IntegrationFinder interface {
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error)
}

// redeemNamespace derives redemption ids from the keys clients name a
// redemption by.
var redeemNamespace = uuid.MustParse("6f1d3b8e-4c1a-4f0e-9a43-5a3c2b1d0e9f")

// RedemptionIDFor is the id of the merchant's redemption named key (an
// Idempotency-Key, a form's one-time key): a request repeated with the
// same key is the same redemption, and one merchant's keys never name
// another's redemptions.
func RedemptionIDFor(merchantID uuid.UUID, key string) uuid.UUID {
	return uuid.NewSHA1(redeemNamespace, []byte(merchantID.String()+"\x00"+key))
}

// Redeemer runs redemptions (decision 19) for every edge.
type Redeemer struct {
	Commands     CommandPublisher
	Waiter       *Waiter
	Redemptions  RedemptionFinder
	Integrations IntegrationFinder
}

// RedeemRequest is a redemption as an edge asks for it, validated.
type RedeemRequest struct {
	Member *member.Member
	// RedemptionID names the redemption (and so its command): the same id
	// twice is one redemption.
	RedemptionID   uuid.UUID
	Amount         int64 // cents; 0 = all available
	Type           string
	SubscriptionID string
	IssuedAt       time.Time
}

// Redeem runs a redemption: the ledger debits and creates it pending, the
// dispatcher carries it out, and this waits until deadline for the result.
// pending is true when it is still pending then. A redemption whose
// platform is not configured is refused first
// (apperr.IntegrationNotConfigured, see IntegrationReady); one the
// platform refused (the money is back) is apperr.RedemptionFailed with the
// redemption.
func (rd Redeemer) Redeem(ctx context.Context, req RedeemRequest, deadline time.Time) (red *redemption.Redemption, pending bool, err error) {
	m := req.Member
	if err := rd.IntegrationReady(ctx, m.MerchantID, req.Type); err != nil {
		return nil, false, err
	}
	cmd := Command{ID: "redeem:" + req.RedemptionID.String(), Type: CmdRedeem, MerchantID: m.MerchantID,
		MemberID: m.ID, IssuedAt: req.IssuedAt, Redeem: &Redeem{RedemptionID: req.RedemptionID,
			Amount: req.Amount, Type: req.Type, SubscriptionID: req.SubscriptionID}}
	if _, found, err := Issue(ctx, rd.Waiter, rd.Commands, cmd, time.Until(deadline)); err != nil {
		return nil, false, err
	} else if !found {
		return nil, false, apperr.Errorf(apperr.Unavailable, "the ledger did not answer in time; retry with the same Idempotency-Key")
	}
	if _, _, err := rd.Waiter.Wait(ctx, m.MerchantID, ResultCommandID(req.RedemptionID), time.Until(deadline), nil); err != nil {
		return nil, false, err
	}
	if red, err = rd.Redemptions.FindRedemption(ctx, m.MerchantID, req.RedemptionID); err != nil {
		return nil, false, err
	}
	if red.MemberID != m.ID {
		// An Idempotency-Key reused for another member's redemption.
		return nil, false, apperr.Errorf(apperr.IdempotencyReused, "this Idempotency-Key was used for another redemption")
	}
	if red.Status == redemption.StatusFailed {
		return red, false, apperr.Errorf(apperr.RedemptionFailed,
			"the platform refused the redemption %s; the amount was returned to the balance: %s",
			ids.Format(ids.Redemption, red.ID), red.FailureReason)
	}
	return red, red.Status == redemption.StatusPending, nil
}

// IntegrationReady refuses, with apperr.IntegrationNotConfigured, a
// redemption of typ whose platform lacks a setting it needs
// (redemption.MissingSetting). It runs before the ledger: the redemption
// could only fail, and debiting first would leave a cancelled debit and a
// wallet.debited/wallet.credited pair for an error known up front.
func (rd Redeemer) IntegrationReady(ctx context.Context, merchantID uuid.UUID, typ string) error {
	provider := redemption.Provider(typ)
	var settings merchant.Integration
	in, err := rd.Integrations.FindIntegration(ctx, merchantID, provider)
	switch {
	case err == nil:
		settings = *in
	case !apperr.Is(err, apperr.NotFound):
		return err
	}
	if missing := redemption.MissingSetting(typ, settings); missing != "" {
		return apperr.Errorf(apperr.IntegrationNotConfigured,
			"the %s integration is not configured for redemptions: its %s is not set (PUT /api/v1/integrations/%s)",
			provider, missing, provider)
	}
	return nil
}
