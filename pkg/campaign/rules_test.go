package campaign_test

import (
	"strings"
	"testing"

	"github.com/convida/convida/pkg/campaign"
)

func TestRulesValidate(t *testing.T) {
	n := func(v int) *int { return &v }
	c := func(v int64) *int64 { return &v }
	for _, tt := range []struct {
		name  string
		rules campaign.Rules
		field string // "" = valid
	}{
		{"defaults", campaign.DefaultRules(), ""},
		{"everything off", campaign.Rules{}, ""},
		{"velocity 1", campaign.Rules{MaxReferralsPerHour: n(1)}, ""},
		{"velocity 0", campaign.Rules{MaxReferralsPerHour: n(0)}, "max_referrals_per_hour"},
		{"velocity too high", campaign.Rules{MaxReferralsPerHour: n(campaign.MaxReferralsPerHourLimit + 1)}, "max_referrals_per_hour"},
		{"cap 0", campaign.Rules{MaxRewardPerMonth: c(0)}, ""},
		{"cap negative", campaign.Rules{MaxRewardPerMonth: c(-1)}, "max_reward_per_month"},
		{"discount type unknown", campaign.Rules{RefereeDiscountType: "free"}, "referee_discount_type"},
		{"value without type", campaign.Rules{RefereeDiscountValue: 5}, "referee_discount_value"},
		{"percent 100", campaign.Rules{RefereeDiscountType: campaign.RewardPercentage, RefereeDiscountValue: 100}, ""},
		{"percent 101", campaign.Rules{RefereeDiscountType: campaign.RewardPercentage, RefereeDiscountValue: 101}, "referee_discount_value"},
		{"fixed 0", campaign.Rules{RefereeDiscountType: campaign.RewardFixed}, "referee_discount_value"},
		{"fixed 990", campaign.Rules{RefereeDiscountType: campaign.RewardFixed, RefereeDiscountValue: 990}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rules.Validate()
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.field != "" && (err == nil || !strings.Contains(err.Error(), ": "+tt.field+":")):
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}

func TestUpdateRefereeDiscountChanged(t *testing.T) {
	cur := campaign.Campaign{Rules: campaign.Rules{RefereeDiscountType: campaign.RewardPercentage, RefereeDiscountValue: 10}}
	none, ten, fifteen := "", int64(10), int64(15)
	for _, tt := range []struct {
		name string
		upd  campaign.Update
		want bool
	}{
		{"nothing", campaign.Update{}, false},
		{"same value", campaign.Update{RefereeDiscountValue: &ten}, false},
		{"new value", campaign.Update{RefereeDiscountValue: &fifteen}, true},
		{"cleared", campaign.Update{RefereeDiscountType: &none}, true},
	} {
		if got := tt.upd.RefereeDiscountChanged(cur); got != tt.want {
			t.Errorf("%s: RefereeDiscountChanged = %v, want %v", tt.name, got, tt.want)
		}
	}
}
