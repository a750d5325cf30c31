package postgres

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/referral"
)

func queueNewReferrals(b *pgx.Batch, book *ledger.Book) {
	if len(book.NewReferrals) > 0 {
		var c referralCols
		for _, r := range book.NewReferrals {
			c.add(r)
		}
		b.Queue(`INSERT INTO referrals (merchant_id, id, member_id, source, order_id, referee_email, referee_name,
  referee_external_id, coupon_used, order_value, reward_amount, status, rejection_reason, notes,
  unrecovered_amount, credit_txn_id, warranty_expires_at, created_at, updated_at, review_required, review_reasons)
SELECT k.merchant_id, k.id, k.member_id, k.source, k.order_id, k.referee_email, k.referee_name,
  k.referee_external_id, k.coupon_used, k.order_value, k.reward_amount, k.status, k.rejection_reason, k.notes,
  k.unrecovered_amount, nullif(k.credit_txn_id, '00000000-0000-0000-0000-000000000000'), k.warranty_expires_at, k.created_at, k.updated_at, k.review_required,
  coalesce(string_to_array(nullif(k.review_reasons, ''), ','), '{}')
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::text[],
  $15::bigint[], $16::uuid[], $17::timestamptz[], $18::timestamptz[], $19::timestamptz[], $20::boolean[], $21::text[])
  AS k(merchant_id, id, member_id, source, order_id, referee_email, referee_name, referee_external_id, coupon_used,
    order_value, reward_amount, status, rejection_reason, notes, unrecovered_amount, credit_txn_id,
    warranty_expires_at, created_at, updated_at, review_required, review_reasons)`,
			c.merchant, c.id, c.member, c.source, c.order, c.email, c.name, c.external, c.coupon,
			c.orderValue, c.reward, c.status, c.reason, c.notes, c.unrecovered, c.creditTxn,
			c.warranty, c.created, c.updated, c.review, c.reasons)
	}
}

// queueChangedReferrals updates the batch's referrals that existed before
// it (a new one is inserted as it ends the batch).
func queueChangedReferrals(b *pgx.Batch, book *ledger.Book) {
	isNew := make(map[uuid.UUID]bool, len(book.NewReferrals))
	for _, r := range book.NewReferrals {
		isNew[r.ID] = true
	}
	var u referralCols
	for _, r := range book.ChangedReferrals {
		if !isNew[r.ID] {
			u.add(r)
		}
	}
	if len(u.id) > 0 {
		b.Queue(`UPDATE referrals r SET status = u.status, rejection_reason = u.reason, notes = u.notes,
  unrecovered_amount = u.unrecovered, updated_at = u.updated, review_required = u.review
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[], $8::boolean[])
  AS u(merchant_id, id, status, reason, notes, unrecovered, updated, review)
WHERE r.merchant_id = u.merchant_id AND r.id = u.id`,
			u.merchant, u.id, u.status, u.reason, u.notes, u.unrecovered, u.updated, u.review)
	}
}

type referralCols struct {
	merchant, id, member                         []uuid.UUID
	source, order, email, name, external, coupon []string
	orderValue, reward, unrecovered              []int64
	status, reason, notes                        []string
	// creditTxn holds uuid.Nil for no credit (NULL in the row): a slice of
	// pointers would be encoded value by value through database/sql's
	// Valuer, an order of magnitude slower.
	creditTxn                  []uuid.UUID
	warranty, created, updated []time.Time
	review                     []bool
	// reasons are the review reasons joined by commas (identifiers without
	// one): unnest cannot carry a list per row.
	reasons []string
}

