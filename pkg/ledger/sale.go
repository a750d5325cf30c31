package ledger

import (
	"fmt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// creditSale carries out the attribution of a paid sale (decision 14, see
// referral.Attribute, with the fraud rules and a creator's tier read from
// the member's stats): a credited referral is created pending with a
// pending credit of its reward (held for review when a fraud rule flagged
// it), a self-referral is created rejected, and anything else changes
// nothing.
func (b *Book) creditSale(cmd Command, m *member.Member) {
	sale := cmd.Sale
	if sale == nil || sale.OrderID == "" {
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "credit_sale without sale", nil)
		return
	}
	existing := b.Referrals[OrderKey{cmd.MerchantID, sale.Source, sale.OrderID}]
	a := referral.Attribute(sale.order(), existing, m, b.Campaigns[ScopedID{cmd.MerchantID, m.CampaignID}], b.history(m))
	switch a.Verdict {
	case referral.Credited, referral.SelfReferred:
	case referral.AlreadyAttributed:
		b.record(cmd, OutcomeNoop, "", a.Note, referralResult(existing))
		return
	default:
		b.record(cmd, OutcomeNoop, "", a.Note, nil)
		return
	}
	r := b.newReferral(cmd, m, a)
	credit := a.Verdict == referral.Credited && r.RewardAmount > 0
	var desc string
	if credit {
		desc = rewardDescription(sale)
		now := b.now()
		t := &Transaction{
			ID: ids.New(), MerchantID: cmd.MerchantID, MemberID: m.ID,
			Type: TxnCredit, Status: TxnPending, Amount: r.RewardAmount,
			Description:   desc,
			ReferenceType: "referral", ReferenceID: r.ID,
			CreatedAt: now, UpdatedAt: now,
		}
		b.addTxn(t)
		r.CreditTxnID = t.ID
	}
	b.emit(cmd, event.ReferralCreated, r.AdminView(m.Name, m.Email))
	b.countNew(cmd, m, r)
	if credit {
		b.move(cmd, Entry{Type: EntryCredit, Amount: r.RewardAmount, Description: desc,
			ReferenceType: "referral", ReferenceID: r.ID, TransactionID: r.CreditTxnID},
			walletDelta{pending: r.RewardAmount, earned: r.RewardAmount})
	}
	b.record(cmd, OutcomeApplied, "", a.Note, referralResult(r))
}

// newReferral creates the referral of the command's sale as attributed.
func (b *Book) newReferral(cmd Command, m *member.Member, a referral.Attribution) *referral.Referral {
	s := cmd.Sale
	now := b.now()
	r := &referral.Referral{
		ID: ids.New(), MerchantID: cmd.MerchantID, MemberID: m.ID,
		Source: s.Source, OrderID: s.OrderID,
		RefereeEmail: s.BuyerEmail, RefereeName: s.BuyerName, RefereeExternalID: s.BuyerDocument,
		CouponUsed: s.CouponCode, OrderValue: s.Amount, RewardAmount: a.Reward,
		Status: a.Status(), RejectionReason: a.RejectionReason(), WarrantyExpiresAt: a.WarrantyExpiresAt,
		ReviewRequired: len(a.ReviewReasons) > 0, ReviewReasons: a.ReviewReasons,
		CreatedAt: now, UpdatedAt: now,
	}
	b.AddReferral(r)
	b.NewReferrals = append(b.NewReferrals, r)
	return r
}

// refund ends the order's referral cancelled (decision 16, see
// referral.Next). A refund before its sale creates the referral already
// cancelled (referral.AttributeRefund), so the sale arriving later credits
// nothing.
func (b *Book) refund(cmd Command, m *member.Member) {
	sale := cmd.Sale
	if sale == nil || sale.OrderID == "" {
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "refund without order", nil)
		return
	}
	r := b.Referrals[OrderKey{cmd.MerchantID, sale.Source, sale.OrderID}]
	if r == nil && m.IsErased() { // her code records nothing new (referral.MemberErased)
		b.record(cmd, OutcomeNoop, "", referral.ErasedNote, nil)
		return
	}
	if r == nil {
		a := referral.AttributeRefund(sale.order(), b.Campaigns[ScopedID{cmd.MerchantID, m.CampaignID}])
		r = b.newReferral(cmd, m, a)
		b.countNew(cmd, m, r)
		b.record(cmd, OutcomeApplied, "", a.Note, referralResult(r))
		return
	}
	b.transition(cmd, m, r, referral.Refund)
}

// order is what attribution reads of the sale.
func (s *Sale) order() referral.Order {
	return referral.Order{Amount: s.Amount, BuyerEmail: s.BuyerEmail, BuyerDocument: s.BuyerDocument, PaidAt: s.PaidAt}
}

func rewardDescription(s *Sale) string {
	return fmt.Sprintf("Referral reward for order %s (%s)", s.OrderID, s.Source)
}
