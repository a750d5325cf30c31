package referral

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/member"
)

var paidAt = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// tenPercent is an active campaign of 10 % with a 7-day warranty.
func tenPercent() *campaign.Campaign {
	return &campaign.Campaign{ID: uuid.New(), RewardType: campaign.RewardPercentage, RewardValue: 10, WarrantyDays: 7, IsActive: true}
}

func ana(status string) *member.Member {
	return &member.Member{ID: uuid.New(), Email: "Ana@Example.com", Status: status}
}

func TestAttribute(t *testing.T) {
	t.Parallel()
	inactive := tenPercent()
	inactive.IsActive = false
	pending := &Referral{Status: StatusPending}
	cancelled := &Referral{Status: StatusCancelled}
	tests := []struct {
		name       string
		buyer      string
		existing   *Referral
		member     *member.Member
		campaign   *campaign.Campaign
		want       Verdict
		wantStatus string
		wantReward int64
		wantNote   string
	}{
		{"14: a sale of an active member on an active campaign is credited pending",
			"bruno@example.com", nil, ana(member.StatusActive), tenPercent(), Credited, StatusPending, 1000, "credited"},
		{"14: a buyer with the referrer's e-mail is created rejected as a self-referral",
			"Ana@Example.com", nil, ana(member.StatusActive), tenPercent(), SelfReferred, StatusRejected, 1000, "self-referral: created rejected"},
		{"14: the self-referral e-mail match ignores case and surrounding spaces",
			"  ana@EXAMPLE.com ", nil, ana(member.StatusActive), tenPercent(), SelfReferred, StatusRejected, 1000, "self-referral: created rejected"},
		{"14: a sale without a buyer e-mail is not a self-referral",
			"", nil, &member.Member{Status: member.StatusActive}, tenPercent(), Credited, StatusPending, 1000, "credited"},
		{"14: an inactive campaign attributes nothing",
			"bruno@example.com", nil, ana(member.StatusActive), inactive, CampaignInactive, "", 0, "campaign inactive: nothing attributed"},
		{"14: a campaign that no longer exists attributes nothing",
			"bruno@example.com", nil, ana(member.StatusActive), nil, CampaignInactive, "", 0, "campaign inactive: nothing attributed"},
		{"14: a blocked member is attributed nothing",
			"bruno@example.com", nil, ana(member.StatusBlocked), tenPercent(), MemberNotActive, "", 0, "member blocked: nothing attributed"},
		{"14: an inactive member is attributed nothing",
			"bruno@example.com", nil, ana(member.StatusInactive), tenPercent(), MemberNotActive, "", 0, "member inactive: nothing attributed"},
		{"18: an erased member's code attributes nothing, though her status is active",
			"bruno@example.com", nil, member.Erase(ana(member.StatusActive), paidAt), tenPercent(), MemberErased, "", 0, "member erased: nothing attributed"},
		{"18: an erased member is no self-referral: her code attributes nothing",
			"Ana@Example.com", nil, member.Erase(ana(member.StatusActive), paidAt), tenPercent(), MemberErased, "", 0, "member erased: nothing attributed"},
		{"14: an order already attributed changes nothing",
			"bruno@example.com", pending, ana(member.StatusActive), tenPercent(), AlreadyAttributed, "", 0, "order already attributed (pending)"},
		{"14: an order whose refund came first is already attributed: the sale credits nothing",
			"bruno@example.com", cancelled, ana(member.StatusActive), tenPercent(), AlreadyAttributed, "", 0, "order already attributed (cancelled)"},
		{"14: an order already attributed is checked before the campaign",
			"bruno@example.com", pending, ana(member.StatusActive), inactive, AlreadyAttributed, "", 0, "order already attributed (pending)"},
		{"14: an inactive campaign is checked before the member",
			"bruno@example.com", nil, ana(member.StatusBlocked), inactive, CampaignInactive, "", 0, "campaign inactive: nothing attributed"},
		{"14: a self-referral of a blocked member attributes nothing",
			"ana@example.com", nil, ana(member.StatusBlocked), tenPercent(), MemberNotActive, "", 0, "member blocked: nothing attributed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Attribute(Order{Amount: 10000, BuyerEmail: tt.buyer, PaidAt: paidAt}, tt.existing, tt.member, tt.campaign, History{})
			if got.Verdict != tt.want || got.Status() != tt.wantStatus || got.Reward != tt.wantReward || got.Note != tt.wantNote {
				t.Errorf("got verdict %d status %q reward %d note %q; want %d %q %d %q",
					got.Verdict, got.Status(), got.Reward, got.Note, tt.want, tt.wantStatus, tt.wantReward, tt.wantNote)
			}
			wantReason := ""
			if tt.want == SelfReferred {
				wantReason = ReasonSelfReferral
			}
			if got.RejectionReason() != wantReason {
				t.Errorf("rejection reason %q, want %q", got.RejectionReason(), wantReason)
			}
			if got.Status() != "" && !got.WarrantyExpiresAt.Equal(paidAt.Add(7*24*time.Hour)) {
				t.Errorf("warranty expires %v, want paid_at + 7 days", got.WarrantyExpiresAt)
			}
		})
	}
}

