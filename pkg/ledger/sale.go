package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/convida/convida/pkg/event"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// Apply applies one command to the book. A command whose id the book has
// already processed is skipped without a new outcome. Business refusals are
// outcomes (OutcomeRejected with an apperr code), not errors: they are
// recorded so a redelivery finds them. Apply never fails.
func (b *Book) Apply(cmd Command) {
	if b.Processed[ProcessedKey{cmd.MerchantID, cmd.ID}] {
		return
	}
	m := b.Members[ScopedID{cmd.MerchantID, cmd.MemberID}]
	if m == nil {
		b.record(cmd, OutcomeRejected, string(apperr.MemberNotFound), "member not found", nil)
		return
	}
	switch cmd.Type {
	case CmdCreditSale:
		b.creditSale(cmd, m)
	case CmdRefund:
		b.refund(cmd, m)
	case CmdRelease:
		b.release(cmd, m)
	case CmdApprove:
		b.manualApprove(cmd, m)
	case CmdReject:
		b.reject(cmd, m)
	case CmdRedeem:
		b.redeem(cmd, m)
	case CmdRedemptionResult:
		b.redemptionResult(cmd, m)
	default:
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "unknown command type "+cmd.Type, nil)
	}
}

// creditSale attributes a paid sale (decision 14): one referral per order,
// self-referral created rejected, inactive campaign or member credits
// nothing, otherwise a pending referral with a pending credit.
func (b *Book) creditSale(cmd Command, m *member.Member) {
	sale := cmd.Sale
	if sale == nil || sale.OrderID == "" {
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "credit_sale without sale", nil)
		return
	}
	if existing := b.Referrals[OrderKey{cmd.MerchantID, sale.Source, sale.OrderID}]; existing != nil {
		b.record(cmd, OutcomeNoop, "", "order already attributed ("+existing.Status+")", referralResult(existing))
		return
	}
	c := b.Campaigns[ScopedID{cmd.MerchantID, m.CampaignID}]
	if c == nil || !c.IsActive {
		b.record(cmd, OutcomeNoop, "", "campaign inactive: nothing attributed", nil)
		return
	}
	if m.Status != member.StatusActive {
		b.record(cmd, OutcomeNoop, "", "member "+m.Status+": nothing attributed", nil)
		return
	}
	r := b.newReferral(cmd, m, c.Reward(sale.Amount), c.WarrantyEnd(sale.PaidAt))
	if sale.BuyerEmail != "" && strings.EqualFold(strings.TrimSpace(sale.BuyerEmail), strings.TrimSpace(m.Email)) {
		r.Status, r.RejectionReason = referral.StatusRejected, "self_referral"
		b.emit(cmd, event.ReferralCreated, r.AdminView(m.Name, m.Email))
		b.record(cmd, OutcomeApplied, "", "self-referral: created rejected", referralResult(r))
		return
	}
	if r.RewardAmount > 0 {
		t := &Transaction{
			ID: uuid.New(), MerchantID: cmd.MerchantID, MemberID: m.ID,
			Type: TxnCredit, Status: TxnPending, Amount: r.RewardAmount,
			Description:   rewardDescription(sale),
			ReferenceType: "referral", ReferenceID: r.ID,
			CreatedAt: b.now(), UpdatedAt: b.now(),
		}
		b.addTxn(t)
		r.CreditTxnID = t.ID
	}
	b.emit(cmd, event.ReferralCreated, r.AdminView(m.Name, m.Email))
	if r.RewardAmount > 0 {
		b.move(cmd, Entry{Type: EntryCredit, Amount: r.RewardAmount, Description: rewardDescription(sale),
			ReferenceType: "referral", ReferenceID: r.ID, TransactionID: r.CreditTxnID},
			walletDelta{pending: r.RewardAmount, earned: r.RewardAmount})
	}
	b.record(cmd, OutcomeApplied, "", "credited", referralResult(r))
}

// newReferral creates a pending referral of the command's sale.
func (b *Book) newReferral(cmd Command, m *member.Member, reward int64, warrantyEnd time.Time) *referral.Referral {
	s := cmd.Sale
	now := b.now()
	r := &referral.Referral{
		ID: uuid.New(), MerchantID: cmd.MerchantID, MemberID: m.ID,
		Source: s.Source, OrderID: s.OrderID,
		RefereeEmail: s.BuyerEmail, RefereeName: s.BuyerName, RefereeExternalID: s.BuyerDocument,
		CouponUsed: s.CouponCode, OrderValue: s.Amount, RewardAmount: reward,
		Status: referral.StatusPending, WarrantyExpiresAt: warrantyEnd,
		CreatedAt: now, UpdatedAt: now,
	}
	b.AddReferral(r)
	b.NewReferrals = append(b.NewReferrals, r)
	return r
}

