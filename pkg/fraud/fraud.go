// Package fraud holds the fraud rules the ledger applies when it attributes
// a sale (issue 11), as pure functions: self-referral by normalized e-mail
// or by CPF/CNPJ, a buyer on a disposable e-mail domain, a member's
// referral velocity, and the monthly cap on a member's reward. Check
// composes them; referral.Attribute calls it.
package fraud

import (
	"strings"

	"github.com/convida/convida/pkg/campaign"
)

// Review reasons: why a referral is created pending with review_required.
const (
	ReasonDisposableEmail = "disposable_email"
	ReasonVelocity        = "velocity"
	ReasonMonthlyCap      = "monthly_cap"
)

// NormalizeEmail returns the form in which two e-mail addresses of one
// mailbox compare equal: trimmed and lower-cased, a "+tag" dropped from
// the local part on any provider, and on Gmail the dots of the local part
// dropped and googlemail.com read as gmail.com. A value without "@" is only
// trimmed and lower-cased.
func NormalizeEmail(email string) string {
	email = strings.ToLower(strings.TrimSpace(email))
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return email
	}
	local, domain := email[:at], email[at+1:]
	plus := strings.IndexByte(local, '+')
	gmail := domain == "gmail.com" || domain == "googlemail.com"
	if plus <= 0 && !gmail {
		return email // the common case: nothing to drop, no allocation
	}
	if plus > 0 {
		local = local[:plus]
	}
	if gmail {
		local, domain = strings.ReplaceAll(local, ".", ""), "gmail.com"
	}
	return local + "@" + domain
}

// SameEmail reports whether a and b are one mailbox (NormalizeEmail); a
// blank address matches nothing.
func SameEmail(a, b string) bool {
	na, nb := NormalizeEmail(a), NormalizeEmail(b)
	return na != "" && na == nb
}

// Digits returns the digits of a document number ("529.982.247-25" →
// "52998224725").
func Digits(doc string) string {
	var b strings.Builder
	for i := 0; i < len(doc); i++ {
		if c := doc[i]; c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// SameDocument reports whether two CPF or CNPJ numbers are the same,
// compared by their digits alone (punctuation ignored); a document without
// digits matches nothing.
func SameDocument(a, b string) bool {
	da := Digits(a)
	return da != "" && da == Digits(b)
}

// Sale is what the rules read of the sale being attributed.
type Sale struct {
	BuyerEmail    string
	BuyerDocument string // CPF or CNPJ, punctuated or not
	// Reward is the reward in cents the sale would earn before the cap
	// (the campaign's, or the creator's tier commission).
	Reward int64
}

// Member is what the rules read of the referrer.
type Member struct {
	Email    string
	Document string
	// Creator: the member has a creator profile, so the campaign's creator
	// velocity limit applies to her instead of the members' one.
	Creator bool
}

// Stats are the referrer's recent referrals, counted before this sale.
type Stats struct {
	// LastHour is the member's referrals created in the hour before.
	LastHour int
	// MonthReward is the reward cents of the member's non-rejected,
	// non-cancelled referrals of the current calendar month (UTC).
	MonthReward int64
}

// Verdict is the decision of Check.
type Verdict struct {
	// SelfReferral: the buyer is the referrer; the referral is created
	// rejected and nothing else applies.
	SelfReferral bool
	// Reasons for review, in the order of the rules; none when the
	// referral needs no review.
	Reasons []string
	// Reward is the reward after the monthly cap, in cents.
	Reward int64
}

// ReviewRequired reports whether the referral is held for review.
func (v Verdict) ReviewRequired() bool { return len(v.Reasons) > 0 }

// Check applies the fraud rules to a sale of m's code under the campaign's
// rules r, st being m's referrals before it:
//
//   - self-referral: the buyer's e-mail is m's (NormalizeEmail) or the
//     buyer's document is m's (SameDocument);
//   - disposable_email: r.BlockDisposableEmails and the buyer's e-mail is
//     on a disposable domain (Disposable);
//   - velocity: this referral is more than r.ReferralsPerHour(m.Creator)
//     in an hour (st.LastHour of them already): a creator is held only
//     past the campaign's creator limit, none by default;
//   - monthly_cap: with r.MaxRewardPerMonth, the reward would take the
//     month's total over the cap: it earns only the rest up to the cap
//     (0 once the cap is reached).
func Check(s Sale, m Member, r campaign.Rules, st Stats) Verdict {
	if SameEmail(s.BuyerEmail, m.Email) || SameDocument(s.BuyerDocument, m.Document) {
		return Verdict{SelfReferral: true}
	}
	v := Verdict{Reward: s.Reward}
	if r.BlockDisposableEmails && Disposable(s.BuyerEmail) {
		v.Reasons = append(v.Reasons, ReasonDisposableEmail)
	}
	if limit := r.ReferralsPerHour(m.Creator); limit != nil && st.LastHour >= *limit {
		v.Reasons = append(v.Reasons, ReasonVelocity)
	}
	if r.MaxRewardPerMonth != nil {
		if room := max(*r.MaxRewardPerMonth-st.MonthReward, 0); s.Reward > room {
			v.Reward = room
			v.Reasons = append(v.Reasons, ReasonMonthlyCap)
		}
	}
	return v
}
