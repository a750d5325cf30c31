// Package campaign holds campaigns: reward rules, warranty, minimum
// redemption, and the default-campaign rule.
package campaign

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
)

// Reward types (immutable after creation).
const (
	RewardPercentage = "percentage"
	RewardFixed      = "fixed"
)

// DefaultWarrantyDays applies when a campaign is created without one.
const DefaultWarrantyDays = 7

// Campaign defines how a member's referred sales are rewarded.
type Campaign struct {
	ID            uuid.UUID
	MerchantID    uuid.UUID
	Name          string
	RewardType    string
	RewardValue   int64 // cents for fixed, whole percent for percentage
	WarrantyDays  int
	MinRedemption int64 // cents
	IsActive      bool
	IsDefault     bool
	AutoRegister  bool
	Rules
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Rules are a campaign's fraud thresholds and the referee's discount
// (issue 11). The ledger applies the thresholds when it attributes a sale
// (pkg/fraud); the discount is the coupon the member's code carries at the
// platforms.
type Rules struct {
	// MaxReferralsPerHour flags for review a member's referral beyond this
	// many in the hour before it; nil is no limit. It does not apply to a
	// creator (a member with a creator profile): see
	// MaxCreatorReferralsPerHour.
	MaxReferralsPerHour *int
	// MaxCreatorReferralsPerHour is MaxReferralsPerHour for creators; nil,
	// the default, is no limit: a creator selling hundreds an hour to her
	// audience is what the creators feature is for, not fraud.
	MaxCreatorReferralsPerHour *int
	// MaxRewardPerMonth caps the reward cents a member earns in the
	// campaign per calendar month (UTC); a referral over it earns only up
	// to the cap and is flagged for review; nil is no cap.
	MaxRewardPerMonth *int64
	// BlockDisposableEmails flags for review a sale whose buyer e-mail is
	// on a disposable-address domain.
	BlockDisposableEmails bool
	// RefereeDiscountType is "" (no discount), RewardPercentage or
	// RewardFixed; RefereeDiscountValue is whole percent or cents.
	RefereeDiscountType  string
	RefereeDiscountValue int64
}

// Defaults of a campaign's rules when it is created without them.
const (
	DefaultMaxReferralsPerHour = 20
	MaxReferralsPerHourLimit   = 1_000_000
)

// DefaultRules returns the rules a campaign is created with: at most
// DefaultMaxReferralsPerHour referrals per member per hour before review,
// none for creators, disposable e-mails flagged, no monthly cap and no referee discount.
func DefaultRules() Rules {
	n := DefaultMaxReferralsPerHour
	return Rules{MaxReferralsPerHour: &n, BlockDisposableEmails: true}
}

// ReferralsPerHour returns the velocity limit that applies to a member of
// the campaign: MaxCreatorReferralsPerHour for a creator, else
// MaxReferralsPerHour; nil is no limit.
func (r Rules) ReferralsPerHour(creator bool) *int {
	if creator {
		return r.MaxCreatorReferralsPerHour
	}
	return r.MaxReferralsPerHour
}

// HasRefereeDiscount reports whether members' codes carry a discount for
// the friend who uses them, and so are provisioned at the platforms.
func (r Rules) HasRefereeDiscount() bool {
	return r.RefereeDiscountType != "" && r.RefereeDiscountValue > 0
}

// Validate checks the rules, the first broken one winning, with an
// apperr.Invalid message that starts with the field's API name.
func (r Rules) Validate() error {
	switch {
	case r.MaxReferralsPerHour != nil && (*r.MaxReferralsPerHour < 1 || *r.MaxReferralsPerHour > MaxReferralsPerHourLimit):
		return apperr.Invalidf("max_referrals_per_hour", apperr.RuleOutOfRange, "must be from 1 to %d, or null for no limit", MaxReferralsPerHourLimit).WithLimit(MaxReferralsPerHourLimit)
	case r.MaxCreatorReferralsPerHour != nil && (*r.MaxCreatorReferralsPerHour < 1 || *r.MaxCreatorReferralsPerHour > MaxReferralsPerHourLimit):
		return apperr.Invalidf("max_creator_referrals_per_hour", apperr.RuleOutOfRange, "must be from 1 to %d, or null for no limit", MaxReferralsPerHourLimit).WithLimit(MaxReferralsPerHourLimit)
	case r.MaxRewardPerMonth != nil && (*r.MaxRewardPerMonth < 0 || *r.MaxRewardPerMonth > MaxFixedReward):
		return apperr.Invalidf("max_reward_per_month", apperr.RuleOutOfRange, "must be from 0 to %d cents, or null for no cap", MaxFixedReward).WithLimit(MaxFixedReward)
	case r.RefereeDiscountType != "" && r.RefereeDiscountType != RewardPercentage && r.RefereeDiscountType != RewardFixed:
		return apperr.Invalidf("referee_discount_type", apperr.RuleNotAllowed, "must be percentage, fixed or null")
	case r.RefereeDiscountType == "" && r.RefereeDiscountValue != 0:
		return apperr.Invalidf("referee_discount_value", apperr.RuleNeedsOther, "needs a referee_discount_type")
	case r.RefereeDiscountType == RewardPercentage && (r.RefereeDiscountValue < 1 || r.RefereeDiscountValue > 100):
		return apperr.Invalidf("referee_discount_value", apperr.RulePercent, "a percentage must be a whole percent from 1 to 100")
	case r.RefereeDiscountType == RewardFixed && (r.RefereeDiscountValue < 1 || r.RefereeDiscountValue > MaxFixedReward):
		return apperr.Invalidf("referee_discount_value", apperr.RuleOutOfRange, "a fixed discount must be from 1 to %d cents", MaxFixedReward).WithLimit(MaxFixedReward)
	}
	return nil
}

// Bounds of a campaign's figures (decision 15).
const (
	MaxWarrantyDays  = 3650
	MaxFixedReward   = 1_000_000_000 // cents
	MaxMinRedemption = 1_000_000_000 // cents
)

// Validate checks c as it would be stored, the first broken rule winning: a
// name that is not blank, of at most bounds.Name characters; a reward type of RewardPercentage or RewardFixed;
// warranty days from 0 to MaxWarrantyDays; a reward value of a whole
// percent from 1 to 100, or from 1 to MaxFixedReward cents; a minimum
// redemption from 0 to MaxMinRedemption cents; then the rules
// (Rules.Validate). The error is apperr.Invalid
// with a message that starts with the field's API name.
func (c *Campaign) Validate() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return apperr.Invalidf("name", apperr.RuleRequired, "is required")
	case utf8.RuneCountInString(c.Name) > bounds.Name:
		return bounds.TooLong("name", bounds.Name)
	case c.RewardType != RewardFixed && c.RewardType != RewardPercentage:
		return apperr.Invalidf("reward_type", apperr.RuleNotAllowed, "must be percentage or fixed")
	case c.WarrantyDays < 0 || c.WarrantyDays > MaxWarrantyDays:
		return errWarrantyDays()
	case c.RewardType == RewardPercentage && (c.RewardValue < 1 || c.RewardValue > 100):
		return apperr.Invalidf("reward_value", apperr.RulePercent, "a percentage must be a whole percent from 1 to 100")
	case c.RewardType == RewardFixed && (c.RewardValue < 1 || c.RewardValue > MaxFixedReward):
		return apperr.Invalidf("reward_value", apperr.RuleOutOfRange, "a fixed reward must be from 1 to %d cents", MaxFixedReward).WithLimit(MaxFixedReward)
	case c.MinRedemption < 0 || c.MinRedemption > MaxMinRedemption:
		return apperr.Invalidf("min_redemption", apperr.RuleOutOfRange, "must be from 0 to %d cents", MaxMinRedemption).WithLimit(MaxMinRedemption)
	}
	return c.Rules.Validate()
}

func errWarrantyDays() error {
	return apperr.Invalidf("warranty_days", apperr.RuleOutOfRange, "must be from 0 to %d", MaxWarrantyDays).WithLimit(MaxWarrantyDays)
}

// Stats are a campaign's figures.
type Stats struct {
	TotalMembers     int64
	TotalReferrals   int64
	TotalRewardsPaid int64
}

// Reward returns the reward in cents for an order of orderValue cents
// (decision 15): fixed → RewardValue; percentage → RewardValue percent of
// the order, rounded down to the cent.
func (c Campaign) Reward(orderValue int64) int64 {
	if c.RewardType == RewardFixed {
		return c.RewardValue
	}
	return orderValue * c.RewardValue / 100
}

// WarrantyEnd returns when a sale paid at paidAt leaves the warranty.
func (c Campaign) WarrantyEnd(paidAt time.Time) time.Time {
	return paidAt.Add(time.Duration(c.WarrantyDays) * 24 * time.Hour)
}
