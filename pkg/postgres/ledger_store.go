package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// LedgerStore loads and writes the ledger's Book. It is used only by the
// ledger worker: the only writer of wallet tables.
type LedgerStore struct {
	pool    *pgxpool.Pool
	now     func() time.Time
	wallets *knownWallets
}

// NewLedgerStore returns a LedgerStore whose timestamps come from now.
func NewLedgerStore(pool *pgxpool.Pool, now func() time.Time) *LedgerStore {
	return &LedgerStore{pool: pool, now: now, wallets: newKnownWallets()}
}

// ApplyBatch applies cmds in one transaction (ledger.ApplyBatch: load,
// apply, write, with one statement per table).
func (s *LedgerStore) ApplyBatch(ctx context.Context, cmds []ledger.Command) (*ledger.Book, error) {
	return ledger.ApplyBatch(ctx, s, cmds)
}

// Now is the clock of the ledger's timestamps.
func (s *LedgerStore) Now() time.Time { return s.now() }

// InTx runs fn in one transaction.
func (s *LedgerStore) InTx(ctx context.Context, fn func(ledger.Tx) error) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(ledgerTx{tx: tx, now: s.now, wallets: s.wallets}) })
}

var _ ledger.Transactor = (*LedgerStore)(nil)

// ledgerTx is a transaction of the ledger (ledger.Tx).
type ledgerTx struct {
	tx      pgx.Tx
	now     func() time.Time
	wallets *knownWallets
}

type keyLists struct {
	merchants, members        []uuid.UUID // wallets, sorted
	cmdMerchants              []uuid.UUID
	cmdIDs                    []string
	orderMerchants            []uuid.UUID
	orderSources, orderIDs    []string
	refMerchants, referralIDs []uuid.UUID
	redMerchants, redemptions []uuid.UUID
}

func collectKeys(cmds []ledger.Command) keyLists {
	var k keyLists
	seen := map[ledger.ScopedID]bool{}
	var mk []ledger.ScopedID
	for _, c := range cmds {
		key := ledger.ScopedID{MerchantID: c.MerchantID, ID: c.MemberID}
		if !seen[key] {
			seen[key] = true
			mk = append(mk, key)
		}
		k.cmdMerchants = append(k.cmdMerchants, c.MerchantID)
		k.cmdIDs = append(k.cmdIDs, c.ID)
		if c.Sale != nil {
			k.orderMerchants = append(k.orderMerchants, c.MerchantID)
			k.orderSources = append(k.orderSources, c.Sale.Source)
			k.orderIDs = append(k.orderIDs, c.Sale.OrderID)
		}
		if c.Result != nil {
			k.redMerchants = append(k.redMerchants, c.MerchantID)
			k.redemptions = append(k.redemptions, c.Result.RedemptionID)
		}
		if c.ReferralID != uuid.Nil {
			k.refMerchants = append(k.refMerchants, c.MerchantID)
			k.referralIDs = append(k.referralIDs, c.ReferralID)
		}
	}
	sort.Slice(mk, func(i, j int) bool {
		if mk[i].MerchantID != mk[j].MerchantID {
			return lessUUID(mk[i].MerchantID, mk[j].MerchantID)
		}
		return lessUUID(mk[i].ID, mk[j].ID)
	})
	for _, m := range mk {
		k.merchants = append(k.merchants, m.MerchantID)
		k.members = append(k.members, m.ID)
	}
	return k
}

func lessUUID(a, b uuid.UUID) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

