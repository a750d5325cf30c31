package ledger

import (
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// ReferralResult is the result of a referral command.
type ReferralResult struct {
	ReferralID uuid.UUID `json:"referral_id"`
	Status     string    `json:"status"`
}

func referralResult(r *referral.Referral) ReferralResult {
	return ReferralResult{ReferralID: r.ID, Status: r.Status}
}

// referralAction carries out release, approve or reject on the command's
// referral, which must belong to the command's member (a not_found refusal
// otherwise).
func (b *Book) referralAction(cmd Command, m *member.Member, a referral.Action) {
	r := b.ReferralsByID[ScopedID{cmd.MerchantID, cmd.ReferralID}]
	if r == nil || r.MemberID != m.ID {
		b.record(cmd, OutcomeRejected, string(apperr.NotFound), "referral not found", nil)
		return
	}
	b.transition(cmd, m, r, a)
}

// transition carries out referral.Next's decision on r: a refusal is
// recorded with its code (invalid_state), a transition that changes nothing
// as a noop; otherwise the credit is moved (with its wallet.* event, see
// move), the referral updated and its event emitted: referral.approved
// carries the wallet after the release (ReferralApprovedData).
func (b *Book) transition(cmd Command, m *member.Member, r *referral.Referral, a referral.Action) {
	var available int64
	if w := b.Wallets[ScopedID{cmd.MerchantID, cmd.MemberID}]; w != nil {
		available = w.Available
	}
	t, err := referral.Next(r, a, referral.Facts{Available: available, Now: cmd.IssuedAt})
	if err != nil {
		b.record(cmd, OutcomeRejected, string(apperr.CodeOf(err)), apperr.MessageOf(err), referralResult(r))
		return
	}
	if t.To == "" {
		b.record(cmd, OutcomeNoop, "", t.Note, referralResult(r))
		return
	}
	if t.Money != referral.NoMoney {
		b.moveCredit(cmd, r, a, t)
	}
	counted := b.counts(r)
	r.Status = t.To
	if a == referral.Reject {
		r.RejectionReason = cmd.Reason
	}
	if a == referral.Approve || a == referral.Reject {
		// The decision ends the review; its reasons stay on record.
		r.ReviewRequired = false
		if cmd.Notes != "" {
			r.Notes = cmd.Notes
		}
	}
	b.touchReferral(r)
	view := r.AdminView(m.Name, m.Email)
	var data any = view
	if t.To == referral.StatusApproved {
		data = ReferralApprovedData{View: view, BalanceAfter: b.Wallets[ScopedID{cmd.MerchantID, cmd.MemberID}].balance()}
	}
	b.emit(cmd, statusEvent(t.To), data)
	b.uncount(cmd, m, r, counted)
	b.record(cmd, OutcomeApplied, "", t.To, referralResult(r))
}

// moveCredit moves r's credit as t decides: released to available,
// cancelled while pending, or reversed out of available (the part already
// redeemed recorded on r as unrecovered, never a negative balance).
func (b *Book) moveCredit(cmd Command, r *referral.Referral, a referral.Action, t referral.Transition) {
	e := Entry{Amount: t.Amount, Description: creditDescription(cmd, r, a, t.Money),
		ReferenceType: "referral", ReferenceID: r.ID, TransactionID: r.CreditTxnID}
	switch t.Money {
	case referral.ReleaseCredit:
		e.Type = EntryRelease
		b.move(cmd, e, walletDelta{pending: -t.Amount, available: t.Amount})
		b.setTxnStatus(r.CreditTxnID, TxnAvailable)
	case referral.CancelCredit:
		e.Type = EntryCancel
		b.move(cmd, e, walletDelta{pending: -t.Amount, earned: -t.Amount, cancelled: t.Amount})
		b.setTxnStatus(r.CreditTxnID, TxnCancelled)
	case referral.ReverseCredit:
		r.UnrecoveredAmount = t.Unrecovered
		if t.Amount > 0 {
			e.Type = EntryAdjustment
			b.move(cmd, e, walletDelta{available: -t.Amount, earned: -t.Amount, cancelled: t.Amount})
		}
		b.setTxnStatus(r.CreditTxnID, TxnReversed)
	}
}

// creditDescription is the description of the ledger entry that moves r's
// credit.
func creditDescription(cmd Command, r *referral.Referral, a referral.Action, money referral.Money) string {
	switch a {
	case referral.Release:
		return "Warranty released for order " + r.OrderID
	case referral.Approve:
		return "Referral approved for order " + r.OrderID
	case referral.Reject:
		return "Referral rejected (" + cmd.Reason + ") for order " + r.OrderID
	case referral.Refund:
		if money == referral.ReverseCredit {
			return "Reversal: refund of order " + r.OrderID
		}
		return "Refund of order " + r.OrderID
	}
	return ""
}

// statusEvent is the event of a referral entering status.
func statusEvent(status string) string {
	switch status {
	case referral.StatusApproved:
		return event.ReferralApproved
	case referral.StatusRejected:
		return event.ReferralRejected
	}
	return event.ReferralCancelled
}
