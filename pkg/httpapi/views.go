package httpapi

import (
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/referral"
)

// PublicWallet is the member-facing wallet (spec 2.2, decision 18).
type PublicWallet struct {
	TotalEarned   int64 `json:"totalEarned"`
	TotalRedeemed int64 `json:"totalRedeemed"`
	Available     int64 `json:"available"`
	Pending       int64 `json:"pending"`
	Cancelled     int64 `json:"cancelled"`
}

func publicWallet(w ledger.Wallet) PublicWallet {
	return PublicWallet{TotalEarned: w.TotalEarned, TotalRedeemed: w.TotalRedeemed, Available: w.Available,
		Pending: w.Pending, Cancelled: w.Cancelled}
}

// PublicMember is the member-facing member (spec 2.1).
type PublicMember struct {
	ID           string       `json:"id"`
	Email        string       `json:"email"`
	Name         string       `json:"name"`
	ReferralCode string       `json:"referralCode"`
	ReferralLink string       `json:"referralLink"`
	Status       string       `json:"status"`
	Wallet       PublicWallet `json:"wallet"`
}

func publicMember(m *member.Member, mer *merchant.Merchant, w ledger.Wallet) PublicMember {
	return PublicMember{ID: m.ID.String(), Email: m.Email, Name: m.Name, ReferralCode: m.CouponCode,
		ReferralLink: member.Link(mer.StoreURL, mer.ReferralParam, m.CouponCode), Status: m.Status,
		Wallet: publicWallet(w)}
}

// PublicTransaction is a member-facing transaction (spec 2.3).
type PublicTransaction struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Amount      int64  `json:"amount"`
	Description string `json:"description"`
	CreatedAt   string `json:"createdAt"`
}

// PublicReferral is an entry of /member/referrals (spec 2.4).
type PublicReferral struct {
	ID           string `json:"id"`
	RefereeName  string `json:"refereeName"`
	RefereeEmail string `json:"refereeEmail"`
	OrderAmount  int64  `json:"orderAmount"`
	RewardAmount int64  `json:"rewardAmount"`
	Status       string `json:"status"`
	CouponUsed   string `json:"couponUsed"`
	CreatedAt    string `json:"createdAt"`
}

func publicReferral(r referral.Referral) PublicReferral {
	return PublicReferral{ID: r.ID.String(), RefereeName: r.RefereeName, RefereeEmail: r.RefereeEmail,
		OrderAmount: r.OrderValue, RewardAmount: r.RewardAmount, Status: r.Status, CouponUsed: r.CouponUsed,
		CreatedAt: jsontime.Format(r.CreatedAt)}
}

// AdminMember is the administrative member (spec 2.5).
type AdminMember = member.AdminView

func adminMember(m *member.Member, w ledger.Wallet, st member.Stats) AdminMember {
	return m.AdminView(w.Pending, w.Available, w.TotalEarned, st.TotalReferrals)
}

// AdminWallet is GET /members/{id}/wallet (decision 20).
type AdminWallet struct {
	MemberID      string  `json:"member_id"`
	Pending       int64   `json:"pending"`
	Available     int64   `json:"available"`
	TotalEarned   int64   `json:"total_earned"`
	TotalRedeemed int64   `json:"total_redeemed"`
	Cancelled     int64   `json:"cancelled"`
	Currency      string  `json:"currency"`
	UpdatedAt     *string `json:"updated_at"`
}

// AdminCampaign is the campaign (spec 2.8).
type AdminCampaign struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	RewardType    string        `json:"reward_type"`
	RewardValue   int64         `json:"reward_value"`
	WarrantyDays  int           `json:"warranty_days"`
	MinRedemption int64         `json:"min_redemption"`
	IsActive      bool          `json:"is_active"`
	IsDefault     bool          `json:"is_default"`
	AutoRegister  bool          `json:"auto_register"`
	Stats         CampaignStats `json:"stats"`
	CreatedAt     string        `json:"created_at"`
	UpdatedAt     string        `json:"updated_at"`
}

// CampaignStats are the stats of a campaign.
type CampaignStats struct {
	TotalMembers     int64 `json:"total_members"`
	TotalReferrals   int64 `json:"total_referrals"`
	TotalRewardsPaid int64 `json:"total_rewards_paid"`
}

func adminCampaign(c *campaign.Campaign, st campaign.Stats) AdminCampaign {
	return AdminCampaign{
		ID: ids.Format(ids.Campaign, c.ID), Name: c.Name, RewardType: c.RewardType, RewardValue: c.RewardValue,
		WarrantyDays: c.WarrantyDays, MinRedemption: c.MinRedemption, IsActive: c.IsActive, IsDefault: c.IsDefault,
		AutoRegister: c.AutoRegister,
		Stats:        CampaignStats{TotalMembers: st.TotalMembers, TotalReferrals: st.TotalReferrals, TotalRewardsPaid: st.TotalRewardsPaid},
		CreatedAt:    jsontime.Format(c.CreatedAt), UpdatedAt: jsontime.Format(c.UpdatedAt),
	}
}