func TestAttributeRefund(t *testing.T) {
	t.Parallel()
	inactive := tenPercent()
	inactive.IsActive = false
	tests := []struct {
		name         string
		campaign     *campaign.Campaign
		wantReward   int64
		wantWarranty time.Time
	}{
		{"16: a refund before its sale is recorded cancelled with the sale's reward and warranty",
			tenPercent(), 1000, paidAt.Add(7 * 24 * time.Hour)},
		{"16: a refund before its sale is recorded cancelled even on an inactive campaign",
			inactive, 1000, paidAt.Add(7 * 24 * time.Hour)},
		{"16: a refund before its sale without a campaign is recorded cancelled with no reward",
			nil, 0, paidAt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := AttributeRefund(Order{Amount: 10000, BuyerEmail: "bruno@example.com", PaidAt: paidAt}, tt.campaign)
			if got.Verdict != RefundedFirst || got.Status() != StatusCancelled || got.RejectionReason() != "" {
				t.Errorf("verdict %d status %q reason %q; want RefundedFirst cancelled without reason", got.Verdict, got.Status(), got.RejectionReason())
			}
			if got.Reward != tt.wantReward || !got.WarrantyExpiresAt.Equal(tt.wantWarranty) {
				t.Errorf("reward %d warranty %v; want %d %v", got.Reward, got.WarrantyExpiresAt, tt.wantReward, tt.wantWarranty)
			}
		})
	}
}

func TestReward(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		rewardType string
		value      int64
		order      int64
		want       int64
	}{
		{"15: fixed is reward_value cents whatever the order", campaign.RewardFixed, 1500, 10000, 1500},
		{"15: fixed is reward_value cents even on a zero order", campaign.RewardFixed, 1500, 0, 1500},
		{"15: fixed can exceed the order value", campaign.RewardFixed, 1500, 999, 1500},
		{"15: percentage is whole percent of the order value", campaign.RewardPercentage, 10, 10000, 1000},
		{"15: percentage rounds down to the cent", campaign.RewardPercentage, 10, 999, 99},
		{"15: percentage rounds down an odd amount", campaign.RewardPercentage, 33, 1001, 330},
		{"15: percentage below one cent is zero", campaign.RewardPercentage, 1, 99, 0},
		{"15: percentage of a zero order is zero", campaign.RewardPercentage, 10, 0, 0},
		{"15: 100 percent is the whole order", campaign.RewardPercentage, 100, 12345, 12345},
		{"15: 1 percent of one real is one cent", campaign.RewardPercentage, 1, 100, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &campaign.Campaign{RewardType: tt.rewardType, RewardValue: tt.value, WarrantyDays: 7, IsActive: true}
			got := Attribute(Order{Amount: tt.order, PaidAt: paidAt}, nil, &member.Member{Status: member.StatusActive}, c, History{})
			if got.Verdict != Credited || got.Reward != tt.want {
				t.Errorf("verdict %d reward %d, want credited %d", got.Verdict, got.Reward, tt.want)
			}
		})
	}
}

func TestCouponKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, sale, code string
		match            bool
	}{
		{"14: a coupon matches the referral code exactly", "LOJA-ANA-7K2P", "LOJA-ANA-7K2P", true},
		{"14: a coupon matches the referral code case-insensitively", "loja-Ana-7k2p", "LOJA-ANA-7K2P", true},
		{"14: a coupon matches ignoring surrounding spaces", " LOJA-ANA-7K2P\t", "LOJA-ANA-7K2P", true},
		{"14: another member's code does not match", "LOJA-BIA-7K2P", "LOJA-ANA-7K2P", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := CouponKey(tt.sale) == CouponKey(tt.code); got != tt.match {
				t.Errorf("CouponKey(%q) == CouponKey(%q) is %v, want %v", tt.sale, tt.code, got, tt.match)
			}
		})
	}
	t.Run("14: a blank coupon is no coupon: the sale is unattributed", func(t *testing.T) {
		t.Parallel()
		if got := CouponKey("  "); got != "" {
			t.Errorf("CouponKey(blank) = %q, want \"\"", got)
		}
	})
}

func TestAttributeFraudAndTiers(t *testing.T) {
	t.Parallel()
	two, cap := 2, int64(2500)
	ruled := tenPercent()
	ruled.Rules = campaign.Rules{BlockDisposableEmails: true, MaxReferralsPerHour: &two, MaxRewardPerMonth: &cap}
	ladder := creator.Tiers{{Name: "Bronze", MinSales: 0, CommissionBP: 1000}, {Name: "Silver", MinSales: 3, CommissionBP: 1500}}
	member := &member.Member{Status: member.StatusActive, Email: "ana.souza@gmail.com", Document: "529.982.247-25"}
	tests := []struct {
		name        string
		order       Order
		history     History
		want        Verdict
		wantReward  int64
		wantReasons []string
	}{
		{"a Gmail address with dots and a +tag is the referrer", Order{Amount: 10000, BuyerEmail: "AnaSouza+x@googlemail.com"}, History{}, SelfReferred, 1000, nil},
		{"the referrer's CPF without punctuation is the referrer", Order{Amount: 10000, BuyerEmail: "bia@example.com", BuyerDocument: "52998224725"}, History{}, SelfReferred, 1000, nil},
		{"a disposable buyer is held for review", Order{Amount: 10000, BuyerEmail: "bia@mailinator.com"}, History{}, Credited, 1000, []string{fraud.ReasonDisposableEmail}},
		{"the 3rd referral of an hour over 2 is held for review", Order{Amount: 10000, BuyerEmail: "bia@example.com"}, History{Stats: fraud.Stats{LastHour: 2}}, Credited, 1000, []string{fraud.ReasonVelocity}},
		{"a creator's 3rd referral of an hour is not held: creators have no limit unless the campaign sets one", Order{Amount: 10000, BuyerEmail: "bia@example.com"}, History{Creator: true, Stats: fraud.Stats{LastHour: 2}}, Credited, 1000, nil},
		{"over the monthly cap earns the rest up to it", Order{Amount: 10000, BuyerEmail: "bia@example.com"}, History{Stats: fraud.Stats{MonthReward: 1800}}, Credited, 700, []string{fraud.ReasonMonthlyCap}},
		{"21: a creator's 2nd sale of the month earns Bronze", Order{Amount: 9790, BuyerEmail: "bia@example.com"}, History{MonthSales: 1, Tiers: ladder}, Credited, 979, nil},
		{"21: a creator's 3rd sale of the month earns Silver, rounded down", Order{Amount: 9790, BuyerEmail: "bia@example.com"}, History{MonthSales: 2, Tiers: ladder}, Credited, 1468, nil},
		{"21: below the first tier the campaign's reward applies", Order{Amount: 9790, BuyerEmail: "bia@example.com"}, History{MonthSales: 0, Tiers: ladder[1:]}, Credited, 979, nil},
		{"21: the cap applies to a tier's commission", Order{Amount: 20000, BuyerEmail: "bia@example.com"}, History{MonthSales: 5, Tiers: ladder, Stats: fraud.Stats{MonthReward: 1000}}, Credited, 1500, []string{fraud.ReasonMonthlyCap}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.order.PaidAt = paidAt
			got := Attribute(tt.order, nil, member, ruled, tt.history)
			if got.Verdict != tt.want || got.Reward != tt.wantReward || !slices.Equal(got.ReviewReasons, tt.wantReasons) {
				t.Errorf("got verdict %d reward %d reasons %v; want %d %d %v", got.Verdict, got.Reward, got.ReviewReasons, tt.want, tt.wantReward, tt.wantReasons)
			}
		})
	}
}