const (
	// batchMembers are the members of the batch's keys, $1 (merchants) and
	// $2 (ids), found by one primary-key probe each. OFFSET 0 keeps the
	// subquery a lateral probe: joined freely, the planner hashed the keys
	// against a sequential scan of every member of the table, and chose to
	// whenever the members' statistics were fresh or the table small — a
	// millisecond a batch at 5,000 members, the batch's dearest statement.
	batchMembers = `unnest($1::uuid[], $2::uuid[]) AS k(merchant_id, member_id)
CROSS JOIN LATERAL (
  SELECT m.merchant_id, m.id, m.email, m.name, m.status, m.campaign_id, m.document, m.erased_at
  FROM members m WHERE m.merchant_id = k.merchant_id AND m.id = k.member_id OFFSET 0) m`
	sqlEnsureWallets = `
INSERT INTO wallets (merchant_id, member_id)
SELECT m.merchant_id, m.id FROM ` + batchMembers + `
ORDER BY 1, 2
ON CONFLICT DO NOTHING`
	// The wallets, and with them the member stats the ledger keeps on them
	// (ledger.MemberStats). When the kept referral times are full within
	// the hour ($3 of them, the oldest at or after $4) and the velocity
	// limit that applies to the member (campaign.Rules.ReferralsPerHour) is
	// above them, the hour's referrals are counted: a range of the
	// referrals_member index. A creator exempt from velocity, or any
	// member whose limit the kept times already reach, skips that count:
	// for a creator selling 2,000 an hour it was half a millisecond of
	// every batch, with her wallet locked.
	sqlLockWallets = `
SELECT w.merchant_id, w.member_id, w.pending, w.available, w.total_earned, w.total_redeemed, w.cancelled, w.version, w.updated_at,
  w.stats_month, w.month_sales, w.month_reward, w.recent_referrals,
  CASE WHEN cardinality(w.recent_referrals) >= $3 AND w.recent_referrals[1] >= $4::timestamptz AND
    (SELECT CASE WHEN EXISTS (SELECT 1 FROM creator_profiles p WHERE p.merchant_id = m.merchant_id AND p.member_id = m.id)
       THEN c.max_creator_referrals_per_hour ELSE c.max_referrals_per_hour END
     FROM members m JOIN campaigns c ON c.merchant_id = m.merchant_id AND c.id = m.campaign_id
     WHERE m.merchant_id = w.merchant_id AND m.id = w.member_id) > $3 THEN
    (SELECT count(*)::int FROM referrals r
     WHERE r.merchant_id = w.merchant_id AND r.member_id = w.member_id AND r.created_at >= $4::timestamptz)
  END
FROM wallets w JOIN unnest($1::uuid[], $2::uuid[]) AS k(merchant_id, member_id)
  ON w.merchant_id = k.merchant_id AND w.member_id = k.member_id
ORDER BY w.merchant_id, w.member_id
FOR UPDATE OF w`
	// Members first (batchMembers), then their campaigns: left to itself
	// the planner started from the (tiny) campaigns table and walked every
	// member of the merchant, 19 ms a batch at 5,000 members.
	// The fraud rules read the member's document and the campaign's rules;
	// a creator profile makes the campaign's tiers and its creator velocity
	// limit apply (decision 21, issue 20), read here at no extra trip; an
	// erased member attributes nothing (referral.MemberErased).
	// A creator's row also carries her campaign's tiers, in order, as a
	// JSON array (decodeTiers); a statement of their own was planned at
	// every batch to find none for most.
	sqlLoadMembers = `
WITH m AS MATERIALIZED (SELECT m.*,
    EXISTS (SELECT 1 FROM creator_profiles p WHERE p.merchant_id = m.merchant_id AND p.member_id = m.id) AS creator
  FROM ` + batchMembers + `)
SELECT m.merchant_id, m.id, m.email, m.name, m.status, m.campaign_id, m.document, m.erased_at, m.creator,
       c.reward_type, c.reward_value, c.warranty_days, c.min_redemption, c.is_active,
       c.max_referrals_per_hour, c.max_creator_referrals_per_hour, c.max_reward_per_month, c.block_disposable_emails,
       CASE WHEN m.creator THEN (SELECT json_agg(json_build_object('name', t.name, 'min_sales', t.min_sales, 'commission_bp', t.commission_bp) ORDER BY t.position)
         FROM campaign_tiers t WHERE t.merchant_id = m.merchant_id AND t.campaign_id = m.campaign_id) END
FROM m JOIN campaigns c ON c.merchant_id = m.merchant_id AND c.id = m.campaign_id`
	sqlLoadProcessed = `
SELECT p.merchant_id, p.command_id FROM unnest($1::uuid[], $2::text[]) AS k(merchant_id, command_id)
JOIN processed_commands p ON p.merchant_id = k.merchant_id AND p.command_id = k.command_id`
	referralColumns = `r.merchant_id, r.id, r.member_id, r.source, r.order_id, r.referee_email, r.referee_name,
  r.referee_external_id, r.coupon_used, r.order_value, r.reward_amount, r.status, r.rejection_reason, r.notes,
  r.unrecovered_amount, r.credit_txn_id, r.warranty_expires_at, r.created_at, r.updated_at, r.review_required,
  r.review_reasons`
	// The keys are resolved to primary keys first (a join on the order
	// index, and the ids given): an OR of the two lists made the planner
	// scan the whole table on every batch.
	sqlLoadReferrals = `
SELECT ` + referralColumns + `, t.status, t.amount, t.created_at
FROM referrals r
LEFT JOIN wallet_transactions t ON t.merchant_id = r.merchant_id AND t.id = r.credit_txn_id
WHERE (r.merchant_id, r.id) IN (
  SELECT o.merchant_id, o.id FROM unnest($1::uuid[], $2::text[], $3::text[]) AS k(merchant_id, source, order_id)
  JOIN referrals o ON o.merchant_id = k.merchant_id AND o.source = k.source AND o.order_id = k.order_id
  UNION ALL
  SELECT * FROM unnest($4::uuid[], $5::uuid[]))
FOR UPDATE OF r`
	sqlLoadRedemptions = `
SELECT r.merchant_id, r.id, r.member_id, r.amount, r.type, r.status, r.transaction_id, r.debit_txn_id,
  r.subscription_id, r.result, r.failure_reason, r.created_at, r.updated_at, t.status, t.created_at
FROM redemptions r
JOIN wallet_transactions t ON t.merchant_id = r.merchant_id AND t.id = r.debit_txn_id
WHERE (r.merchant_id, r.id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
FOR UPDATE OF r`
)

