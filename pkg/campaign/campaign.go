// Package campaign holds campaigns: reward rules, warranty, minimum
// redemption, and the default-campaign rule.
package campaign

import (
	"time"

	"github.com/google/uuid"
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
	CreatedAt     time.Time
	UpdatedAt     time.Time
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
