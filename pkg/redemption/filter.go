package redemption

import (
	"time"

	"github.com/google/uuid"
)

// Filter selects a page of a merchant's redemptions, newest first. A zero
// field matches every redemption. The creation bounds form the half-open
// interval [CreatedAfter, CreatedBefore).
type Filter struct {
	MemberID      uuid.UUID // uuid.Nil for any
	Status        string    // one of the statuses; "" for any
	CreatedAfter  time.Time // inclusive lower bound; zero for none
	CreatedBefore time.Time // exclusive upper bound; zero for none
	Offset        int
	Limit         int
}

// Listed is a redemption with the name and email of its member, as the
// dashboard's list shows it.
type Listed struct {
	Redemption
	MemberName  string
	MemberEmail string
}
