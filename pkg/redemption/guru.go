package redemption

import (
	"context"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/platform"
)

// guruCycles is how many cycles one redemption discounts (decision 19).
const guruCycles = 1

// guru adds a one-cycle discount to a Guru subscription.
type guru struct {
	g     *platform.Guru
	subID string
	cents int64
}

func (e *Executor) newGuru(settings merchant.Integration, req Request) (*guru, error) {
	switch missing := MissingSetting(TypeSubscriptionDiscount, settings); {
	case missing != "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the guru %s is not set in the merchant's settings", missing)
	case strings.TrimSpace(req.SubscriptionID) == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the redemption has no guru subscription id")
	}
	if err := checkRequest(merchant.ProviderGuru, settings, req); err != nil {
		return nil, err
	}
	g, err := e.platforms().Guru(guruAccount(settings, req.RedemptionID.String()))
	if err != nil {
		return nil, err
	}
	return &guru{g: g, subID: req.SubscriptionID, cents: req.Amount}, nil
}

func (*guru) platformName() string { return merchant.ProviderGuru }

// attempt discounts the next cycle not billed yet; the platform client
// reads the subscription anew each time, so that a retry after a charge
// that happened meanwhile still discounts the next cycle.
func (g *guru) attempt(ctx context.Context) (Result, error) {
	if err := g.g.DiscountNextCycles(ctx, g.subID, g.cents, guruCycles); err != nil {
		return Result{}, err
	}
	return Result{AppliedCycles: guruCycles}, nil
}
