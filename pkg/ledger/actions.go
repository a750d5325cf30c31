package ledger

import (
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// referralOf returns the command's referral when it belongs to the member,
// recording a not-found refusal otherwise.
func (b *Book) referralOf(cmd Command, m *member.Member) *referral.Referral {
	r := b.ReferralsByID[MemberKey{cmd.MerchantID, cmd.ReferralID}]
	if r == nil || r.MemberID != m.ID {
		b.record(cmd, OutcomeRejected, string(apperr.NotFound), "referral not found", nil)
		return nil
	}
	return r
}

func (b *Book) invalidState(cmd Command, r *referral.Referral, why string) {
	b.record(cmd, OutcomeRejected, string(apperr.InvalidState), why, referralResult(r))
}

// manualApprove approves a pending referral (decision 16): its credit is
// released to available. Any other state is invalid_state.
func (b *Book) manualApprove(cmd Command, m *member.Member) {
	r := b.referralOf(cmd, m)
	if r == nil {
		return
	}
	if r.Status != referral.StatusPending {
		b.invalidState(cmd, r, "only a pending referral can be approved; this one is "+r.Status)
		return
	}
	if cmd.Notes != "" {
		r.Notes = cmd.Notes
	}
	b.approve(cmd, r, "Referral approved for order "+r.OrderID)
	b.emit(cmd, event.ReferralApproved, r.AdminView(m.Name, m.Email))
	b.record(cmd, OutcomeApplied, "", "approved", referralResult(r))
}

// reject rejects a pending referral (credit cancelled) or an approved one
// while the available balance still covers its reward (credit reversed).
func (b *Book) reject(cmd Command, m *member.Member) {
	r := b.referralOf(cmd, m)
	if r == nil {
		return
	}
	switch r.Status {
	case referral.StatusPending:
		b.cancelPending(cmd, r, EntryCancel, "Referral rejected ("+cmd.Reason+") for order "+r.OrderID, TxnCancelled)
	case referral.StatusApproved:
		if w := b.wallet(cmd.MerchantID, cmd.MemberID); w.Available < r.RewardAmount {
			b.invalidState(cmd, r, "the available balance no longer covers the reward: part of it was redeemed")
			return
		}
		b.reverseApproved(cmd, r, "Referral rejected ("+cmd.Reason+") for order "+r.OrderID)
	default:
		b.invalidState(cmd, r, "only a pending or approved referral can be rejected; this one is "+r.Status)
		return
	}
	r.Status, r.RejectionReason = referral.StatusRejected, cmd.Reason
	if cmd.Notes != "" {
		r.Notes = cmd.Notes
	}
	b.touchReferral(r)
	b.emit(cmd, event.ReferralRejected, r.AdminView(m.Name, m.Email))
	b.record(cmd, OutcomeApplied, "", "rejected", referralResult(r))
}

// RedemptionResultData is the result of redeem and redemption_result.
type RedemptionResultData struct {
	RedemptionID uuid.UUID `json:"redemption_id"`
	Status       string    `json:"status"`
	Amount       int64     `json:"amount"`
}

// redeem debits available balance at once (the debit is processing) and
// creates the redemption pending (decision 19): amount 0 means all that is
// available; it must be covered by available and reach the campaign's
// min_redemption.
func (b *Book) redeem(cmd Command, m *member.Member) {
	req := cmd.Redeem
	if req == nil || req.RedemptionID == uuid.Nil {
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "redeem without a request", nil)
		return
	}
	if m.Status != member.StatusActive {
		b.record(cmd, OutcomeRejected, string(apperr.InvalidState), "the member is "+m.Status+" and cannot redeem", nil)
		return
	}
	w := b.wallet(cmd.MerchantID, cmd.MemberID)
	amount := req.Amount
	if amount == 0 {
		amount = w.Available
	}
	c := b.Campaigns[MemberKey{cmd.MerchantID, m.CampaignID}]
	switch {
	case amount <= 0 || amount > w.Available:
		b.record(cmd, OutcomeRejected, string(apperr.InsufficientBalance), "the amount exceeds the available balance", nil)
		return
	case c != nil && amount < c.MinRedemption:
		b.record(cmd, OutcomeRejected, string(apperr.BelowMinRedemption), "the amount is below the campaign's minimum redemption", nil)
		return
	}
	now := b.now()
	red := &redemption.Redemption{
		ID: req.RedemptionID, MerchantID: cmd.MerchantID, MemberID: m.ID, Amount: amount, Type: req.Type,
		Status: redemption.StatusPending, SubscriptionID: req.SubscriptionID, CreatedAt: now, UpdatedAt: now,
	}
	t := &Transaction{ID: uuid.New(), MerchantID: cmd.MerchantID, MemberID: m.ID, Type: TxnDebit, Status: TxnProcessing,
		Amount: amount, Description: redemptionDescription(req.Type), ReferenceType: "redemption", ReferenceID: red.ID,
		CreatedAt: now, UpdatedAt: now}
	b.addTxn(t)
	red.DebitTxnID = t.ID
	red.TransactionID = b.move(cmd, Entry{Type: EntryDebit, Amount: amount, Description: t.Description,
		ReferenceType: "redemption", ReferenceID: red.ID, TransactionID: t.ID},
		walletDelta{available: -amount, redeemed: amount})
	b.Redemptions[MemberKey{cmd.MerchantID, red.ID}] = red
	b.NewRedemptions = append(b.NewRedemptions, red)
	b.emit(cmd, event.RedemptionRequested, redemption.Requested{RedemptionID: red.ID, MerchantID: cmd.MerchantID,
		MemberID: m.ID, Type: red.Type, Amount: amount, SubscriptionID: red.SubscriptionID})
	b.record(cmd, OutcomeApplied, "", "redemption pending", RedemptionResultData{RedemptionID: red.ID, Status: red.Status, Amount: amount})
}

