package redemption

import "github.com/google/uuid"

// Filter selects a page of a merchant's redemptions, newest first. A zero
// field matches every redemption.
type Filter struct {
	MemberID uuid.UUID // uuid.Nil for any
	Status   string    // one of the statuses; "" for any
	Offset   int
	Limit    int
}

// Listed is a redemption with the name and email of its member, as the
// dashboard's list shows it.
type Listed struct {
	Redemption
	MemberName  string
	MemberEmail string
}