// Load runs every read of the batch in one pipelined round trip. The
// server executes them in order inside the transaction: the wallet rows are
// created and locked first, which serialises every batch that touches a
// member, so the processed-command check after them sees any concurrent
// commit.
func (t ledgerTx) Load(ctx context.Context, book *ledger.Book, cmds []ledger.Command) error {
	k := collectKeys(cmds)
	b := &pgx.Batch{}
	newMerchants, newMembers := t.wallets.unknown(k.merchants, k.members)
	if len(newMembers) > 0 {
		b.Queue(sqlEnsureWallets, newMerchants, newMembers)
	}
	now := t.now()
	b.Queue(sqlLockWallets, k.merchants, k.members, ledger.RecentKept, ledger.HourStart(now))
	b.Queue(sqlLoadMembers, k.merchants, k.members)
	b.Queue(sqlLoadProcessed, k.cmdMerchants, k.cmdIDs)
	b.Queue(sqlLoadReferrals, k.orderMerchants, k.orderSources, k.orderIDs, k.refMerchants, k.referralIDs)
	loads := []func(pgx.BatchResults, *ledger.Book) error{loadMembers, loadProcessed, loadReferrals}
	if len(k.redemptions) > 0 { // only a redemption's result reads one
		b.Queue(sqlLoadRedemptions, k.redMerchants, k.redemptions)
		loads = append(loads, loadRedemptions)
	}
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if len(newMembers) > 0 {
		if _, err := res.Exec(); err != nil {
			return fmt.Errorf("ensure wallets: %w", err)
		}
	}
	if err := loadWallets(res, book, now); err != nil {
		return err
	}
	for _, load := range loads {
		if err := load(res, book); err != nil {
			return err
		}
	}
	if err := res.Close(); err != nil {
		return err
	}
	if err := t.wallets.checkKnown(book); err != nil {
		return err
	}
	t.wallets.remember(book)
	return nil
}

