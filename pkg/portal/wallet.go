package portal

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/referral"
)

type walletData struct {
	Wallet       ledger.Wallet
	Transactions []walletRow
}

type walletRow struct {
	At        time.Time
	Amount    int64
	Debit     bool
	Status    string // catalogue key of the status in words
	Reason    string // catalogue key of the reason
	OrderID   string // the sale a credit came from
	ReleaseAt time.Time
}

// wallet is the Wallet page: her balances and her transactions, each with
// its reason in words and, for a pending credit, when it becomes
// available.
func (p *Portal) wallet(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ctx := r.Context()
	wal, err := p.cfg.Wallets.FindWallet(ctx, c.Merchant.ID, c.Member.ID)
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	txns, err := p.cfg.Wallets.ListTransactions(ctx, c.Merchant.ID, c.Member.ID)
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	refs, err := p.cfg.Wallets.ListMemberReferrals(ctx, c.Merchant.ID, c.Member.ID)
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	byCredit := map[uuid.UUID]referral.Referral{}
	for _, ref := range refs {
		if ref.CreditTxnID != uuid.Nil {
			byCredit[ref.CreditTxnID] = ref
		}
	}
	data := walletData{Wallet: wal, Transactions: make([]walletRow, 0, len(txns))}
	for _, t := range txns {
		row := walletRow{At: t.CreatedAt, Amount: t.Amount, Debit: t.Type == ledger.TxnDebit,
			Status: "status." + t.Status, Reason: reason(t)}
		if ref, ok := byCredit[t.ID]; ok {
			row.OrderID = ref.OrderID
			if t.Status == ledger.TxnPending && !ref.ReviewRequired {
				row.ReleaseAt = ref.WarrantyExpiresAt
			}
		}
		data.Transactions = append(data.Transactions, row)
	}
	p.render(w, r, c, Page{Template: "wallet", Title: "wallet.title", Nav: "wallet", Data: data})
}

// reason is the catalogue key of why a transaction is what it is.
func reason(t ledger.Transaction) string {
	if t.Type == ledger.TxnDebit {
		if t.Status == ledger.TxnCancelled || t.Status == ledger.TxnReversed {
			return "reason.redeem_returned"
		}
		return "reason.redeemed"
	}
	switch t.Status {
	case ledger.TxnPending:
		return "reason.pending"
	case ledger.TxnCancelled, ledger.TxnReversed:
		return "reason.cancelled"
	case ledger.TxnUsed:
		return "reason.used"
	}
	return "reason.released"
}
