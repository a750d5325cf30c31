package ledger

import (
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// MemberStats are what the fraud rules and the creator tiers read of a
// member's earlier referrals (referral.History). The store loads them as of
// the batch's start; the book counts the referrals it creates and decides.
type MemberStats struct {
	// LastHour is the member's referrals created in the last hour, of any
	// status (a self-referral and a refund before its sale count too).
	LastHour int
	// MonthSales and MonthReward are the count and reward cents of the
	// member's non-rejected, non-cancelled referrals created in the
	// current calendar month (UTC). A member has one campaign, so they are
	// the member's in that campaign.
	MonthSales  int
	MonthReward int64
}

func (b *Book) stats(merchantID, memberID uuid.UUID) *MemberStats {
	k := ScopedID{merchantID, memberID}
	st := b.Stats[k]
	if st == nil {
		st = &MemberStats{}
		b.Stats[k] = st
	}
	return st
}

// history is what attribution reads of m's earlier referrals: its stats,
// and its campaign's tiers when m is a creator.
func (b *Book) history(m *member.Member) referral.History {
	st := b.stats(m.MerchantID, m.ID)
	h := referral.History{Stats: fraud.Stats{LastHour: st.LastHour, MonthReward: st.MonthReward}, MonthSales: st.MonthSales}
	if b.Creators[ScopedID{m.MerchantID, m.ID}] {
		h.Tiers = b.Tiers[ScopedID{m.MerchantID, m.CampaignID}]
	}
	return h
}

// counts reports whether r is one of the month's referrals that decide a
// creator's tier and the monthly cap: created this month, not rejected
// nor cancelled.
func (b *Book) counts(r *referral.Referral) bool {
	return r.Status != referral.StatusRejected && r.Status != referral.StatusCancelled &&
		!r.CreatedAt.Before(creator.MonthStart(b.now()))
}

// countNew adds a referral the book created to its member's stats, and
// emits creator.tier_changed when it moves a creator up a tier.
func (b *Book) countNew(cmd Command, m *member.Member, r *referral.Referral) {
	st := b.stats(cmd.MerchantID, m.ID)
	st.LastHour++
	if b.counts(r) {
		b.addToMonth(cmd, m, st, 1, r.RewardAmount)
	}
}

// uncount takes out of its member's stats a referral that counted (counts,
// before its change) and is now rejected or cancelled, and emits
// creator.tier_changed when it moves a creator down a tier.
func (b *Book) uncount(cmd Command, m *member.Member, r *referral.Referral, counted bool) {
	if counted && !b.counts(r) {
		b.addToMonth(cmd, m, b.stats(cmd.MerchantID, m.ID), -1, -r.RewardAmount)
	}
}

func (b *Book) addToMonth(cmd Command, m *member.Member, st *MemberStats, sales int, reward int64) {
	before := st.MonthSales
	st.MonthSales += sales
	st.MonthReward += reward
	tiers := b.history(m).Tiers
	if tiers == nil {
		return
	}
	from, hadTier := tiers.For(before)
	to, hasTier := tiers.For(st.MonthSales)
	if hadTier == hasTier && from.Name == to.Name {
		return
	}
	data := CreatorTierChangedData{MemberID: memberIDString(m.ID), MonthSales: st.MonthSales}
	if hadTier {
		data.PreviousTier = &from.Name
	}
	if hasTier {
		pct := to.Percent()
		data.Tier, data.CommissionPercent = &to.Name, &pct
	}
	b.emit(cmd, event.CreatorTierChanged, data)
}