// refund ends the order's referral cancelled (decision 16): a pending credit
// is cancelled; an approved one reversed up to the available balance, the
// rest recorded as unrecovered. A refund before its sale creates the
// referral already cancelled, so the sale arriving later credits nothing.
func (b *Book) refund(cmd Command, m *member.Member) {
	sale := cmd.Sale
	if sale == nil || sale.OrderID == "" {
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "refund without order", nil)
		return
	}
	r := b.Referrals[OrderKey{cmd.MerchantID, sale.Source, sale.OrderID}]
	if r == nil {
		r = b.newReferral(cmd, m, 0, sale.PaidAt)
		r.Status = referral.StatusCancelled
		if c := b.Campaigns[ScopedID{cmd.MerchantID, m.CampaignID}]; c != nil {
			r.RewardAmount = c.Reward(sale.Amount)
			r.WarrantyExpiresAt = c.WarrantyEnd(sale.PaidAt)
		}
		b.record(cmd, OutcomeApplied, "", "refund before sale: referral recorded cancelled", referralResult(r))
		return
	}
	switch r.Status {
	case referral.StatusPending:
		b.cancelPending(cmd, r, EntryCancel, "Refund of order "+r.OrderID, TxnCancelled)
	case referral.StatusApproved:
		b.reverseApproved(cmd, r, "Reversal: refund of order "+r.OrderID)
	default:
		b.record(cmd, OutcomeNoop, "", "referral already "+r.Status, referralResult(r))
		return
	}
	r.Status = referral.StatusCancelled
	b.touchReferral(r)
	b.emit(cmd, event.ReferralCancelled, r.AdminView(m.Name, m.Email))
	b.record(cmd, OutcomeApplied, "", "cancelled", referralResult(r))
}

// release moves a pending reward whose warranty has expired (as of the
// command's issue time) to available and approves the referral.
func (b *Book) release(cmd Command, m *member.Member) {
	r := b.ReferralsByID[ScopedID{cmd.MerchantID, cmd.ReferralID}]
	if r == nil || r.MemberID != m.ID {
		b.record(cmd, OutcomeRejected, string(apperr.NotFound), "referral not found", nil)
		return
	}
	if r.Status != referral.StatusPending {
		b.record(cmd, OutcomeNoop, "", "referral already "+r.Status, referralResult(r))
		return
	}
	if r.WarrantyExpiresAt.After(cmd.IssuedAt) {
		b.record(cmd, OutcomeNoop, "", "warranty not expired", referralResult(r))
		return
	}
	b.approve(cmd, r, "Warranty released for order "+r.OrderID)
	b.emit(cmd, event.ReferralApproved, r.AdminView(m.Name, m.Email))
	b.record(cmd, OutcomeApplied, "", "approved", referralResult(r))
}

// approve releases the referral's pending credit to available.
func (b *Book) approve(cmd Command, r *referral.Referral, description string) {
	if r.RewardAmount > 0 && r.CreditTxnID != uuid.Nil {
		b.move(cmd, Entry{Type: EntryRelease, Amount: r.RewardAmount, Description: description,
			ReferenceType: "referral", ReferenceID: r.ID, TransactionID: r.CreditTxnID},
			walletDelta{pending: -r.RewardAmount, available: r.RewardAmount})
		b.setTxnStatus(r.CreditTxnID, TxnAvailable)
	}
	r.Status = referral.StatusApproved
	b.touchReferral(r)
}

// cancelPending cancels the pending credit of r.
func (b *Book) cancelPending(cmd Command, r *referral.Referral, entryType, description, txnStatus string) {
	if r.RewardAmount == 0 || r.CreditTxnID == uuid.Nil {
		return
	}
	b.move(cmd, Entry{Type: entryType, Amount: r.RewardAmount, Description: description,
		ReferenceType: "referral", ReferenceID: r.ID, TransactionID: r.CreditTxnID},
		walletDelta{pending: -r.RewardAmount, earned: -r.RewardAmount, cancelled: r.RewardAmount})
	b.setTxnStatus(r.CreditTxnID, txnStatus)
}

// reverseApproved takes back an approved reward from available, never below
// zero; what was already redeemed is recorded as unrecovered.
func (b *Book) reverseApproved(cmd Command, r *referral.Referral, description string) {
	if r.RewardAmount == 0 || r.CreditTxnID == uuid.Nil {
		return
	}
	w := b.wallet(cmd.MerchantID, cmd.MemberID)
	recovered := min(r.RewardAmount, w.Available)
	r.UnrecoveredAmount = r.RewardAmount - recovered
	if recovered > 0 {
		b.move(cmd, Entry{Type: EntryAdjustment, Amount: recovered, Description: description,
			ReferenceType: "referral", ReferenceID: r.ID, TransactionID: r.CreditTxnID},
			walletDelta{available: -recovered, earned: -recovered, cancelled: recovered})
	}
	b.setTxnStatus(r.CreditTxnID, TxnReversed)
}

func rewardDescription(s *Sale) string {
	return fmt.Sprintf("Referral reward for order %s (%s)", s.OrderID, s.Source)
}

// ReferralResult is the result of a referral command.
type ReferralResult struct {
	ReferralID uuid.UUID `json:"referral_id"`
	Status     string    `json:"status"`
}

func referralResult(r *referral.Referral) ReferralResult {
	return ReferralResult{ReferralID: r.ID, Status: r.Status}
}
