package inbound

import (
	"time"

	"github.com/convida/convida/pkg/apperr"
)

// Sale is one order a platform's API lists, in the same terms for every
// platform, for reconciliation: the order a webhook would have brought.
// Texts are trimmed and cut to their bounds (a platform cannot fix its
// answer); the caller's normaliser decides what each status means.
type Sale struct {
	Platform       string // the platform's name (provider.Descriptor.Name)
	OrderID        string // the id its webhooks carry (Hotmart's transaction HP…)
	Status         string // the platform's own word: "approved", "paid", "REFUNDED", …
	BuyerEmail     string
	BuyerName      string
	BuyerDocument  string // CPF or CNPJ, when the platform lists it
	Amount         int64  // cents, exact
	Currency       string // "BRL" when the platform does not say
	CouponCode     string // the coupon used, "" when none
	ReferralCode   string // the code of a referral link (Kiwify's sck, src, s1), "" when none
	PromocodeID    string // Yampi: the promocode's id, even when the list omits its code
	SubscriptionID string // Guru: the subscription the charge belongs to
	OrderedAt      time.Time
	ConfirmedAt    time.Time // paid or approved; zero when not (yet)
	// Problem, when not "", says why the sale could not be read whole (an
	// amount that is not reais, a date that is not one): the fields are
	// what could be read. The caller counts it rather than stop the pull
	// for one odd order.
	Problem string
}

// Window is the period of a pull: sales whose date (of confirmation for
// Guru, creation for Yampi and Kiwify, order for Hotmart) falls in
// [From, To].
type Window struct{ From, To time.Time }

// Check refuses an empty or reversed window, or one longer than max, for
// the pull of platform name.
func (w Window) Check(name string, max time.Duration) error {
	switch {
	case w.From.IsZero() || w.To.IsZero() || w.To.Before(w.From):
		return apperr.Errorf(apperr.Invalid, "the %s pull needs a window with from before to", name)
	case w.To.Sub(w.From) > max:
		return apperr.Errorf(apperr.Invalid, "the %s pull covers at most %d days at once", name, int(max/(24*time.Hour)))
	}
	return nil
}

// Page receives each page of a pull as it comes; an error stops the pull
// and is returned. It is called once for every page read from the
// platform, of every list a pull reads, even a page that hands over no
// sale (Hotmart's price details, an empty last page): the caller counts
// the pages and sees the pull move on.
type Page func(sales []Sale) error
