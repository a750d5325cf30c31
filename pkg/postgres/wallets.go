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

// NewWalletReads returns a WalletReads.
func NewWalletReads(pool *pgxpool.Pool) *WalletReads { return &WalletReads{pool: pool} }

// FindWallet returns the member's wallet snapshot; a member without ledger
// activity has a zero wallet.
func (s *WalletReads) FindWallet(ctx context.Context, merchantID, memberID uuid.UUID) (ledger.Wallet, error) {
	w := ledger.Wallet{MerchantID: merchantID, MemberID: memberID}
	err := s.pool.QueryRow(ctx, `SELECT pending, available, total_earned, total_redeemed, cancelled, version, updated_at
  FROM wallets WHERE merchant_id = $1 AND member_id = $2`, merchantID, memberID).Scan(
		&w.Pending, &w.Available, &w.TotalEarned, &w.TotalRedeemed, &w.Cancelled, &w.Version, &w.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, nil
	}
	return w, err
}

// ListTransactions returns the member's public transactions, newest first:
// the full history (spec 4.1).
func (s *WalletReads) ListTransactions(ctx context.Context, merchantID, memberID uuid.UUID) ([]ledger.Transaction, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, type, status, amount, description, reference_type, reference_id,
  created_at, updated_at FROM wallet_transactions WHERE merchant_id = $1 AND member_id = $2
  ORDER BY created_at DESC, id DESC`, merchantID, memberID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.Transaction, error) {
		t := ledger.Transaction{MerchantID: merchantID, MemberID: memberID}
		err := row.Scan(&t.ID, &t.Type, &t.Status, &t.Amount, &t.Description, &t.ReferenceType, &t.ReferenceID,
			&t.CreatedAt, &t.UpdatedAt)
		return t, err
	})
}

// ListEntries returns a page of the member's ledger entries, newest first,
// and the total matching the filter.
func (s *WalletReads) ListEntries(ctx context.Context, merchantID, memberID uuid.UUID, f ledger.EntryFilter) ([]ledger.Entry, int, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, type, amount, pending_delta, available_delta, pending_after,
  available_after, description, reference_type, reference_id, transaction_id, command_id, created_at,
  count(*) OVER ()
  FROM ledger_entries WHERE merchant_id = $1 AND member_id = $2 AND ($3 = '' OR type = $3)
  ORDER BY created_at DESC, id DESC OFFSET $4 LIMIT $5`, merchantID, memberID, f.Type, f.Offset, f.Limit)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.Entry, error) {
		e := ledger.Entry{MerchantID: merchantID, MemberID: memberID}
		err := row.Scan(&e.ID, &e.Type, &e.Amount, &e.PendingDelta, &e.AvailableDelta, &e.PendingAfter,
			&e.AvailableAfter, &e.Description, &e.ReferenceType, &e.ReferenceID, &e.TransactionID, &e.CommandID,
			&e.CreatedAt, &total)
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