func loadWallets(res pgx.BatchResults, book *ledger.Book, now time.Time) error {
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("lock wallets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		w := &ledger.Wallet{}
		st := &ledger.MemberStats{}
		var hourCount *int
		if err := rows.Scan(&w.MerchantID, &w.MemberID, &w.Pending, &w.Available, &w.TotalEarned,
			&w.TotalRedeemed, &w.Cancelled, &w.Version, &w.UpdatedAt,
			&st.Month, &st.MonthSales, &st.MonthReward, &st.Recent, &hourCount); err != nil {
			return err
		}
		st.Roll(now, hourCount)
		k := ledger.ScopedID{MerchantID: w.MerchantID, ID: w.MemberID}
		book.Wallets[k] = w
		book.Stats[k] = st
	}
	return rows.Err()
}

func loadMembers(res pgx.BatchResults, book *ledger.Book) error {
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("load members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m := &member.Member{}
		c := &campaign.Campaign{}
		var isCreator bool
		var erasedAt *time.Time
		var tiers []byte
		if err := rows.Scan(&m.MerchantID, &m.ID, &m.Email, &m.Name, &m.Status, &m.CampaignID, &m.Document, &erasedAt, &isCreator,
			&c.RewardType, &c.RewardValue, &c.WarrantyDays, &c.MinRedemption, &c.IsActive,
			&c.MaxReferralsPerHour, &c.MaxCreatorReferralsPerHour, &c.MaxRewardPerMonth, &c.BlockDisposableEmails,
			&tiers); err != nil {
			return err
		}
		if erasedAt != nil {
			m.ErasedAt = *erasedAt
		}
		c.ID, c.MerchantID = m.CampaignID, m.MerchantID
		book.Members[ledger.ScopedID{MerchantID: m.MerchantID, ID: m.ID}] = m
		if isCreator {
			book.Creators[ledger.ScopedID{MerchantID: m.MerchantID, ID: m.ID}] = true
		}
		campaignKey := ledger.ScopedID{MerchantID: m.MerchantID, ID: c.ID}
		book.Campaigns[campaignKey] = c
		if tiers != nil {
			ts, err := decodeTiers(tiers)
			if err != nil {
				return fmt.Errorf("load tiers: %w", err)
			}
			book.Tiers[campaignKey] = ts
		}
	}
	return rows.Err()
}

// decodeTiers reads a campaign's tiers as sqlLoadMembers aggregates them.
func decodeTiers(raw []byte) (creator.Tiers, error) {
	var rows []struct {
		Name         string `json:"name"`
		MinSales     int    `json:"min_sales"`
		CommissionBP int    `json:"commission_bp"`
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, err
	}
	ts := make(creator.Tiers, len(rows))
	for i, r := range rows {
		ts[i] = creator.Tier{Name: r.Name, MinSales: r.MinSales, CommissionBP: r.CommissionBP}
	}
	return ts, nil
}

func loadProcessed(res pgx.BatchResults, book *ledger.Book) error {
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("load processed commands: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k ledger.ProcessedKey
		if err := rows.Scan(&k.MerchantID, &k.CommandID); err != nil {
			return err
		}
		book.Processed[k] = true
	}
	return rows.Err()
}

func loadReferrals(res pgx.BatchResults, book *ledger.Book) error {
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("load referrals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r := &referral.Referral{}
		var creditTxn *uuid.UUID
		var txnStatus *string
		var txnAmount *int64
		var txnCreated *time.Time
		if err := rows.Scan(append(referralDest(r, &creditTxn), &txnStatus, &txnAmount, &txnCreated)...); err != nil {
			return err
		}
		book.AddReferral(r)
		if creditTxn != nil && txnStatus != nil {
			r.CreditTxnID = *creditTxn
			book.Transactions[*creditTxn] = &ledger.Transaction{
				ID: *creditTxn, MerchantID: r.MerchantID, MemberID: r.MemberID, Type: ledger.TxnCredit,
				Status: *txnStatus, Amount: *txnAmount, CreatedAt: *txnCreated,
			}
		}
	}
	return rows.Err()
}

