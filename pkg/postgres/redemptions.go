package postgres

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/report"
)

// RedemptionReads answers the merchant-wide reads of redemptions: the
// dashboard's list with its status tabs and its export. It writes nothing
// (the ledger does).
type RedemptionReads struct{ pool *pgxpool.Pool }

// NewRedemptionReads returns a RedemptionReads.
func NewRedemptionReads(pool *pgxpool.Pool) *RedemptionReads { return &RedemptionReads{pool: pool} }

// redemptionFilterWhere selects the redemptions of merchant $1 matching $2
// (the member, NULL for any), $3 (status, empty for any), the half-open
// creation interval [$4, $5) (either NULL for unbounded) and coming after
// the cursor ($6, $7), NULL for the start; on redemptions_list, index-only
// until the page is chosen.
const redemptionFilterWhere = `d.merchant_id = $1 AND ($2::uuid IS NULL OR d.member_id = $2)
  AND ($3 = '' OR d.status = $3)
  AND ($4::timestamptz IS NULL OR d.created_at >= $4)
  AND ($5::timestamptz IS NULL OR d.created_at < $5)
  AND ($6::timestamptz IS NULL OR (d.created_at, d.id) < ($6, $7::uuid))`

func redemptionFilterArgs(merchantID uuid.UUID, f redemption.Filter, status string, after *cursor) []any {
	return append([]any{merchantID, nilIfZero(f.MemberID), status, nilIfZeroTime(f.CreatedAfter),
		nilIfZeroTime(f.CreatedBefore)}, cursorArgs(after)...)
}

// redemptionPageSQL reads a page of redemptionFilterWhere ($8 offset, $9
// limit) with each member's name and email; only the page's rows are joined.
const redemptionPageSQL = `SELECT d.merchant_id, d.id, d.member_id, d.amount, d.type, d.status, d.transaction_id,
  d.debit_txn_id, d.subscription_id, d.result, d.failure_reason, d.created_at, d.updated_at, m.name, m.email
FROM (SELECT d.id FROM redemptions d WHERE ` + redemptionFilterWhere + `
      ORDER BY d.created_at DESC, d.id DESC OFFSET $8 LIMIT $9) p
JOIN redemptions d ON d.merchant_id = $1 AND d.id = p.id
JOIN members m ON m.merchant_id = d.merchant_id AND m.id = d.member_id
ORDER BY d.created_at DESC, d.id DESC`

var redemptionTabsSQL = tabsSQL("redemptions", "d", redemptionFilterWhere,
	redemption.StatusPending, redemption.StatusCompleted, redemption.StatusFailed)

func scanListedRedemption(row pgx.CollectableRow) (redemption.Listed, error) {
	var l redemption.Listed
	r := &l.Redemption
	var result []byte
	err := row.Scan(&r.MerchantID, &r.ID, &r.MemberID, &r.Amount, &r.Type, &r.Status, &r.TransactionID,
		&r.DebitTxnID, &r.SubscriptionID, &result, &r.FailureReason, &r.CreatedAt, &r.UpdatedAt,
		&l.MemberName, &l.MemberEmail)
	if err != nil {
		return l, err
	}
	// The platform's answer as stored by the ledger; a field it cannot read
	// is left zero rather than failing the whole page.
	_ = json.Unmarshal(result, &r.Result)
	return l, nil
}

// RedemptionsPage returns a page of the merchant's redemptions matching f,
// newest first with ties broken by id, each with its member's name and
// email, and the redemptions matching f counted by status up to report.TabCap
// (the page's tabs; f.Status chooses the tab, not the counts), in one
// round trip.
func (s *RedemptionReads) RedemptionsPage(ctx context.Context, merchantID uuid.UUID, f redemption.Filter) ([]redemption.Listed, report.Tabs, error) {
	var list []redemption.Listed
	tabs := newTabs(redemption.StatusPending, redemption.StatusCompleted, redemption.StatusFailed)
	b := &pgx.Batch{}
	b.Queue(redemptionPageSQL, append(redemptionFilterArgs(merchantID, f, f.Status, nil), f.Offset, f.Limit)...).Query(
		func(rows pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rows, scanListedRedemption)
			return err
		})
	b.Queue(redemptionTabsSQL, redemptionFilterArgs(merchantID, f, "", nil)...).Query(collectTabs(tabs))
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, err
	}
	return list, tabs, nil
}

// RedemptionRows yields every redemption of the merchant matching f (its
// Offset and Limit ignored), newest first, read ExportBatch at a time: the
// CSV export. The sequence ends at the first error, yielded.
func (s *RedemptionReads) RedemptionRows(ctx context.Context, merchantID uuid.UUID, f redemption.Filter) iter.Seq2[redemption.Listed, error] {
	return batches(ctx, func(ctx context.Context, after *cursor, limit int) ([]redemption.Listed, error) {
		rows, err := s.pool.Query(ctx, redemptionPageSQL, append(redemptionFilterArgs(merchantID, f, f.Status, after), 0, limit)...)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, scanListedRedemption)
	}, func(l redemption.Listed) cursor { return cursor{l.CreatedAt, l.ID} })
}
