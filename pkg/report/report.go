// Package report holds what the merchant dashboard shows beyond the
// resources themselves: for the overview, the range of days it covers
// (calendar days in the merchant's time zone), the KPI figures, one daily
// series of a chosen metric, the top members and creators, and the to-do
// counts; for the list pages, the counts of their status tabs. The figures are defined here once, from
// the ledger's vocabulary (decisions 17–18), so that every page and every
// export says the same thing; the SQL that computes them lives in
// pkg/postgres (overview.go).
package report

import (
	"time"
	_ "time/tzdata" // the default zone must load on a machine without tzdata

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/referral"
)

// DefaultZone is the zone the days of a range are counted in unless the
// merchant chose another.
const DefaultZone = "America/Sao_Paulo"

// MaxDays bounds a range: a year and a day, enough for any custom range a
// merchant asks for and small enough to keep the daily series cheap.
const MaxDays = 366

// Range is the half-open interval [From, To) of whole calendar days in
// Zone: From is the first day's midnight and To the midnight after the last
// day, both in Zone (so a day is 23 or 25 hours long across a DST change).
type Range struct {
	From, To time.Time
	Zone     *time.Location
}

// LoadZone returns the named IANA zone, DefaultZone when name is empty. An
// unknown name is apperr.Invalid.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		name = DefaultZone
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, apperr.Errorf(apperr.Invalid, "time zone: unknown zone %q", name)
	}
	return loc, nil
}

// LastDays is the range of the n days ending with today in zone (today
// included): the dashboard's 7, 30 and 90 days.
func LastDays(now time.Time, n int, zone *time.Location) (Range, error) {
	if n < 1 || n > MaxDays {
		return Range{}, apperr.Invalidf("range", apperr.RuleOutOfRange, "between 1 and %d days", MaxDays).WithLimit(MaxDays)
	}
	y, m, d := now.In(zone).Date()
	return Range{
		From: time.Date(y, m, d-n+1, 0, 0, 0, 0, zone),
		To:   time.Date(y, m, d+1, 0, 0, 0, 0, zone),
		Zone: zone,
	}, nil
}

// Days is the range from the calendar day first to the calendar day last,
// both included, as "2006-01-02" dates in zone. A malformed date, last
// before first, or more than MaxDays days is apperr.Invalid.
func Days(first, last string, zone *time.Location) (Range, error) {
	f, err := time.ParseInLocation(time.DateOnly, first, zone)
	if err != nil {
		return Range{}, apperr.Invalidf("from", apperr.RuleFormat, "a date as YYYY-MM-DD")
	}
	l, err := time.ParseInLocation(time.DateOnly, last, zone)
	if err != nil {
		return Range{}, apperr.Invalidf("to", apperr.RuleFormat, "a date as YYYY-MM-DD")
	}
	r := Range{From: f, To: time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, zone), Zone: zone}
	if n := r.DayCount(); n < 1 || n > MaxDays {
		return Range{}, apperr.Invalidf("range", apperr.RuleOutOfRange, "between 1 and %d days", MaxDays).WithLimit(MaxDays)
	}
	return r, nil
}

// Validate reports a range not made by LastDays or Days: no zone, an end
// not after its start, or more than MaxDays days (apperr.Invalid).
func (r Range) Validate() error {
	if r.Zone == nil || !r.From.Before(r.To) {
		return apperr.Errorf(apperr.Invalid, "range: a zone and a start before the end")
	}
	if r.DayCount() > MaxDays {
		return apperr.Invalidf("range", apperr.RuleOutOfRange, "at most %d days", MaxDays).WithLimit(MaxDays)
	}
	return nil
}

// DayCount is the number of calendar days the range covers.
func (r Range) DayCount() int {
	fy, fm, fd := r.From.In(r.Zone).Date()
	ty, tm, td := r.To.In(r.Zone).Date()
	from := time.Date(fy, fm, fd, 0, 0, 0, 0, time.UTC)
	to := time.Date(ty, tm, td, 0, 0, 0, 0, time.UTC)
	return int(to.Sub(from) / (24 * time.Hour))
}

// Figures are the KPI cards of a range. Money is in cents. Every figure but
// PendingInWarranty counts what happened in the range; PendingInWarranty is
// the merchant's wallets' pending sum now, whatever the range.
type Figures struct {
	// ReferredRevenue is the order value of the referrals created in the
	// range that are neither rejected nor cancelled.
	ReferredRevenue int64
	// Referrals counts the referrals created in the range, by status
	// (every status present, zero included); ReferralsTotal is their sum.
	Referrals      map[string]int64
	ReferralsTotal int64
	// RewardsCredited is the sum of the credit ledger entries of the
	// referrals created in the range: rewards put into wallets as pending,
	// whatever became of them later. (A credit entry is written with its
	// referral, in the same transaction, and nothing else writes one, so
	// it is read from the referral: credit_txn_id set, reward_amount.)
	RewardsCredited int64
	// RewardsReleased, RewardsReversed and RewardsCancelled say what
	// became of those credits, as of now: RewardsReleased is the part
	// still released (the credits of approved referrals, plus what a
	// reversal could not take back because the member had already
	// redeemed it); RewardsReversed is what was taken back out of
	// available after a release (a refund, or a rejection, after the
	// warranty); RewardsCancelled is what was cancelled while still
	// pending. What remains of RewardsCredited is still pending:
	// RewardsCredited = pending + RewardsReleased + RewardsReversed +
	// RewardsCancelled. Over a range that holds every referral, the three
	// match the wallets: RewardsReleased is the sum of available +
	// total_redeemed, RewardsReversed + RewardsCancelled the sum of
	// cancelled.
	RewardsReleased  int64
	RewardsReversed  int64
	RewardsCancelled int64
	// Redeemed is the sum of the redemptions requested in the range whose
	// debit is not cancelled (pending or completed: decision 18's
	// totalRedeemed, bounded by the range); RedeemedCompleted is the part
	// the platform already carried out.
	Redeemed          int64
	RedeemedCompleted int64
	// PendingInWarranty is the sum of every wallet's pending balance now.
	PendingInWarranty int64
}