// redemptionResult completes a pending redemption (debit used, event
// redemption.completed) or fails it (debit cancelled, money returned).
func (b *Book) redemptionResult(cmd Command, m *member.Member) {
	res := cmd.Result
	var red *redemption.Redemption
	if res != nil {
		red = b.Redemptions[MemberKey{cmd.MerchantID, res.RedemptionID}]
	}
	if red == nil || red.MemberID != m.ID {
		b.record(cmd, OutcomeRejected, string(apperr.NotFound), "redemption not found", nil)
		return
	}
	if red.Status != redemption.StatusPending {
		b.record(cmd, OutcomeNoop, "", "redemption already "+red.Status, RedemptionResultData{RedemptionID: red.ID, Status: red.Status, Amount: red.Amount})
		return
	}
	red.UpdatedAt = b.now()
	b.ChangedRedemptions[red.ID] = red
	if res.Success {
		red.Status, red.Result = redemption.StatusCompleted, res.Result
		b.setTxnStatus(red.DebitTxnID, TxnUsed)
		b.emit(cmd, event.RedemptionCompleted, red.AdminView())
	} else {
		red.Status, red.FailureReason = redemption.StatusFailed, res.FailureReason
		b.move(cmd, Entry{Type: EntryCancel, Amount: red.Amount, Description: "Redemption failed: amount returned",
			ReferenceType: "redemption", ReferenceID: red.ID, TransactionID: red.DebitTxnID},
			walletDelta{available: red.Amount, redeemed: -red.Amount, returnedMoney: true})
		b.setTxnStatus(red.DebitTxnID, TxnCancelled)
	}
	b.record(cmd, OutcomeApplied, "", "redemption "+red.Status, RedemptionResultData{RedemptionID: red.ID, Status: red.Status, Amount: red.Amount})
}

func redemptionDescription(typ string) string {
	if typ == redemption.TypeSubscriptionDiscount {
		return "Redemption: subscription discount"
	}
	return "Redemption: store coupon"
}
