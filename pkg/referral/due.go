package referral

import "github.com/google/uuid"

// Due is a pending referral whose warranty has expired: the scheduler
// publishes a release command for it, and the ledger moves its reward from
// pending to available.
type Due struct {
	MerchantID, MemberID, ReferralID uuid.UUID
}