// Metric names a daily series.
type Metric string

// The metrics of the overview's chart; each is bucketed by the day (in the
// range's zone) of the time Convida recorded the row.
const (
	// MetricReferrals counts referrals created, whatever their status.
	MetricReferrals Metric = "referrals"
	// MetricReferredRevenue sums the order value of referrals created that
	// are neither rejected nor cancelled.
	MetricReferredRevenue Metric = "referred_revenue"
	// MetricRewardsCredited sums the rewards credited with the referrals
	// created (Figures.RewardsCredited).
	MetricRewardsCredited Metric = "rewards_credited"
	// MetricRewardsReleased sums the rewards still released of the
	// referrals created (Figures.RewardsReleased).
	MetricRewardsReleased Metric = "rewards_released"
	// MetricRedeemed sums the redemptions requested whose debit is not
	// cancelled.
	MetricRedeemed Metric = "redeemed"
)

// Metrics lists every metric, in the order a selector shows them.
var Metrics = []Metric{MetricReferrals, MetricReferredRevenue, MetricRewardsCredited, MetricRewardsReleased, MetricRedeemed}

// ParseMetric returns the metric named s, MetricReferrals when s is empty;
// anything else is apperr.Invalid.
func ParseMetric(s string) (Metric, error) {
	if s == "" {
		return MetricReferrals, nil
	}
	for _, m := range Metrics {
		if string(m) == s {
			return m, nil
		}
	}
	return "", apperr.Invalidf("metric", apperr.RuleNotAllowed, "one of referrals, referred_revenue, rewards_credited, rewards_released, redeemed")
}

// IsMoney reports whether the metric's values are cents (else a count).
func (m Metric) IsMoney() bool { return m != MetricReferrals }

// Point is one day of a series: Day is that day's midnight in the range's
// zone.
type Point struct {
	Day   time.Time
	Value int64
}

// Leader is a member in a top list: by referred revenue (top members) or
// by sales (top creators). Sales counts the referrals of the range that
// are neither rejected nor cancelled; Revenue is their order value.
type Leader struct {
	MemberID    uuid.UUID
	Name        string
	Email       string
	DisplayName string // the creator profile's display name; "" for a member
	Sales       int64
	Revenue     int64
}

// ToDo are the counts of the overview's to-do box: things a person should
// look at. Zero everywhere (Start aside) means nothing to do.
type ToDo struct {
	// IntegrationsMissing lists the platforms whose settings the merchant
	// saved without the credential their webhook is checked with: their
	// sales are refused. A platform the merchant does not use is never
	// listed.
	IntegrationsMissing []string
	// WebhooksFailing counts active endpoints in a run of failures;
	// WebhooksDisabled counts endpoints the dispatcher switched off.
	WebhooksFailing  int64
	WebhooksDisabled int64
	// ReviewWaiting counts pending referrals flagged for review.
	ReviewWaiting int64
	// Start is the guided start's checklist.
	Start Start
}

// Start is the checklist of a new merchant's first steps, in the order
// they are done, each ticked from the merchant's data rather than from a
// flag someone must remember to set.
type Start struct {
	// PlatformConnected: some platform's webhook credential is saved, so
	// its sales are accepted.
	PlatformConnected bool
	// CampaignCreated: the merchant has a campaign.
	CampaignCreated bool
	// FirstMember: the merchant has a member.
	FirstMember bool
	// FirstSaleCredited: a referral credited a reward to a wallet.
	FirstSaleCredited bool
	// WebhookEndpoint: the merchant has a webhook endpoint (optional: a
	// merchant that does not mirror events needs none).
	WebhookEndpoint bool
}

// Done reports whether every required step is done: the optional webhook
// endpoint aside.
func (s Start) Done() bool {
	return s.PlatformConnected && s.CampaignCreated && s.FirstMember && s.FirstSaleCredited
}

// Overview is everything the overview page shows for a range.
type Overview struct {
	Range   Range
	Figures Figures
	Metric  Metric
	Series  []Point
	// TopMembers by referred revenue and TopCreators by sales, in the
	// range, at most TopN each.
	TopMembers  []Leader
	TopCreators []Leader
	// Recent are the merchant's RecentN newest referrals, whatever the
	// range.
	Recent []referral.Listed
	ToDo   ToDo
}

// TopN is the length of the overview's top lists.
const TopN = 5

// RecentN is how many recent referrals the overview lists.
const RecentN = 10

// Tabs counts the rows of a list page's filter (without its status) by
// status: the numbers of its status tabs. Every status of the resource is
// a key, zero included. A count stops at TabCap: a tab showing TabCap has
// at least that many rows ("10,000+"), so that a tab costs at most TabCap
// index entries however large the merchant.
type Tabs map[string]int

// TabCap is where a tab's count stops.
const TabCap = 10_000

// Total is the number of rows of the tab status ("" for every status),
// at least that many when a count reached TabCap.
func (t Tabs) Total(status string) int {
	if status != "" {
		return t[status]
	}
	n := 0
	for _, c := range t {
		n += c
	}
	return n
}
