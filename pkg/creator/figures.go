package creator

// Figures are the counts of a creator's referrals the public operations
// show. A sale is a referral; rejected and cancelled ones are not sales.
type Figures struct {
	TotalSales    int // non-rejected, non-cancelled, ever
	ApprovedSales int // approved, ever
	MonthSales    int // non-rejected, non-cancelled, created since MonthStart(now): what the tier is reached with
}
