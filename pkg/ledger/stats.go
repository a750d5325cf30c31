package ledger

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// RecentKept is how many of a member's latest referral times MemberStats
// keeps. Enough for any velocity threshold below it to be decided from
// them alone; above it the store counts the hour's referrals.
const RecentKept = 64

// MemberStats are what the fraud rules and the creator tiers read of a
// member's earlier referrals (referral.History). They are kept on the
// member's wallet row, which the ledger locks and writes in every batch
// anyway, rather than counted from the referrals in each batch: that count
// cost the hot path a range scan of the month per member. The book keeps
// them current as it creates and decides referrals, so that many sales of
// one member in a batch count each other.
type MemberStats struct {
	// Month is the calendar month (UTC, its first instant) MonthSales and
	// MonthReward count.
	Month time.Time
	// MonthSales and MonthReward are the count and reward cents of the
	// member's non-rejected, non-cancelled referrals created in Month. A
	// member has one campaign, so they are the member's in that campaign.
	MonthSales  int
	MonthReward int64
	// Recent holds the creation times of the member's latest referrals, of
	// any status (a self-referral and a refund before its sale count too),
	// oldest first: at most RecentKept, none older than an hour.
	Recent []time.Time
	// LastHour is the member's referrals created in the last hour; when
	// Recent is full within the hour, exact only if the velocity limit
	// that applies to the member is above RecentKept (the store counts
	// them then), else at least RecentKept, which decides any lower limit.
	LastHour int
}

// Roll brings loaded stats to now: the month's counts start again in a
// new month, and Recent keeps the last hour only. hourCount is the store's
// count of the last hour's referrals, needed only when Recent was full
// within the hour and the member's velocity limit is above RecentKept (nil
// otherwise): Recent then holds no more than RecentKept of them.
func (st *MemberStats) Roll(now time.Time, hourCount *int) {
	if month := creator.MonthStart(now); !st.Month.Equal(month) {
		st.Month, st.MonthSales, st.MonthReward = month, 0, 0
	}
	st.Recent = withinHour(st.Recent, now)
	st.LastHour = len(st.Recent)
	if hourCount != nil && *hourCount > st.LastHour {
		st.LastHour = *hourCount
	}
}

// KeptRecent is what the store writes back of Recent as of now.
func (st *MemberStats) KeptRecent(now time.Time) []time.Time {
	return withinHour(st.Recent, now)
}

// HourStart is the first instant of the velocity window ending at now.
func HourStart(now time.Time) time.Time { return now.Add(-time.Hour) }

func withinHour(ts []time.Time, now time.Time) []time.Time {
	from := HourStart(now)
	i := 0
	for i < len(ts) && ts[i].Before(from) {
		i++
	}
	if n := len(ts) - i; n > RecentKept {
		i += n - RecentKept
	}
	return ts[i:]
}

func (b *Book) stats(merchantID, memberID uuid.UUID) *MemberStats {
	k := ScopedID{merchantID, memberID}
	st := b.Stats[k]
	if st == nil {
		st = &MemberStats{Month: creator.MonthStart(b.now())}
		b.Stats[k] = st
	}
	return st
}

// changedStats marks the member's stats for writing: with its wallet,
// whose balance may not have moved (a self-referral, a refund before its
// sale). Its version is the balance's and stays.
func (b *Book) changedStats(merchantID, memberID uuid.UUID) {
	w := b.wallet(merchantID, memberID)
	b.ChangedWallets[ScopedID{merchantID, memberID}] = w
}

// history is what attribution reads of m's earlier referrals: its stats,
// whether m is a creator (read with the member, no query of its own), and
// its campaign's tiers when m is.
func (b *Book) history(m *member.Member) referral.History {
	st := b.stats(m.MerchantID, m.ID)
	h := referral.History{Stats: fraud.Stats{LastHour: st.LastHour, MonthReward: st.MonthReward}, MonthSales: st.MonthSales,
		Creator: b.Creators[ScopedID{m.MerchantID, m.ID}]}
	if h.Creator {
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
	st.Recent = append(st.Recent, r.CreatedAt)
	b.changedStats(cmd.MerchantID, m.ID)
	if b.counts(r) {
		b.addToMonth(cmd, m, st, 1, r.RewardAmount)
	}
}

// uncount takes out of its member's stats a referral that counted (counts,
// before its change) and is now rejected or cancelled, and emits
// creator.tier_changed when it moves a creator down a tier. The stats are
// written after any change of a referral, even one that leaves them as
// they are: a wallet row then always holds the counts of the month it
// names (postgres.CheckLedger), not those of a month whose referrals
// changed since.
func (b *Book) uncount(cmd Command, m *member.Member, r *referral.Referral, counted bool) {
	b.changedStats(cmd.MerchantID, m.ID)
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
