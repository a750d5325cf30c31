package member

import (
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/outbox"
)

// Figures are what a member event reports besides the member itself: the
// wallet snapshot (zero before the member's first ledger command) and the
// referral count, as they stand in the transaction that changed the member.
type Figures struct {
	Pending, Available, TotalEarned int64
	TotalReferrals                  int64
}

// Created returns the member.created event of m, just stored: the member in
// its admin shape with zero figures, since a new member has neither a
// wallet nor referrals. The store writes it to the outbox in the
// transaction that inserted m.
func Created(m *Member) (outbox.Record, error) {
	return m.event(event.MemberCreated, Figures{})
}

// Updated returns the member.updated event of m as an update left it, with
// f read in the same transaction. Every accepted update emits one, even an
// update that changed no field: updated_at moved, and a receiver may use
// the event to resynchronise. The store writes it to the outbox in the
// transaction that updated m.
func Updated(m *Member, f Figures) (outbox.Record, error) {
	return m.event(event.MemberUpdated, f)
}

// Erased returns the member.erased event of m, just erased (Erase), with f
// read in the erasure's transaction: the member in its admin shape, whose
// personal fields are already replaced, so that a receiver deletes its own
// copy of her data. Only the first erasure emits it. The store writes it to
// the outbox in the transaction that erased m.
func Erased(m *Member, f Figures) (outbox.Record, error) {
	return m.event(event.MemberErased, f)
}

// event renders a member.* event dated at the member's updated_at.
func (m *Member) event(typ string, f Figures) (outbox.Record, error) {
	view := m.AdminView(f.Pending, f.Available, f.TotalEarned, f.TotalReferrals)
	return outbox.NewRecord(m.MerchantID, m.ID, typ, view, m.UpdatedAt)
}
