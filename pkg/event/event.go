// Package event names the domain events: the nine outbound types of spec
// 6.1, creator.tier_changed (issue 11) and member.erased (issue 18) that
// merchants subscribe to, the test event, and the internal event
// that carries a redemption to the dispatcher. Every other package uses
// these names; none spells them again.
package event

import "slices"

// The subscribable event types of spec 6.1.
//
// The money events are WalletCredited, WalletDebited and ReferralApproved:
// every change of a wallet's pending or available balance has exactly one
// of them, with its amount, its referral or redemption and the balance
// after it, so that a merchant can mirror the wallet from them
// (docs/webhooks.md, "Mirroring a wallet"; the rule is ledger's Book.move).
// Money into the wallet is wallet.credited, money out of it (from pending
// or available) wallet.debited, and a release from pending to available
// referral.approved.
const (
	MemberCreated = "member.created"
	MemberUpdated = "member.updated"
	// MemberErased: the member's personal data was erased (POST
	// /members/{id}/erase, LGPD); the data is the member as erased.
	MemberErased        = "member.erased"
	ReferralCreated     = "referral.created"
	ReferralApproved    = "referral.approved"
	ReferralRejected    = "referral.rejected"
	ReferralCancelled   = "referral.cancelled"
	RedemptionCompleted = "redemption.completed"
	WalletCredited      = "wallet.credited"
	WalletDebited       = "wallet.debited"
	// CreatorTierChanged: a creator's sales of the month moved it to
	// another commission tier (decision 21), up by a credited sale or down
	// by a rejected or cancelled one.
	CreatorTierChanged = "creator.tier_changed"
)

// Test is sent by POST /v1/webhooks/{id}/test to that endpoint only,
// whatever it subscribes to.
const Test = "webhook.test"

// RedemptionRequested is internal: it goes to the redemptions topic, where
// the dispatcher carries the redemption out, and is never delivered to
// merchants.
const RedemptionRequested = "redemption.requested"

// Subscribable lists the types an endpoint may subscribe to, in the spec's
// order, then the later ones.
var Subscribable = []string{
	MemberCreated,
	MemberUpdated,
	ReferralCreated,
	ReferralApproved,
	ReferralRejected,
	ReferralCancelled,
	RedemptionCompleted,
	WalletCredited,
	WalletDebited,
	CreatorTierChanged,
	MemberErased,
}

// IsSubscribable reports whether name is one of the subscribable types.
func IsSubscribable(name string) bool { return slices.Contains(Subscribable, name) }
