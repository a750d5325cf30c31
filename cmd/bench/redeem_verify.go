package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
)

// walletFigure is what a redemption moves in a wallet.
type walletFigure struct {
	Available, Redeemed int64
}

// walletFigures returns the available and redeemed totals of every wallet
// of the merchant.
func walletFigures(ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID) (map[uuid.UUID]walletFigure, error) {
	rows, err := pool.Query(ctx, `SELECT member_id, available, total_redeemed FROM wallets WHERE merchant_id = $1`, merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uuid.UUID]walletFigure{}
	for rows.Next() {
		var id uuid.UUID
		var f walletFigure
		if err := rows.Scan(&id, &f.Available, &f.Redeemed); err != nil {
			return nil, err
		}
		out[id] = f
	}
	return out, rows.Err()
}

// verifyRedeems checks that every redeemed amount left the wallets exactly
// once: each wallet's available fell, and its total redeemed rose, by
// rewardCents × its redemptions (before is the snapshot taken after
// funding); the merchant has exactly one completed redemption of
// rewardCents per request and as many debits, all used; Yampi was asked
// once for each redemption's coupon and for nothing else, and the answers
// carried those coupons; and the ledger invariants hold
// (postgres.CheckLedger).
func verifyRedeems(ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID, before map[uuid.UUID]walletFigure,
	perMember map[uuid.UUID]int64, l *redeemLoad, y *fakeYampi) (verification, error) {
	var v verification
	problem := func(format string, args ...any) { v.Problems = append(v.Problems, fmt.Sprintf(format, args...)) }
	n := int64(len(l.Coupons))

	after, err := walletFigures(ctx, pool, merchantID)
	if err != nil {
		return v, err
	}
	wrong, left := 0, int64(0)
	for id, a := range after {
		b, k := before[id], perMember[id]
		left += b.Available - a.Available
		if a.Available != b.Available-k*rewardCents || a.Redeemed != b.Redeemed+k*rewardCents {
			if wrong++; wrong <= 5 {
				problem("member %s: available %d → %d, redeemed %d → %d, want −%d and +%d", id, b.Available, a.Available,
					b.Redeemed, a.Redeemed, k*rewardCents, k*rewardCents)
			}
		}
	}
	if wrong > 5 {
		problem("… %d wallets wrong in all", wrong)
	}
	if left != n*rewardCents {
		problem("the wallets' available fell by %d in all, want %d", left, n*rewardCents)
	}

	codes := map[string]bool{} // coupon codes of the completed redemptions
	rows, err := pool.Query(ctx, `SELECT id, status, amount, type FROM redemptions WHERE merchant_id = $1`, merchantID)
	if err != nil {
		return v, err
	}
	var total, odd int64
	for rows.Next() {
		var id uuid.UUID
		var status, typ string
		var amount int64
		if err := rows.Scan(&id, &status, &amount, &typ); err != nil {
			rows.Close()
			return v, err
		}
		total++
		if status != redemption.StatusCompleted || amount != rewardCents || typ != redemption.TypeStoreCredit {
			odd++
			continue
		}
		codes[redemption.CouponCodeFor(y.codeKey, id)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return v, err
	}
	if total != n || odd > 0 {
		problem("%d redemptions recorded (%d not completed store credits of %d), want %d completed", total, odd, rewardCents, n)
	}

	var debits, debited, used int64
	if err := pool.QueryRow(ctx, `SELECT count(*), COALESCE(sum(amount), 0) FROM ledger_entries WHERE merchant_id = $1 AND type = 'debit'`,
		merchantID).Scan(&debits, &debited); err != nil {
		return v, err
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM wallet_transactions WHERE merchant_id = $1 AND type = 'debit' AND status = 'used'`,
		merchantID).Scan(&used); err != nil {
		return v, err
	}
	if debits != n || debited != n*rewardCents || used != n {
		problem("%d debit entries of %d cents in all and %d used debit transactions, want %d, %d and %d",
			debits, debited, used, n, n*rewardCents, n)
	}

	asked, values, rejected, examples := y.seen()
	if rejected > 0 {
		problem("the fake Yampi refused %d requests, e.g. %q", rejected, examples)
	}
	twice, unknown := 0, 0
	for code, times := range asked {
		if times != 1 {
			twice++
		}
		if !codes[code] || values[code] != money.FormatReais(rewardCents) {
			unknown++
		}
	}
	if len(asked) != len(codes) || twice > 0 || unknown > 0 {
		problem("Yampi was asked for %d coupons (%d more than once, %d not of a completed redemption of %s), want one for each of %d",
			len(asked), twice, unknown, money.FormatReais(rewardCents), len(codes))
	}
	for j, code := range l.Coupons {
		if code != "" && !codes[code] {
			problem("redemption %d was answered with coupon %s, which no completed redemption has", j, code)
			break
		}
	}

	if err := postgres.CheckLedger(ctx, pool); err != nil {
		problem("CheckLedger: %v", err)
	}
	return v, nil
}
