package referral

import (
	"time"

	"github.com/google/uuid"
)

// Filter selects a page of a merchant's referrals, newest first. A zero
// field matches every referral. The creation bounds form the half-open
// interval [CreatedAfter, CreatedBefore).
type Filter struct {
	MemberID uuid.UUID // the referrer; uuid.Nil for any
	Status   string    // one of the statuses; "" for any
	// ReviewRequired selects referrals held for review (true) or not
	// (false); nil for any.
	ReviewRequired *bool
	CreatedAfter   time.Time // inclusive lower bound; zero for none
	CreatedBefore  time.Time // exclusive upper bound; zero for none
	Offset         int
	Limit          int
}

// Listed is a referral with the name and email of its referrer, as the
// admin shape embeds them.
type Listed struct {
	Referral
	MemberName  string
	MemberEmail string
}

// AdminView renders l in the administrative shape (spec 2.7).
func (l Listed) AdminView() View { return l.Referral.AdminView(l.MemberName, l.MemberEmail) }
