package ledger

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/referral"
)

// buy credits an order of amount cents bought by buyer (with document doc).
func (f *fixture) buy(order string, amount int64, buyer, doc string) Outcome {
	return f.apply(Command{Type: CmdCreditSale, Sale: &Sale{Source: "guru", OrderID: order, Amount: amount,
		BuyerEmail: buyer, BuyerDocument: doc, PaidAt: t0}})
}

func ptr[T any](v T) *T { return &v }

func TestBookFraudRules(t *testing.T) {
	t.Parallel()
	type sale struct {
		amount      int64
		buyer, doc  string
		status      string
		reward      int64
		reasons     []string
		pendingThen int64 // the wallet's pending after the sale
	}
	tests := []struct {
		name  string
		setup func(f *fixture)
		sales []sale
	}{
		{"self-referral by a Gmail address with dots and a +tag is created rejected", func(f *fixture) { f.m.Email = "ana.souza@gmail.com" },
			[]sale{{10000, "AnaSouza+promo@googlemail.com", "", referral.StatusRejected, 1000, nil, 0}}},
		{"self-referral by CPF with punctuation against the member's bare CPF", func(f *fixture) { f.m.Document = "52998224725" },
			[]sale{{10000, "someone@example.com", "529.982.247-25", referral.StatusRejected, 1000, nil, 0}}},
		{"self-referral by CNPJ", func(f *fixture) { f.m.Document = "11.222.333/0001-81" },
			[]sale{{10000, "someone@example.com", "11222333000181", referral.StatusRejected, 1000, nil, 0}}},
		{"a disposable buyer is credited pending and held for review", func(f *fixture) { f.c.BlockDisposableEmails = true },
			[]sale{{10000, "x@mailinator.com", "", referral.StatusPending, 1000, []string{fraud.ReasonDisposableEmail}, 1000}}},
		{"velocity counts the book's own referrals: the 3rd of an hour over 2 is held", func(f *fixture) { f.c.MaxReferralsPerHour = ptr(2) },
			[]sale{
				{10000, "b1@example.com", "", referral.StatusPending, 1000, nil, 1000},
				{10000, "b2@example.com", "", referral.StatusPending, 1000, nil, 2000},
				{10000, "b3@example.com", "", referral.StatusPending, 1000, []string{fraud.ReasonVelocity}, 3000},
			}},
		{"velocity counts the loaded last hour", func(f *fixture) {
			f.c.MaxReferralsPerHour = ptr(2)
			f.b.Stats[ScopedID{f.m.MerchantID, f.m.ID}] = &MemberStats{LastHour: 2}
		}, []sale{{10000, "b1@example.com", "", referral.StatusPending, 1000, []string{fraud.ReasonVelocity}, 1000}}},
		{"a creator without tiers is not held past the members' limit: the creator limit is off", func(f *fixture) {
			f.c.MaxReferralsPerHour = ptr(2)
			f.b.Creators[ScopedID{f.m.MerchantID, f.m.ID}] = true
		}, []sale{
			{10000, "b1@example.com", "", referral.StatusPending, 1000, nil, 1000},
			{10000, "b2@example.com", "", referral.StatusPending, 1000, nil, 2000},
			{10000, "b3@example.com", "", referral.StatusPending, 1000, nil, 3000},
		}},
		{"a creator is held past the campaign's creator limit", func(f *fixture) {
			f.c.MaxReferralsPerHour, f.c.MaxCreatorReferralsPerHour = ptr(1), ptr(2)
			f.b.Creators[ScopedID{f.m.MerchantID, f.m.ID}] = true
		}, []sale{
			{10000, "b1@example.com", "", referral.StatusPending, 1000, nil, 1000},
			{10000, "b2@example.com", "", referral.StatusPending, 1000, nil, 2000},
			{10000, "b3@example.com", "", referral.StatusPending, 1000, []string{fraud.ReasonVelocity}, 3000},
		}},
		{"the cap to the cent: the sale that crosses it earns the rest, the next earns 0", func(f *fixture) { f.c.MaxRewardPerMonth = ptr[int64](2500) },
			[]sale{
				{9790, "b1@example.com", "", referral.StatusPending, 979, nil, 979},
				{9790, "b2@example.com", "", referral.StatusPending, 979, nil, 1958},
				{9790, "b3@example.com", "", referral.StatusPending, 542, []string{fraud.ReasonMonthlyCap}, 2500},
				{9790, "b4@example.com", "", referral.StatusPending, 0, []string{fraud.ReasonMonthlyCap}, 2500},
			}},
		{"the cap counts the month's loaded reward", func(f *fixture) {
			f.c.MaxRewardPerMonth = ptr[int64](5000)
			f.b.Stats[ScopedID{f.m.MerchantID, f.m.ID}] = &MemberStats{MonthSales: 4, MonthReward: 4999}
		}, []sale{{10000, "b1@example.com", "", referral.StatusPending, 1, []string{fraud.ReasonMonthlyCap}, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.c.Rules = campaignRulesOff()
			tt.setup(f)
			for i, s := range tt.sales {
				order := "o" + strconv.Itoa(i)
				f.buy(order, s.amount, s.buyer, s.doc)
				r := f.referral(order)
				if r.Status != s.status || r.RewardAmount != s.reward || !slices.Equal(r.ReviewReasons, s.reasons) ||
					r.ReviewRequired != (len(s.reasons) > 0) {
					t.Errorf("sale %d: referral %s reward %d review %v %v; want %s %d %v", i, r.Status, r.RewardAmount,
						r.ReviewRequired, r.ReviewReasons, s.status, s.reward, s.reasons)
				}
				if s.status == referral.StatusRejected && r.RejectionReason != referral.ReasonSelfReferral {
					t.Errorf("sale %d: rejection reason %q, want self_referral", i, r.RejectionReason)
				}
				if got := f.wallet().Pending; got != s.pendingThen {
					t.Errorf("sale %d: pending %d, want %d", i, got, s.pendingThen)
				}
				created := f.events[0]
				var view referral.View
				raw, _ := json.Marshal(created.Data)
				_ = json.Unmarshal(raw, &view)
				if created.Type != event.ReferralCreated || view.ReviewRequired != r.ReviewRequired || len(view.ReviewReasons) != len(s.reasons) {
					t.Errorf("sale %d: first event %s %+v, want referral.created with the review fields", i, created.Type, view)
				}
			}
		})
	}
}

// campaignRulesOff leaves every fraud threshold off, so a test turns on
// only the rule it is about.
func campaignRulesOff() campaign.Rules { return campaign.Rules{} }

func TestBookReviewDecisions(t *testing.T) {
	t.Parallel()
	for _, approve := range []bool{true, false} {
		f := newFixture(t)
		f.c.Rules = campaignRulesOff()
		f.c.BlockDisposableEmails = true
		f.buy("o1", 10000, "x@yopmail.com", "")
		if out := f.release("o1"); out.Status != OutcomeNoop || f.referral("o1").Status != referral.StatusPending || f.wallet().Pending != 1000 {
			t.Fatalf("release of a held referral: %+v, referral %s, pending %d; want noop, pending, 1000", out, f.referral("o1").Status, f.wallet().Pending)
		}
		want := figures{available: 1000, earned: 1000}
		if approve {
			f.approve("o1")
		} else {
			f.reject("o1")
			want = figures{cancelled: 1000}
		}
		r := f.referral("o1")
		if r.ReviewRequired || !slices.Equal(r.ReviewReasons, []string{fraud.ReasonDisposableEmail}) || f.figures() != want {
			t.Errorf("approve=%v: review %v %v, wallet %+v; want cleared, reasons kept, %+v", approve, r.ReviewRequired, r.ReviewReasons, f.figures(), want)
		}
	}
}

func TestBookCreatorTiers(t *testing.T) {
	t.Parallel()
	ladder := creator.Tiers{{Name: "Bronze", MinSales: 0, CommissionBP: 1000}, {Name: "Silver", MinSales: 3, CommissionBP: 1500}, {Name: "Gold", MinSales: 10, CommissionBP: 2000}}
	newCreator := func(t *testing.T, monthSales int) *fixture {
		f := newFixture(t)
		f.c.Rules = campaignRulesOff()
		f.c.RewardValue = 5 // the campaign's 5 % applies only without a tier
		f.b.Creators[ScopedID{f.m.MerchantID, f.m.ID}] = true
		f.b.Tiers[ScopedID{f.m.MerchantID, f.c.ID}] = ladder
		f.b.Stats[ScopedID{f.m.MerchantID, f.m.ID}] = &MemberStats{MonthSales: monthSales}
		return f
	}
	tierEvents := func(f *fixture) []CreatorTierChangedData {
		var out []CreatorTierChangedData
		for _, e := range f.events {
			if e.Type == event.CreatorTierChanged {
				out = append(out, e.Data.(CreatorTierChangedData))
			}
		}
		return out
	}

	t.Run("21: the month's 1st–4th sales earn 10, 10, 15, 15 %, rounded down; the 3rd moves up to Silver", func(t *testing.T) {
		t.Parallel()
		f := newCreator(t, 0)
		for i, want := range []int64{979, 979, 1468, 1468} {
			order := "o" + strconv.Itoa(i)
			f.buy(order, 9790, "b"+order+"@example.com", "")
			if got := f.referral(order).RewardAmount; got != want {
				t.Errorf("sale %d: reward %d, want %d", i+1, got, want)
			}
			ev := tierEvents(f)
			if i == 2 {
				if len(ev) != 1 || ev[0].PreviousTier == nil || *ev[0].PreviousTier != "Bronze" || *ev[0].Tier != "Silver" ||
					ev[0].MonthSales != 3 || *ev[0].CommissionPercent != 15 || ev[0].MemberID == "" {
					t.Errorf("3rd sale: tier events %+v, want Bronze → Silver at 3 sales, 15 %%", ev)
				}
			} else if len(ev) != 0 {
				t.Errorf("sale %d: tier events %+v, want none", i+1, ev)
			}
		}
	})
	t.Run("21: the 9th sale earns Silver, the 10th Gold and moves up", func(t *testing.T) {
		t.Parallel()
		f := newCreator(t, 8)
		f.buy("o9", 10001, "b9@example.com", "")
		if got := f.referral("o9").RewardAmount; got != 1500 || len(tierEvents(f)) != 0 {
			t.Errorf("9th: reward %d, events %v; want 1500 (15 %% of 10001 rounded down), none", got, tierEvents(f))
		}
		f.buy("o10", 10001, "b10@example.com", "")
		ev := tierEvents(f)
		if got := f.referral("o10").RewardAmount; got != 2000 || len(ev) != 1 || *ev[0].PreviousTier != "Silver" || *ev[0].Tier != "Gold" || ev[0].MonthSales != 10 {
			t.Errorf("10th: reward %d, events %+v; want 2000, Silver → Gold at 10", got, ev)
		}
	})
	t.Run("21: a reject within the month moves the creator down", func(t *testing.T) {
		t.Parallel()
		f := newCreator(t, 2)
		f.buy("o1", 10000, "b@example.com", "")
		if f.referral("o1").RewardAmount != 1500 {
			t.Fatalf("reward %d, want Silver's 1500", f.referral("o1").RewardAmount)
		}
		f.reject("o1")
		ev := tierEvents(f)
		if len(ev) != 1 || *ev[0].PreviousTier != "Silver" || *ev[0].Tier != "Bronze" || ev[0].MonthSales != 2 {
			t.Errorf("tier events %+v, want Silver → Bronze at 2 sales", ev)
		}
		if f.events[len(f.events)-1].Type != event.CreatorTierChanged || f.events[0].Type == event.CreatorTierChanged {
			t.Errorf("events %v: the tier change follows the referral's events", f.events)
		}
	})
	t.Run("21: a self-referral and a refund-first do not count", func(t *testing.T) {
		t.Parallel()
		f := newCreator(t, 2)
		f.buy("o1", 10000, " ana@example.com", "")
		f.refund("o2")
		f.buy("o3", 10000, "b@example.com", "")
		if got := f.referral("o3").RewardAmount; got != 1500 {
			t.Errorf("the 3rd counted sale earned %d, want Silver's 1500", got)
		}
	})
	t.Run("21: below the first tier the campaign reward applies; a member without a profile earns the campaign's", func(t *testing.T) {
		t.Parallel()
		f := newCreator(t, 0)
		f.b.Tiers[ScopedID{f.m.MerchantID, f.c.ID}] = ladder[1:]
		f.buy("o1", 10000, "b@example.com", "")
		g := newCreator(t, 5)
		delete(g.b.Creators, ScopedID{g.m.MerchantID, g.m.ID})
		g.buy("o1", 10000, "b@example.com", "")
		if f.referral("o1").RewardAmount != 500 || g.referral("o1").RewardAmount != 500 || len(tierEvents(f)) != 0 {
			t.Errorf("rewards %d, %d; want the campaign's 500 both", f.referral("o1").RewardAmount, g.referral("o1").RewardAmount)
		}
	})
	t.Run("21: a referral of last month rejected now does not move this month's tier", func(t *testing.T) {
		t.Parallel()
		f := newCreator(t, 0)
		f.b.now = func() time.Time { return t0.AddDate(0, -1, 0) }
		f.buy("o1", 10000, "b@example.com", "")
		f.b.now = func() time.Time { return t0 }
		f.b.Stats[ScopedID{f.m.MerchantID, f.m.ID}] = &MemberStats{MonthSales: 3}
		f.reject("o1")
		if ev := tierEvents(f); len(ev) != 0 || f.b.Stats[ScopedID{f.m.MerchantID, f.m.ID}].MonthSales != 3 {
			t.Errorf("tier events %+v, month sales %d; want none, 3", ev, f.b.Stats[ScopedID{f.m.MerchantID, f.m.ID}].MonthSales)
		}
	})
}
