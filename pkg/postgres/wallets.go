package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/ledger"
)

// WalletReads answers the read side of the wallet: snapshots, transaction
// histories and referral lists. It writes nothing.
type WalletReads struct{ pool *pgxpool.Pool }

var _ ledger.WalletReader = (*WalletReads)(nil)

// NewWalletReads returns a WalletReads.
func NewWalletReads(pool *pgxpool.Pool) *WalletReads { return &WalletReads{pool: pool} }

// FindWallet returns the member's wallet snapshot; a member without ledger
// activity has a zero wallet.
func (s *WalletReads) FindWallet(ctx context.Context, merchantID, memberID uuid.UUID) (ledger.Wallet, error) {
	return scanWallet(s.pool.QueryRow(ctx, sqlWallet, merchantID, memberID), merchantID, memberID)
}

// sqlWallet reads the wallet of member $2 of merchant $1 (scanWallet).
const sqlWallet = `SELECT pending, available, total_earned, total_redeemed, cancelled, version, updated_at
  FROM wallets WHERE merchant_id = $1 AND member_id = $2`

// scanWallet reads a row of sqlWallet; no row is the zero wallet.
func scanWallet(row pgx.Row, merchantID, memberID uuid.UUID) (ledger.Wallet, error) {
	w := ledger.Wallet{MerchantID: merchantID, MemberID: memberID}
	err := row.Scan(&w.Pending, &w.Available, &w.TotalEarned, &w.TotalRedeemed, &w.Cancelled, &w.Version, &w.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, nil
	}
	return w, err
}

// ListTransactions returns the member's public transactions, newest first:
// the full history (spec 4.1).
func (s *WalletReads) ListTransactions(ctx context.Context, merchantID, memberID uuid.UUID) ([]ledger.Transaction, error) {
	rows, err := s.pool.Query(ctx, sqlTransactions, merchantID, memberID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanTransaction)
}

// sqlTransactions reads every public transaction of member $2 of merchant
// $1, newest first (scanTransaction).
const sqlTransactions = `SELECT merchant_id, member_id, id, type, status, amount, description, reference_type,
  reference_id, created_at, updated_at FROM wallet_transactions WHERE merchant_id = $1 AND member_id = $2
  ORDER BY created_at DESC, id DESC`

func scanTransaction(row pgx.CollectableRow) (ledger.Transaction, error) {
	var t ledger.Transaction
	err := row.Scan(&t.MerchantID, &t.MemberID, &t.ID, &t.Type, &t.Status, &t.Amount, &t.Description,
		&t.ReferenceType, &t.ReferenceID, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

// ListEntries returns a page of the member's ledger entries, newest first,
// and the total matching the filter.
func (s *WalletReads) ListEntries(ctx context.Context, merchantID, memberID uuid.UUID, f ledger.EntryFilter) ([]ledger.Entry, int, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+entryColumns+`, count(*) OVER ()
  FROM ledger_entries WHERE merchant_id = $1 AND member_id = $2 AND ($3 = '' OR type = $3)
  ORDER BY created_at DESC, id DESC OFFSET $4 LIMIT $5`, merchantID, memberID, f.Type, f.Offset, f.Limit)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.Entry, error) {
		var e ledger.Entry
		err := row.Scan(append(entryDest(&e), &total)...)
		return e, err
	})
	if err != nil {
		return nil, 0, err
	}
	if len(entries) == 0 && f.Offset > 0 {
		err = s.pool.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE merchant_id = $1 AND member_id = $2
  AND ($3 = '' OR type = $3)`, merchantID, memberID, f.Type).Scan(&total)
	}
	return entries, total, err
}

// entryColumns are the columns of a ledger entry (entryDest).
const entryColumns = `merchant_id, member_id, id, type, amount, pending_delta, available_delta, pending_after,
  available_after, description, reference_type, reference_id, transaction_id, command_id, created_at`

// entryDest returns the scan destinations of entryColumns, in order.
func entryDest(e *ledger.Entry) []any {
	return []any{&e.MerchantID, &e.MemberID, &e.ID, &e.Type, &e.Amount, &e.PendingDelta, &e.AvailableDelta,
		&e.PendingAfter, &e.AvailableAfter, &e.Description, &e.ReferenceType, &e.ReferenceID, &e.TransactionID,
		&e.CommandID, &e.CreatedAt}
}
