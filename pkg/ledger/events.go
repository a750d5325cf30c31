package ledger

import (
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/referral"
)

// Balance is the wallet part of admin shapes: {pending, available, currency}.
type Balance struct {
	Pending   int64  `json:"pending"`
	Available int64  `json:"available"`
	Currency  string `json:"currency"`
}

// TransactionView is the administrative shape of a ledger entry (spec 2.6).
type TransactionView struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	Amount        int64   `json:"amount"`
	BalanceAfter  Balance `json:"balance_after"`
	Description   string  `json:"description"`
	ReferenceType string  `json:"reference_type"`
	ReferenceID   string  `json:"reference_id"`
	CreatedAt     string  `json:"created_at"`
}

// WalletEventData is the data of wallet.credited and wallet.debited.
type WalletEventData struct {
	MemberID    string          `json:"member_id"`
	Transaction TransactionView `json:"transaction"`
	Wallet      Balance         `json:"wallet"`
}

// ReferralApprovedData is the data of referral.approved: the referral in
// its admin shape (reward_amount is what the release moved from pending to
// available) and the wallet right after the release. A referral's approval
// is the one money movement without a wallet.* event, so this is what lets
// a merchant mirror the wallet from events alone (docs/webhooks.md).
type ReferralApprovedData struct {
	referral.View
	BalanceAfter Balance `json:"balance_after"`
}

// CreatorTierChangedData is the data of creator.tier_changed: the creator
// (a member), the tier before and after (null below the first tier), the
// month's non-rejected, non-cancelled referrals that decide it, and the
// new tier's commission (null with no tier: the campaign's reward applies).
type CreatorTierChangedData struct {
	MemberID          string   `json:"member_id"`
	PreviousTier      *string  `json:"previous_tier"`
	Tier              *string  `json:"tier"`
	MonthSales        int      `json:"month_sales"`
	CommissionPercent *float64 `json:"commission_percent"`
}

// BalanceAfter is the wallet right after the entry.
func (e Entry) BalanceAfter() Balance {
	return Balance{Pending: e.PendingAfter, Available: e.AvailableAfter, Currency: "BRL"}
}

// View renders the entry in the administrative shape.
func (e Entry) View() TransactionView {
	return TransactionView{
		ID:            ids.Format(ids.Transaction, e.ID),
		Type:          e.Type,
		Amount:        e.Amount,
		BalanceAfter:  e.BalanceAfter(),
		Description:   e.Description,
		ReferenceType: e.ReferenceType,
		ReferenceID:   ReferenceID(e.ReferenceType, e.ReferenceID),
		CreatedAt:     jsontime.Format(e.CreatedAt),
	}
}

// ReferenceID renders the id of what a transaction of reference type typ
// belongs to: ref_… for a referral, red_… for a redemption.
func ReferenceID(typ string, id uuid.UUID) string {
	switch typ {
	case "referral":
		return ids.Format(ids.Referral, id)
	case "redemption":
		return ids.Format(ids.Redemption, id)
	}
	return id.String()
}

func memberIDString(id uuid.UUID) string { return ids.Format(ids.Member, id) }

// balance is w in the admin shape; the zero balance when w is nil.
func (w *Wallet) balance() Balance {
	if w == nil {
		return Balance{Currency: "BRL"}
	}
	return Balance{Pending: w.Pending, Available: w.Available, Currency: "BRL"}
}
