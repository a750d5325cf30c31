package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CheckLedger verifies the ledger invariants for every wallet and returns
// an error naming the first violations: the snapshot equals the sum of its
// entries, available + pending = total_earned − total_redeemed, and the
// public transactions agree with the snapshot (decision 18); and the member
// stats kept on the wallet (ledger.MemberStats) equal the referrals of the
// month they name.
func CheckLedger(ctx context.Context, pool *pgxpool.Pool) error {
	if err := checkBalances(ctx, pool); err != nil {
		return err
	}
	return checkMemberStats(ctx, pool)
}

func checkBalances(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, `
WITH e AS (
  SELECT merchant_id, member_id, sum(pending_delta) AS pending, sum(available_delta) AS available
  FROM ledger_entries GROUP BY 1, 2
), t AS (
  SELECT merchant_id, member_id,
    COALESCE(sum(amount) FILTER (WHERE type = 'credit' AND status = 'pending'), 0) AS pending,
    COALESCE(sum(amount) FILTER (WHERE type = 'credit' AND status NOT IN ('cancelled', 'reversed')), 0) AS earned,
    COALESCE(sum(amount) FILTER (WHERE type = 'debit' AND status <> 'cancelled'), 0) AS redeemed
  FROM wallet_transactions GROUP BY 1, 2
)
SELECT w.merchant_id, w.member_id, w.pending, w.available, w.total_earned, w.total_redeemed,
  COALESCE(e.pending, 0), COALESCE(e.available, 0), COALESCE(t.pending, 0), COALESCE(t.redeemed, 0)
FROM wallets w
LEFT JOIN e ON e.merchant_id = w.merchant_id AND e.member_id = w.member_id
LEFT JOIN t ON t.merchant_id = w.merchant_id AND t.member_id = w.member_id
WHERE w.pending <> COALESCE(e.pending, 0) OR w.available <> COALESCE(e.available, 0)
   OR w.available + w.pending <> w.total_earned - w.total_redeemed
   OR w.pending <> COALESCE(t.pending, 0) OR w.total_redeemed <> COALESCE(t.redeemed, 0)
LIMIT 5`)
	return violations(rows, err, "ledger invariant violated", func(row pgx.CollectableRow) (string, error) {
		var merchant, member string
		var p, a, earned, redeemed, ep, ea, tp, tr int64
		err := row.Scan(&merchant, &member, &p, &a, &earned, &redeemed, &ep, &ea, &tp, &tr)
		return fmt.Sprintf("member %s: snapshot pending=%d available=%d earned=%d redeemed=%d; entries pending=%d available=%d; transactions pending=%d redeemed=%d",
			member, p, a, earned, redeemed, ep, ea, tp, tr), err
	})
}

func checkMemberStats(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, `
SELECT w.member_id, w.stats_month, w.month_sales, w.month_reward, s.sales, s.reward
FROM wallets w
CROSS JOIN LATERAL (
  SELECT count(*) AS sales, COALESCE(sum(r.reward_amount), 0) AS reward
  FROM referrals r
  WHERE r.merchant_id = w.merchant_id AND r.member_id = w.member_id AND r.status IN ('pending', 'approved')
    AND r.created_at >= w.stats_month
    AND r.created_at < (w.stats_month AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC'
) s
WHERE w.stats_month > 'epoch' AND (w.month_sales <> s.sales OR w.month_reward <> s.reward)
LIMIT 5`)
	return violations(rows, err, "member stats invariant violated", func(row pgx.CollectableRow) (string, error) {
		var member string
		var month time.Time
		var sales, countedSales, reward, countedReward int64
		err := row.Scan(&member, &month, &sales, &reward, &countedSales, &countedReward)
		return fmt.Sprintf("member %s, month %s: kept sales=%d reward=%d; referrals sales=%d reward=%d",
			member, month.UTC().Format("2006-01"), sales, reward, countedSales, countedReward), err
	})
}

// violations describes each row of a check's query (the rows it found
// breaking an invariant) and returns them as one error named what, or nil
// when there are none.
func violations(rows pgx.Rows, err error, what string, describe pgx.RowToFunc[string]) error {
	if err != nil {
		return err
	}
	bad, err := pgx.CollectRows(rows, describe)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %v", what, bad)
	}
	return nil
}
