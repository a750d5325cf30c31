package campaign

import (
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
)

// Filter selects a page of a merchant's campaigns, newest first.
type Filter struct {
	Offset int
	Limit  int
}

// Update is a partial change of a campaign: a nil field is left as it is.
// The reward type is immutable, so it has no field.
type Update struct {
	Name          *string
	RewardValue   *int64
	WarrantyDays  *int
	MinRedemption *int64
	IsActive      *bool
	AutoRegister  *bool
	// IsDefault true moves the merchant's default to the campaign; false is
	// refused on the current default, since a merchant always has one.
	IsDefault *bool
	// The rules: a nil field is left as it is; a Change with a nil To
	// clears a nullable one. The referee discount's type and value change
	// together: a type without a value keeps the current value.
	MaxReferralsPerHour        *Change[int]
	MaxCreatorReferralsPerHour *Change[int]
	MaxRewardPerMonth          *Change[int64]
	BlockDisposableEmails      *bool
	RefereeDiscountType        *string // "" clears the discount (and its value)
	RefereeDiscountValue       *int64
}

// Change sets a nullable field to To, or clears it when To is nil.
type Change[T any] struct{ To *T }

// RefereeDiscountChanged reports whether applying upd to c changes the
// discount members' coupons carry at the platforms.
func (upd Update) RefereeDiscountChanged(c Campaign) bool {
	next := upd.Apply(c)
	return next.RefereeDiscountType != c.RefereeDiscountType || next.RefereeDiscountValue != c.RefereeDiscountValue
}

// Validate checks what can be checked of upd without the campaign: a name,
// when set, that is not blank and of at most bounds.Name characters, and warranty days, when set, from 0 to
// MaxWarrantyDays. The rules that depend on the reward type are checked on
// the result, upd.Apply(current).Validate(). The error is apperr.Invalid
// naming the field.
func (upd Update) Validate() error {
	if upd.Name != nil {
		if strings.TrimSpace(*upd.Name) == "" {
			return apperr.Invalidf("name", apperr.RuleRequired, "must not be empty")
		}
		if err := bounds.Check("name", *upd.Name, bounds.Name); err != nil {
			return err
		}
	}
	if upd.WarrantyDays != nil && (*upd.WarrantyDays < 0 || *upd.WarrantyDays > MaxWarrantyDays) {
		return errWarrantyDays()
	}
	return nil
}

// Apply returns c with upd's fields set, for validating the result before
// it is stored.
func (upd Update) Apply(c Campaign) Campaign {
	if upd.Name != nil {
		c.Name = *upd.Name
	}
	if upd.RewardValue != nil {
		c.RewardValue = *upd.RewardValue
	}
	if upd.WarrantyDays != nil {
		c.WarrantyDays = *upd.WarrantyDays
	}
	if upd.MinRedemption != nil {
		c.MinRedemption = *upd.MinRedemption
	}
	if upd.IsActive != nil {
		c.IsActive = *upd.IsActive
	}
	if upd.AutoRegister != nil {
		c.AutoRegister = *upd.AutoRegister
	}
	if upd.IsDefault != nil {
		c.IsDefault = *upd.IsDefault
	}
	if upd.MaxReferralsPerHour != nil {
		c.MaxReferralsPerHour = upd.MaxReferralsPerHour.To
	}
	if upd.MaxCreatorReferralsPerHour != nil {
		c.MaxCreatorReferralsPerHour = upd.MaxCreatorReferralsPerHour.To
	}
	if upd.MaxRewardPerMonth != nil {
		c.MaxRewardPerMonth = upd.MaxRewardPerMonth.To
	}
	if upd.BlockDisposableEmails != nil {
		c.BlockDisposableEmails = *upd.BlockDisposableEmails
	}
	if upd.RefereeDiscountType != nil {
		c.RefereeDiscountType = *upd.RefereeDiscountType
		if c.RefereeDiscountType == "" {
			c.RefereeDiscountValue = 0
		}
	}
	if upd.RefereeDiscountValue != nil {
		c.RefereeDiscountValue = *upd.RefereeDiscountValue
	}
	return c
}

// Listed is a campaign as the admin list shows it, read with its stats.
type Listed struct {
	Campaign
	Stats Stats
}
