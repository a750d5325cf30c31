package campaign_test

import (
	"strconv"
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
		{"creator velocity 1", campaign.Rules{MaxCreatorReferralsPerHour: n(1)}, ""},
		{"creator velocity at the limit", campaign.Rules{MaxCreatorReferralsPerHour: n(campaign.MaxReferralsPerHourLimit)}, ""},
		{"creator velocity 0", campaign.Rules{MaxCreatorReferralsPerHour: n(0)}, "max_creator_referrals_per_hour"},
		{"creator velocity too high", campaign.Rules{MaxCreatorReferralsPerHour: n(campaign.MaxReferralsPerHourLimit + 1)}, "max_creator_referrals_per_hour"},
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

// TestReferralsPerHour: a creator is held only past the creator limit,
// which is off by default; anyone else past the member limit.
func TestReferralsPerHour(t *testing.T) {
	n := func(v int) *int { return &v }
	str := func(p *int) string {
		if p == nil {
			return "no limit"
		}
		return strconv.Itoa(*p)
	}
	for _, tt := range []struct {
		name    string
		rules   campaign.Rules
		creator bool
		want    *int
	}{
		{"defaults, a member", campaign.DefaultRules(), false, n(campaign.DefaultMaxReferralsPerHour)},
		{"defaults, a creator", campaign.DefaultRules(), true, nil},
		{"a creator limit, a creator", campaign.Rules{MaxReferralsPerHour: n(20), MaxCreatorReferralsPerHour: n(500)}, true, n(500)},
		{"a creator limit, a member", campaign.Rules{MaxReferralsPerHour: n(20), MaxCreatorReferralsPerHour: n(500)}, false, n(20)},
		{"only a creator limit, a member", campaign.Rules{MaxCreatorReferralsPerHour: n(500)}, false, nil},
	} {
		if got := tt.rules.ReferralsPerHour(tt.creator); str(got) != str(tt.want) {
			t.Errorf("%s: ReferralsPerHour(%v) = %s, want %s", tt.name, tt.creator, str(got), str(tt.want))
		}
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
