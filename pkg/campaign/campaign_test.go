package campaign

import (
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

func TestReward(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ          string
		value, order int64
		want         int64
	}{
		{RewardFixed, 1500, 9790, 1500},
		{RewardPercentage, 10, 9790, 979},
		{RewardPercentage, 10, 9799, 979}, // rounded down to the cent
		{RewardPercentage, 100, 1, 1},
		{RewardPercentage, 15, 1, 0},
	}
	for _, tt := range tests {
		c := Campaign{RewardType: tt.typ, RewardValue: tt.value}
		if got := c.Reward(tt.order); got != tt.want {
			t.Errorf("%s %d of %d = %d, want %d", tt.typ, tt.value, tt.order, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	valid := Campaign{Name: "Padrão", RewardType: RewardPercentage, RewardValue: 10, WarrantyDays: DefaultWarrantyDays}
	with := func(f func(*Campaign)) Campaign { c := valid; f(&c); return c }
	tests := []struct {
		name string
		c    Campaign
		want string // the message; "" for valid
	}{
		{"a percentage campaign is valid", valid, ""},
		{"a fixed campaign is valid", with(func(c *Campaign) { c.RewardType, c.RewardValue = RewardFixed, 1500 }), ""},
		{"the bounds are inclusive", with(func(c *Campaign) {
			c.RewardType, c.RewardValue, c.WarrantyDays, c.MinRedemption = RewardFixed, MaxFixedReward, MaxWarrantyDays, MaxMinRedemption
		}), ""},
		{"a zero warranty is allowed", with(func(c *Campaign) { c.WarrantyDays = 0 }), ""},
		{"the name is required", with(func(c *Campaign) { c.Name = "" }), "name: is required"},
		{"a blank name is no name", with(func(c *Campaign) { c.Name = " \t" }), "name: is required"},
		{"a name of 200 characters", with(func(c *Campaign) { c.Name = strings.Repeat("ã", 200) }), ""},
		{"a name over 200 characters", with(func(c *Campaign) { c.Name = strings.Repeat("ã", 201) }), "name: must be at most 200 characters"},
		{"the name is checked first", Campaign{RewardType: "points", WarrantyDays: -1}, "name: is required"},
		{"the reward type is percentage or fixed", with(func(c *Campaign) { c.RewardType = "points" }), "reward_type: must be percentage or fixed"},
		{"the reward type is case-sensitive", with(func(c *Campaign) { c.RewardType = "FIXED" }), "reward_type: must be percentage or fixed"},
		{"warranty days are not negative", with(func(c *Campaign) { c.WarrantyDays = -1 }), "warranty_days: must be from 0 to 3650"},
		{"warranty days are at most ten years", with(func(c *Campaign) { c.WarrantyDays = 3651 }), "warranty_days: must be from 0 to 3650"},
		{"warranty days before the reward value", with(func(c *Campaign) { c.WarrantyDays, c.RewardValue = -1, 0 }), "warranty_days: must be from 0 to 3650"},
		{"a percentage is at least 1", with(func(c *Campaign) { c.RewardValue = 0 }), "reward_value: a percentage must be a whole percent from 1 to 100"},
		{"a percentage is at most 100", with(func(c *Campaign) { c.RewardValue = 101 }), "reward_value: a percentage must be a whole percent from 1 to 100"},
		{"a fixed reward is at least a cent", with(func(c *Campaign) { c.RewardType, c.RewardValue = RewardFixed, 0 }), "reward_value: a fixed reward must be from 1 to 1000000000 cents"},
		{"a fixed reward is bounded", with(func(c *Campaign) { c.RewardType, c.RewardValue = RewardFixed, MaxFixedReward+1 }), "reward_value: a fixed reward must be from 1 to 1000000000 cents"},
		{"the minimum redemption is not negative", with(func(c *Campaign) { c.MinRedemption = -1 }), "min_redemption: must be from 0 to 1000000000 cents"},
		{"the minimum redemption is bounded", with(func(c *Campaign) { c.MinRedemption = MaxMinRedemption + 1 }), "min_redemption: must be from 0 to 1000000000 cents"},
	}
	for _, tt := range tests {
		if err := tt.c.Validate(); !invalidAs(err, tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestUpdateValidate(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	days := func(n int) *int { return &n }
	value := func(n int64) *int64 { return &n }
	tests := []struct {
		name string
		upd  Update
		want string
	}{
		{"an empty update is valid", Update{}, ""},
		{"a name and warranty days", Update{Name: str("VIP"), WarrantyDays: days(30)}, ""},
		{"reward rules wait for the campaign", Update{RewardValue: value(1000)}, ""},
		{"a name set must not be blank", Update{Name: str("  ")}, "name: must not be empty"},
		{"a name of 200 characters", Update{Name: str(strings.Repeat("é", 200))}, ""},
		{"a name set is bounded", Update{Name: str(strings.Repeat("<", 180_000))}, "name: must be at most 200 characters"},
		{"warranty days are not negative", Update{WarrantyDays: days(-1)}, "warranty_days: must be from 0 to 3650"},
		{"warranty days are bounded", Update{WarrantyDays: days(3651)}, "warranty_days: must be from 0 to 3650"},
	}
	for _, tt := range tests {
		if err := tt.upd.Validate(); !invalidAs(err, tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
	// The rules of the reward type apply to the result.
	cur := Campaign{Name: "Padrão", RewardType: RewardPercentage, RewardValue: 10}
	next := Update{RewardValue: value(1000)}.Apply(cur)
	if err := next.Validate(); !invalidAs(err, "reward_value: a percentage must be a whole percent from 1 to 100") {
		t.Errorf("a percentage update over 100: Validate() = %v", err)
	}
}

// invalidAs reports whether err is nil for want "", or an apperr.Invalid
// with the message want.
func invalidAs(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return apperr.Is(err, apperr.Invalid) && apperr.MessageOf(err) == want
}
