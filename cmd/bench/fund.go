package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Order id prefixes of the sales that fund the read and redeem phases
// (unmeasured); the sales phase's are orderID's.
const (
	readOrderPrefix   = "bench-read-"
	redeemOrderPrefix = "bench-redeem-"
)

// postSales posts one approved Guru sale per entry of members (an index
// into the tenant's members), order j with id prefix+j, through the
// ingest as the sales phase does, and waits until the ledger has credited
// all of them. contactBase keeps the buyers of each prefix apart. It is
// not measured; it returns how long it took.
func postSales(ctx context.Context, s *stack, t *tenant, o options, prefix string, contactBase int, members []int, stderr io.Writer) (time.Duration, error) {
	start, now := time.Now(), time.Now()
	bodies := make([][]byte, len(members))
	for j, m := range members {
		bodies[j] = saleBody(t.GuruToken, fmt.Sprintf("%s%07d", prefix, j), t.Coupons[m], contactBase+j, now)
	}
	snd := newSender(s.ingestURL, t, o.Concurrency)
	defer snd.close()
	bar := newBar(stderr, "funding", len(bodies))
	load := sendAll(ctx, snd, bodies, o.Concurrency, bar)
	_ = bar.Finish()
	if len(load.Failures) > 0 {
		return 0, fmt.Errorf("funding sales not accepted: %s", failureSummary(load.Failures))
	}
	bar = newBar(stderr, "credited", len(bodies))
	err := waitOrders(ctx, s, t.MerchantID, prefix, len(bodies), o.Timeout, bar)
	_ = bar.Finish()
	return time.Since(start), err
}

// waitOrders polls until want referrals of order ids starting with prefix
// exist, or timeout passes.
func waitOrders(ctx context.Context, s *stack, merchantID uuid.UUID, prefix string, want int, timeout time.Duration, bar progressBar) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := countOrders(ctx, s.pool, merchantID, prefix)
		if err != nil {
			return err
		}
		_ = bar.Set(n)
		if n >= want {
			return nil
		}
		if err := s.err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v with %d of %d funding sales credited", timeout, n, want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

func countOrders(ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID, prefix string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM referrals WHERE merchant_id = $1 AND starts_with(order_id, $2)`,
		merchantID, prefix).Scan(&n)
	return n, err
}