func (c *referralCols) add(r *referral.Referral) {
	c.merchant = append(c.merchant, r.MerchantID)
	c.id = append(c.id, r.ID)
	c.member = append(c.member, r.MemberID)
	c.source = append(c.source, r.Source)
	c.order = append(c.order, r.OrderID)
	c.email = append(c.email, r.RefereeEmail)
	c.name = append(c.name, r.RefereeName)
	c.external = append(c.external, r.RefereeExternalID)
	c.coupon = append(c.coupon, r.CouponUsed)
	c.orderValue = append(c.orderValue, r.OrderValue)
	c.reward = append(c.reward, r.RewardAmount)
	c.status = append(c.status, r.Status)
	c.reason = append(c.reason, r.RejectionReason)
	c.notes = append(c.notes, r.Notes)
	c.unrecovered = append(c.unrecovered, r.UnrecoveredAmount)
	c.creditTxn = append(c.creditTxn, r.CreditTxnID)
	c.warranty = append(c.warranty, r.WarrantyExpiresAt)
	c.created = append(c.created, r.CreatedAt)
	c.updated = append(c.updated, r.UpdatedAt)
	c.review = append(c.review, r.ReviewRequired)
	c.reasons = append(c.reasons, strings.Join(r.ReviewReasons, ","))
}

func queueNewTransactions(b *pgx.Batch, book *ledger.Book) {
	if n := len(book.NewTransactions); n > 0 {
		merchant, id, member, ref := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
		typ, status, desc, refType := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		amount := make([]int64, n)
		created, updated := make([]time.Time, n), make([]time.Time, n)
		for i, t := range book.NewTransactions {
			merchant[i], id[i], member[i], ref[i] = t.MerchantID, t.ID, t.MemberID, t.ReferenceID
			typ[i], status[i], desc[i], refType[i] = t.Type, t.Status, t.Description, t.ReferenceType
			amount[i], created[i], updated[i] = t.Amount, t.CreatedAt, t.UpdatedAt
		}
		b.Queue(`INSERT INTO wallet_transactions (merchant_id, id, member_id, type, status, amount, description,
  reference_type, reference_id, created_at, updated_at)
SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::bigint[], $7::text[],
  $8::text[], $9::uuid[], $10::timestamptz[], $11::timestamptz[])`,
			merchant, id, member, typ, status, amount, desc, refType, ref, created, updated)
	}
}

func queueChangedTransactions(b *pgx.Batch, book *ledger.Book) {
	if n := len(book.ChangedTransactions); n > 0 {
		merchant, id := make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n)
		status, updated := make([]string, 0, n), make([]time.Time, 0, n)
		for _, t := range book.ChangedTransactions {
			merchant, id = append(merchant, t.MerchantID), append(id, t.ID)
			status, updated = append(status, t.Status), append(updated, t.UpdatedAt)
		}
		b.Queue(`UPDATE wallet_transactions t SET status = u.status, updated_at = u.updated
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[]) AS u(merchant_id, id, status, updated)
WHERE t.merchant_id = u.merchant_id AND t.id = u.id`, merchant, id, status, updated)
	}
}

func queueEntries(b *pgx.Batch, book *ledger.Book) {
	n := len(book.Entries)
	if n == 0 {
		return
	}
	merchant, id, member, ref, txn := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
	typ, desc, refType, cmd := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	amount, pd, ad, pa, aa := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	created := make([]time.Time, n)
	for i, e := range book.Entries {
		merchant[i], id[i], member[i], ref[i], txn[i] = e.MerchantID, e.ID, e.MemberID, e.ReferenceID, e.TransactionID
		typ[i], desc[i], refType[i], cmd[i] = e.Type, e.Description, e.ReferenceType, e.CommandID
		amount[i], pd[i], ad[i], pa[i], aa[i] = e.Amount, e.PendingDelta, e.AvailableDelta, e.PendingAfter, e.AvailableAfter
		created[i] = e.CreatedAt
	}
	b.Queue(`INSERT INTO ledger_entries (merchant_id, id, member_id, type, amount, pending_delta, available_delta,
  pending_after, available_after, description, reference_type, reference_id, transaction_id, command_id, created_at)
SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
  $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::uuid[], $13::uuid[], $14::text[], $15::timestamptz[])`,
		merchant, id, member, typ, amount, pd, ad, pa, aa, desc, refType, ref, txn, cmd, created)
}

