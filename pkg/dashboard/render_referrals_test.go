package dashboard

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// referralForRender is a flagged pending referral of 97,90 earning 9,79,
// created at at, as the Referrals pages show it.
func referralForRender(at time.Time) referralRow {
	return newReferralRow(referral.Listed{Referral: referral.Referral{ID: uuid.New(), MemberID: uuid.New(), Source: "guru",
		OrderID: "ord-42", RefereeEmail: "x@mailinator.com", RefereeName: "Bia", OrderValue: 9790, RewardAmount: 979,
		Status: referral.StatusPending, ReviewRequired: true, ReviewReasons: []string{"disposable_email"}, Notes: "checked",
		UnrecoveredAmount: 120, WarrantyExpiresAt: at.Add(7 * 24 * time.Hour), CreatedAt: at, UpdatedAt: at},
		MemberName: "Ana Souza", MemberEmail: "ana@example.com"})
}

// referralsDataForRender is the review queue with one referral and tabs,
// one of them at the cap.
func referralsDataForRender(at time.Time) referralsData {
	return referralsData{Referrals: []referralRow{referralForRender(at)}, Review: true, ReviewURL: "/dashboard/referrals?review_required=true",
		AllURL: "/dashboard/referrals", CSVURL: "/dashboard/referrals?format=csv",
		Tabs: []Tab{{Label: "referrals.all", Count: report.TabCap, URL: "/dashboard/referrals", Current: true},
			{Label: "referral.status.pending", Value: "pending", Count: 3, URL: "/dashboard/referrals?status=pending"}},
		Pagination: Pagination{Page: 1, PerPage: referralsPerPage, Total: 3}}
}

// campaignDataForRender is the edit page of a fixed campaign with rules,
// a discount and two tiers, its tiers refused.
func campaignDataForRender(at time.Time) campaignData {
	perHour, perMonth := 5, int64(50000)
	c := campaign.Campaign{ID: uuid.New(), Name: "Amigos", RewardType: campaign.RewardFixed, RewardValue: 1500, WarrantyDays: 7,
		IsActive: true, Rules: campaign.Rules{MaxReferralsPerHour: &perHour, MaxRewardPerMonth: &perMonth, BlockDisposableEmails: true,
			RefereeDiscountType: campaign.RewardPercentage, RefereeDiscountValue: 10}, CreatedAt: at}
	data := campaignData{Campaign: campaignRow{Campaign: c, Ref: "cmp_x"}, Form: formOf(English, &c),
		Tiers:     tierRows(English, creator.Tiers{{Name: "Bronze", CommissionBP: 1000}, {Name: "Silver", MinSales: 3, CommissionBP: 1550}}),
		TierAlert: "tiers[1].min_sales: must be greater than the previous tier's"}
	for i := range data.Tiers {
		data.Tiers[i].Num = i + 1
	}
	return data
}

func campaignsDataForRender(at time.Time) campaignsData {
	fixed := campaign.Campaign{ID: uuid.New(), Name: "Amigos", RewardType: campaign.RewardFixed, RewardValue: 1500, WarrantyDays: 7,
		IsActive: true, IsDefault: true, CreatedAt: at}
	pct := campaign.Campaign{ID: uuid.New(), Name: "VIP", RewardType: campaign.RewardPercentage, RewardValue: 12, WarrantyDays: 30, CreatedAt: at}
	return campaignsData{Campaigns: []campaignRow{
		{Campaign: fixed, Ref: "cmp_a", Stats: campaign.Stats{TotalMembers: 3, TotalReferrals: 4, TotalRewardsPaid: 123456}},
		{Campaign: pct, Ref: "cmp_b"}}, Pagination: Pagination{Page: 1, PerPage: campaignsPerPage, Total: 2}}
}
