package creator

import "github.com/google/uuid"

// Listed is a creator profile as the dashboard's list shows it: without
// its token, with its member and this month's sales (what its tier is
// reached with).
type Listed struct {
	Profile
	MemberName  string
	MemberEmail string
	CampaignID  uuid.UUID
	MonthSales  int
}