// queueWallets writes the changed wallets, and the member stats the ledger
// keeps on them (ledger.MemberStats) as of now.
func queueWallets(b *pgx.Batch, book *ledger.Book, now time.Time) {
	n := len(book.ChangedWallets)
	if n == 0 {
		return
	}
	merchant, member := make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n)
	var pending, available, earned, redeemed, cancelled, version, monthReward []int64
	var updated, month []time.Time
	var monthSales []int32
	// Each member's recent referral times, unnest carrying no array per
	// row: all of them in one array, and each row's range of it (a slice
	// from..to, to = from-1 when empty). Sent as a text literal per row,
	// PostgreSQL parsed every time of every wallet.
	recent := []time.Time{} // not nil: pgx sends a nil slice as NULL
	var from, to []int32
	for k, w := range book.ChangedWallets {
		merchant, member = append(merchant, w.MerchantID), append(member, w.MemberID)
		pending, available = append(pending, w.Pending), append(available, w.Available)
		earned, redeemed = append(earned, w.TotalEarned), append(redeemed, w.TotalRedeemed)
		cancelled, version = append(cancelled, w.Cancelled), append(version, w.Version)
		updated = append(updated, w.UpdatedAt)
		st := book.Stats[k]
		if st == nil {
			st = &ledger.MemberStats{}
		}
		month, monthSales, monthReward = append(month, st.Month), append(monthSales, int32(st.MonthSales)), append(monthReward, st.MonthReward)
		from = append(from, int32(len(recent)+1))
		recent = append(recent, st.KeptRecent(now)...)
		to = append(to, int32(len(recent)))
	}
	b.Queue(`UPDATE wallets w SET pending = u.pending, available = u.available, total_earned = u.earned,
  total_redeemed = u.redeemed, cancelled = u.cancelled, version = u.version, updated_at = u.updated,
  stats_month = u.month, month_sales = u.month_sales, month_reward = u.month_reward,
  recent_referrals = ($13::timestamptz[])[u.recent_from:u.recent_to]
FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[],
  $8::bigint[], $9::timestamptz[], $10::timestamptz[], $11::int[], $12::bigint[], $14::int[], $15::int[])
  AS u(merchant_id, member_id, pending, available, earned, redeemed, cancelled, version, updated,
    month, month_sales, month_reward, recent_from, recent_to)
WHERE w.merchant_id = u.merchant_id AND w.member_id = u.member_id`,
		merchant, member, pending, available, earned, redeemed, cancelled, version, updated,
		month, monthSales, monthReward, recent, from, to)
}

func queueRedemptions(b *pgx.Batch, book *ledger.Book) error {
	isNew := map[uuid.UUID]bool{}
	for _, r := range book.NewRedemptions {
		isNew[r.ID] = true
		result, err := json.Marshal(r.Result)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO redemptions (merchant_id, id, member_id, amount, type, status, transaction_id, debit_txn_id,
  subscription_id, result, failure_reason, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			r.MerchantID, r.ID, r.MemberID, r.Amount, r.Type, r.Status, r.TransactionID, r.DebitTxnID,
			r.SubscriptionID, result, r.FailureReason, r.CreatedAt, r.UpdatedAt)
	}
	for _, r := range book.ChangedRedemptions {
		if isNew[r.ID] {
			continue
		}
		result, err := json.Marshal(r.Result)
		if err != nil {
			return err
		}
		b.Queue(`UPDATE redemptions SET status = $3, result = $4, failure_reason = $5, updated_at = $6
WHERE merchant_id = $1 AND id = $2`, r.MerchantID, r.ID, r.Status, result, r.FailureReason, r.UpdatedAt)
	}
	return nil
}