// Write writes every change and outbox record of the book, one
// statement per table, in one round trip.
func (t ledgerTx) Write(ctx context.Context, book *ledger.Book) error {
	if book.Empty() {
		return nil
	}
	if err := book.EncodeEvents(); err != nil {
		return err
	}
	b := &pgx.Batch{}
	// The inserts select from unnest($arrays) and join nothing: no plan
	// of theirs depends on the arrays, so each is planned once per
	// connection instead of at every transaction (planning was a ninth of
	// the statements' time in a sales run). The statements that join a table
	// keep a plan made for their arrays (NewPool).
	b.Queue(`SET LOCAL plan_cache_mode = force_generic_plan`)
	now := t.now()
	queueOutcomes(b, book, now)
	queueNewReferrals(b, book)
	queueNewTransactions(b, book)
	queueEntries(b, book)
	queueOutbox(b, book.Records)
	queueDeliveries(b, book.Deliveries)
	b.Queue(`SET LOCAL plan_cache_mode = force_custom_plan`)
	queueChangedReferrals(b, book)
	queueChangedTransactions(b, book)
	queueWallets(b, book, now)
	if err := queueRedemptions(b, book); err != nil {
		return err
	}
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write ledger batch: %w", err)
	}
	return nil
}

func queueOutcomes(b *pgx.Batch, book *ledger.Book, now time.Time) {
	n := len(book.Outcomes)
	merchants, members := make([]uuid.UUID, n), make([]uuid.UUID, n)
	cmdIDs, kinds, statuses, codes := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	results := make([]string, n)
	for i, o := range book.Outcomes {
		merchants[i] = o.MerchantID
		members[i], cmdIDs[i], kinds[i], statuses[i], codes[i] = o.MemberID, o.CommandID, o.Kind, o.Status, o.ErrorCode
		results[i] = resultJSON(o)
	}
	// processed_at is the ledger's clock, as every time the ledger writes:
	// the retention sweep compares it with the scheduler's.
	b.Queue(`INSERT INTO processed_commands (merchant_id, command_id, member_id, kind, outcome, error_code, result, processed_at)
SELECT *, $8::timestamptz FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::jsonb[])`,
		merchants, cmdIDs, members, kinds, statuses, codes, results, now)
}

func resultJSON(o ledger.Outcome) string {
	body := map[string]any{"reason": o.Reason}
	if len(o.Result) > 0 {
		body["data"] = json.RawMessage(o.Result)
	}
	raw, _ := json.Marshal(body)
	return string(raw)
}

func loadRedemptions(res pgx.BatchResults, book *ledger.Book) error {
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("load redemptions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r := &redemption.Redemption{}
		var result []byte
		var txnStatus string
		var txnCreated time.Time
		if err := rows.Scan(&r.MerchantID, &r.ID, &r.MemberID, &r.Amount, &r.Type, &r.Status, &r.TransactionID,
			&r.DebitTxnID, &r.SubscriptionID, &result, &r.FailureReason, &r.CreatedAt, &r.UpdatedAt,
			&txnStatus, &txnCreated); err != nil {
			return err
		}
		_ = json.Unmarshal(result, &r.Result)
		book.Redemptions[ledger.ScopedID{MerchantID: r.MerchantID, ID: r.ID}] = r
		book.Transactions[r.DebitTxnID] = &ledger.Transaction{ID: r.DebitTxnID, MerchantID: r.MerchantID,
			MemberID: r.MemberID, Type: ledger.TxnDebit, Status: txnStatus, Amount: r.Amount, CreatedAt: txnCreated}
	}
	return rows.Err()
}
