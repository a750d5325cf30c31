package ledger

import (
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
)

// RedemptionResultData is the result of redeem and redemption_result.
type RedemptionResultData struct {
	RedemptionID uuid.UUID `json:"redemption_id"`
	Status       string    `json:"status"`
	Amount       int64     `json:"amount"`
}

// RedeemAmount decides the amount a redemption debits (decision 19):
// requested cents, 0 meaning all that is available. The amount must be
// covered by available (so an empty wallet redeems nothing) and reach
// minRedemption, the member's campaign minimum (0 for none). A refusal is
// an *apperr.Error with code apperr.InsufficientBalance or
// apperr.BelowMinRedemption.
func RedeemAmount(requested, available, minRedemption int64) (int64, error) {
	amount := requested
	if amount == 0 {
		amount = available
	}
	switch {
	case amount <= 0 || amount > available:
		return 0, apperr.Errorf(apperr.InsufficientBalance, "the amount exceeds the available balance")
	case amount < minRedemption:
		return 0, apperr.Errorf(apperr.BelowMinRedemption, "the amount is below the campaign's minimum redemption")
	}
	return amount, nil
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
	var minRedemption int64
	if c := b.Campaigns[ScopedID{cmd.MerchantID, m.CampaignID}]; c != nil {
		minRedemption = c.MinRedemption
	}
	amount, err := RedeemAmount(req.Amount, w.Available, minRedemption)
	if err != nil {
		b.record(cmd, OutcomeRejected, string(apperr.CodeOf(err)), apperr.MessageOf(err), nil)
		return
	}
	now := b.now()
	red := &redemption.Redemption{
		ID: req.RedemptionID, MerchantID: cmd.MerchantID, MemberID: m.ID, Amount: amount, Type: req.Type,
		Status: redemption.StatusPending, SubscriptionID: req.SubscriptionID, CreatedAt: now, UpdatedAt: now,
	}
	t := &Transaction{ID: ids.New(), MerchantID: cmd.MerchantID, MemberID: m.ID, Type: TxnDebit, Status: TxnProcessing,
		Amount: amount, Description: redemptionDescription(req.Type), ReferenceType: "redemption", ReferenceID: red.ID,
		CreatedAt: now, UpdatedAt: now}
	b.addTxn(t)
	red.DebitTxnID = t.ID
	red.TransactionID = b.move(cmd, Entry{Type: EntryDebit, Amount: amount, Description: t.Description,
		ReferenceType: "redemption", ReferenceID: red.ID, TransactionID: t.ID},
		walletDelta{available: -amount, redeemed: amount})
	b.Redemptions[ScopedID{cmd.MerchantID, red.ID}] = red
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
		red = b.Redemptions[ScopedID{cmd.MerchantID, res.RedemptionID}]
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
			walletDelta{available: red.Amount, redeemed: -red.Amount})
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
