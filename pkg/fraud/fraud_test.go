package fraud_test

import (
	"slices"
	"testing"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/fraud"
)

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{
		"  Ana.Souza@Example.com ":      "ana.souza@example.com", // dots kept off Gmail
		"ana+promo@example.com":         "ana@example.com",       // +tag on any provider
		"A.n.A+x+y@Gmail.com":           "ana@gmail.com",
		"ana.souza@googlemail.com":      "anasouza@gmail.com",
		"ana.souza+loja@googlemail.com": "anasouza@gmail.com",
		"+tag@example.com":              "+tag@example.com", // a local part that is only a tag stays
		"no-at-sign ":                   "no-at-sign",
		"":                              "",
	} {
		if got := fraud.NormalizeEmail(in); got != want {
			t.Errorf("NormalizeEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameEmail(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"ana.souza@gmail.com", "AnaSouza+friend@googlemail.com", true},
		{"ana.souza@example.com", "anasouza@example.com", false}, // dots matter off Gmail
		{"ana+x@example.com", " ANA@example.com", true},
		{"ana@example.com", "ana@example.org", false},
		{"", "", false},
		{"  ", "", false},
	} {
		if got := fraud.SameEmail(tt.a, tt.b); got != tt.want {
			t.Errorf("SameEmail(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSameDocument(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"529.982.247-25", "52998224725", true},        // CPF with and without punctuation
		{"52998224725", "52998224725", true},           // CPF
		{"11.222.333/0001-81", "11222333000181", true}, // CNPJ
		{"11.222.333/0001-81", "11.222.333/0001-82", false},
		{"52998224725", "11144477735", false},
		{"", "", false},      // empty never matches
		{"---", "..", false}, // no digits never matches
		{"", "52998224725", false},
	} {
		if got := fraud.SameDocument(tt.a, tt.b); got != tt.want {
			t.Errorf("SameDocument(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDisposable(t *testing.T) {
	for email, want := range map[string]bool{
		"x@mailinator.com":     true,
		"X@MailInator.COM ":    true,
		"x@eu.mailinator.com":  true, // a subdomain of a listed domain
		"x@yopmail.com":        true,
		"x@gmail.com":          false,
		"x@example.com":        false,
		"x@lojaexemplo.com.br": false,
		"x@com":                false,
		"no-at-sign@":          false,
		"mailinator.com":       false,
		"":                     false,
	} {
		if got := fraud.Disposable(email); got != want {
			t.Errorf("Disposable(%q) = %v, want %v", email, got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCheck(t *testing.T) {
	member := fraud.Member{Email: "Ana.Souza@gmail.com", Document: "529.982.247-25"}
	open := campaign.Rules{} // no rule on
	for _, tt := range []struct {
		name    string
		sale    fraud.Sale
		rules   campaign.Rules
		stats   fraud.Stats
		self    bool
		reasons []string
		reward  int64
	}{
		{"a clean sale", fraud.Sale{BuyerEmail: "bia@example.com", Reward: 1000}, campaign.DefaultRules(), fraud.Stats{}, false, nil, 1000},
		{"self by gmail dots and tag", fraud.Sale{BuyerEmail: "anasouza+x@googlemail.com", Reward: 1000}, open, fraud.Stats{}, true, nil, 0},
		{"self by CPF", fraud.Sale{BuyerEmail: "other@example.com", BuyerDocument: "52998224725", Reward: 1000}, open, fraud.Stats{}, true, nil, 0},
		{"empty documents are not self", fraud.Sale{BuyerEmail: "other@example.com", Reward: 1000}, open, fraud.Stats{}, false, nil, 1000},
		{"disposable", fraud.Sale{BuyerEmail: "b@mailinator.com", Reward: 1000}, campaign.DefaultRules(), fraud.Stats{}, false, []string{fraud.ReasonDisposableEmail}, 1000},
		{"disposable allowed", fraud.Sale{BuyerEmail: "b@mailinator.com", Reward: 1000}, open, fraud.Stats{}, false, nil, 1000},
		{"velocity: the 2nd of an hour under 2", fraud.Sale{BuyerEmail: "b@example.com", Reward: 1000}, campaign.Rules{MaxReferralsPerHour: ptr(2)}, fraud.Stats{LastHour: 1}, false, nil, 1000},
		{"velocity: the 3rd of an hour over 2", fraud.Sale{BuyerEmail: "b@example.com", Reward: 1000}, campaign.Rules{MaxReferralsPerHour: ptr(2)}, fraud.Stats{LastHour: 2}, false, []string{fraud.ReasonVelocity}, 1000},
		{"cap: reaching it exactly", fraud.Sale{BuyerEmail: "b@example.com", Reward: 1000}, campaign.Rules{MaxRewardPerMonth: ptr[int64](5000)}, fraud.Stats{MonthReward: 4000}, false, nil, 1000},
		{"cap: over it by a cent", fraud.Sale{BuyerEmail: "b@example.com", Reward: 1001}, campaign.Rules{MaxRewardPerMonth: ptr[int64](5000)}, fraud.Stats{MonthReward: 4000}, false, []string{fraud.ReasonMonthlyCap}, 1000},
		{"cap: the rest only", fraud.Sale{BuyerEmail: "b@example.com", Reward: 979}, campaign.Rules{MaxRewardPerMonth: ptr[int64](2500)}, fraud.Stats{MonthReward: 1958}, false, []string{fraud.ReasonMonthlyCap}, 542},
		{"cap: reached, earns 0", fraud.Sale{BuyerEmail: "b@example.com", Reward: 979}, campaign.Rules{MaxRewardPerMonth: ptr[int64](2500)}, fraud.Stats{MonthReward: 2500}, false, []string{fraud.ReasonMonthlyCap}, 0},
		{"cap 0", fraud.Sale{BuyerEmail: "b@example.com", Reward: 1}, campaign.Rules{MaxRewardPerMonth: ptr[int64](0)}, fraud.Stats{}, false, []string{fraud.ReasonMonthlyCap}, 0},
		{"cap: a zero reward is not over", fraud.Sale{BuyerEmail: "b@example.com", Reward: 0}, campaign.Rules{MaxRewardPerMonth: ptr[int64](0)}, fraud.Stats{}, false, nil, 0},
		{"every reason, in order", fraud.Sale{BuyerEmail: "b@yopmail.com", Reward: 700}, campaign.Rules{BlockDisposableEmails: true, MaxReferralsPerHour: ptr(1), MaxRewardPerMonth: ptr[int64](500)},
			fraud.Stats{LastHour: 5, MonthReward: 100}, false, []string{fraud.ReasonDisposableEmail, fraud.ReasonVelocity, fraud.ReasonMonthlyCap}, 400},
		{"self-referral wins over the rest", fraud.Sale{BuyerEmail: "ana.souza@gmail.com", Reward: 700}, campaign.Rules{MaxReferralsPerHour: ptr(1)}, fraud.Stats{LastHour: 5}, true, nil, 0},
	} {
		v := fraud.Check(tt.sale, member, tt.rules, tt.stats)
		if v.SelfReferral != tt.self || !slices.Equal(v.Reasons, tt.reasons) || v.Reward != tt.reward || v.ReviewRequired() != (len(tt.reasons) > 0) {
			t.Errorf("%s: Check = %+v, want self %v, reasons %v, reward %d", tt.name, v, tt.self, tt.reasons, tt.reward)
		}
	}
}

// TestCheckCreatorVelocity: velocity holds a creator's referral only past
// the campaign's creator limit, which is off by default, and an ordinary
// member's past the member limit whatever the creator limit is.
func TestCheckCreatorVelocity(t *testing.T) {
	sale := fraud.Sale{BuyerEmail: "b@example.com", Reward: 1000}
	member := fraud.Member{Email: "ana@example.org"}
	creator := fraud.Member{Email: "ana@example.org", Creator: true}
	both := campaign.Rules{MaxReferralsPerHour: ptr(20), MaxCreatorReferralsPerHour: ptr(500)}
	for _, tt := range []struct {
		name     string
		m        fraud.Member
		rules    campaign.Rules
		lastHour int
		held     bool
	}{
		{"defaults: a member's 20th of the hour", member, campaign.DefaultRules(), 19, false},
		{"defaults: a member's 21st of the hour", member, campaign.DefaultRules(), 20, true},
		{"defaults: a creator's 21st of the hour", creator, campaign.DefaultRules(), 20, false},
		{"defaults: a creator's 2,000th of the hour", creator, campaign.DefaultRules(), 1999, false},
		{"creator limit 500: a creator's 500th", creator, both, 499, false},
		{"creator limit 500: a creator's 501st", creator, both, 500, true},
		{"creator limit 500: a member's 21st", member, both, 20, true},
		{"only a creator limit: a member's 2,000th", member, campaign.Rules{MaxCreatorReferralsPerHour: ptr(1)}, 1999, false},
	} {
		v := fraud.Check(sale, tt.m, tt.rules, fraud.Stats{LastHour: tt.lastHour})
		var want []string
		if tt.held {
			want = []string{fraud.ReasonVelocity}
		}
		if !slices.Equal(v.Reasons, want) || v.ReviewRequired() != tt.held || v.Reward != sale.Reward {
			t.Errorf("%s: Check = %+v, want reasons %v and the reward %d", tt.name, v, want, sale.Reward)
		}
	}
}
