package dashboard

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// overviewAndRedemptionPages are TestRenderEveryPage's cases of the
// overview and the redemptions.
func overviewAndRedemptionPages(t *testing.T, at time.Time) []renderCase {
	t.Helper()
	rng, err := report.LastDays(at, 2, defaultZone)
	if err != nil {
		t.Fatal(err)
	}
	memberID := uuid.New()
	o := &report.Overview{Range: rng, Metric: report.MetricReferredRevenue,
		Figures: report.Figures{ReferredRevenue: 123456, Referrals: map[string]int64{"pending": 2, "approved": 1, "rejected": 0, "cancelled": 0},
			ReferralsTotal: 3, RewardsCredited: 979, RewardsReleased: 500, Redeemed: 300, RedeemedCompleted: 200, PendingInWarranty: 479},
		Series:      []report.Point{{Day: rng.From, Value: 0}, {Day: rng.From.AddDate(0, 0, 1), Value: 123456}},
		TopMembers:  []report.Leader{{MemberID: memberID, Name: "Ana Souza", Email: "ana@example.com", Sales: 3, Revenue: 123456}},
		TopCreators: []report.Leader{{MemberID: memberID, Name: "Ana Souza", DisplayName: "Ana Fit", Sales: 3, Revenue: 123456}},
		Recent: []referral.Listed{{Referral: referral.Referral{ID: uuid.New(), MemberID: memberID, OrderValue: 9790, RewardAmount: 979,
			Status: "pending", ReviewRequired: true, CreatedAt: at}, MemberName: "Ana Souza"}},
		ToDo: report.ToDo{IntegrationsMissing: []string{"yampi"}, WebhooksFailing: 1, ReviewWaiting: 4},
	}
	data := overviewData{Overview: o, RangeKey: "custom", From: "2026-11-24", To: "2026-11-25", FirstDay: "11/24/2026",
		LastDay: "11/25/2026", Zone: "America/Sao_Paulo",
		RangeLinks: []rangeLink{{Days: 7, URL: "/dashboard?range=7"}, {Days: 30, URL: "/dashboard?range=30"}},
		Metrics:    []metricOption{{Value: "referrals"}, {Value: "referred_revenue", Selected: true}},
		Rows:       []seriesRow{{Label: "11/24/2026", Unix: rng.From.Unix()}, {Label: "11/25/2026", Unix: rng.From.Unix() + 86400, Value: 123456}},
		Total:      123456, Counts: map[string]string{"total": "12,345", "pending": "2", "approved": "1", "rejected": "0", "cancelled": "0"}}
	list := []redemption.Listed{
		{Redemption: redemption.Redemption{ID: uuid.New(), MemberID: memberID, Amount: 979, Type: redemption.TypeStoreCredit,
			Status: redemption.StatusCompleted, Result: redemption.Result{CouponCode: "LOJA-ANA-1"}, CreatedAt: at}, MemberName: "Ana Souza", MemberEmail: "ana@example.com"},
		{Redemption: redemption.Redemption{ID: uuid.New(), MemberID: memberID, Amount: 500, Type: redemption.TypeSubscriptionDiscount,
			Status: redemption.StatusFailed, SubscriptionID: "sub_9", FailureReason: "subscription not found", CreatedAt: at}, MemberName: "Ana Souza"},
	}
	return []renderCase{
		{Page{Template: "overview", Title: "overview.title", Nav: "overview", Data: data}, true, map[string][]string{
			English: {"<h1>Overview</h1>", "<dd>12,345</dd>", "Pending 2 · Approved 1", "R$1,234.56", "R$9.79", "Referred revenue", "Pending in warranty", `<figure class="chart" aria-label="Referred revenue per day, 11/24/2026 – 11/25/2026"`,
				"<caption>", `data-v="123456"`, "Top members", "Ana Fit", "Recent referrals", "waiting for review",
				`href="/dashboard/referrals?review_required=true">Referrals waiting for review: 4`, `href="/dashboard/webhooks">Webhook endpoints failing: 1`,
				`href="/dashboard/integrations">Yampi: its webhook credential is not saved`, "uPlot.iife.min.js", "overview.js", ">7 days<", ">Chart<", ">Show<"},
			Portuguese: {"<h1>Visão geral</h1>", "R$ 1.234,56", "R$ 9,79", "Receita indicada por dia", "Principais membros", "A fazer"}}},
		{Page{Template: "redemptions", Title: "redemptions.title", Nav: "redemptions", Data: redemptionsData{Redemptions: list,
			Statuses: []string{"pending", "completed", "failed"}, Status: "completed", MemberName: "Ana Souza", CSVURL: "/dashboard/redemptions?format=csv&status=failed",
			Tabs: []Tab{{Label: "redemptions.all", Count: 2, URL: "/dashboard/redemptions"}, {Label: "redemptions.status.failed", Value: "failed", Count: 1}}}}, true,
			map[string][]string{English: {"<h1>Redemptions</h1>", "R$9.79", "Coupon <code>LOJA-ANA-1</code>", "Failed: subscription not found",
				"Store coupon (Yampi)", ">Member<", `<option value="completed" selected>`, `href="/dashboard/redemptions?format=csv&amp;status=failed"`, "Export CSV",
				"Redemptions of Ana Souza", `class="count">1<`},
				Portuguese: {"<h1>Resgates</h1>", "R$ 9,79", "Cupom <code>LOJA-ANA-1</code>", "Resultado na plataforma", "Desconto na assinatura (Guru)"}}},
		{Page{Template: "redemption", Title: "redemption.title", Nav: "redemptions", Data: redemptionData{Redemption: &list[1].Redemption,
			Member: &member.Member{ID: memberID, Name: "Ana Souza", Email: "ana@example.com"}}}, true,
			map[string][]string{English: {"Redemption · R$5.00", "Subscription discount (Guru)", "<code>sub_9</code>", `role="alert" class="alert">subscription not found<`,
				"went back to the member&#39;s available balance", `href="/dashboard/members/` + memberID.String() + `">Ana Souza<`, "11/25/2026 2:03 PM"},
				Portuguese: {"Resgate · R$ 5,00", "Motivo da falha", "25/11/2026 14:03"}}},
	}
}
