package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redemption"
)

// CouponStore is the provisioner's side of the coupon_provisions table
// (postgres.CouponStore).
type CouponStore interface {
	ClaimCoupons(ctx context.Context, limit int, lease time.Duration) ([]redemption.CouponJob, error)
	FinishCoupon(ctx context.Context, j redemption.CouponJob, o redemption.CouponOutcome) error
	ReleaseCoupon(ctx context.Context, j redemption.CouponJob) error
}

// CouponPlatform makes one try at a coupon (*redemption.Executor).
type CouponPlatform interface {
	ProvisionCoupon(ctx context.Context, provider string, settings merchant.Integration,
		req redemption.CouponRequest) (redemption.CouponResult, error)
}

// Provisioner puts members' codes at the platforms as coupons carrying the
// referee discount (docs/platforms.md "Referee coupons"). The request path only
// writes rows (postgres.CouponStore); the provisioner, in the dispatcher,
// polls for due rows, leases them (so that several dispatchers share them
// and a dead one's rows come back when the lease ends), makes one try each
// and writes the outcome: provisioned, not_configured, failed, or pending
// again with the next try scheduled in the row by Retry (5xx, 429, network
// errors), so retries survive restarts and hold nothing in memory.
//
// A try whose answer is lost (a crash after the platform made the coupon)
// is repeated; the platform then answers that the code exists and the
// coupon is adopted, never duplicated.
type Provisioner struct {
	Store        CouponStore
	Integrations redemption.IntegrationFinder
	Platforms    CouponPlatform
	Retry        redemption.RetryPolicy
	Log          *zap.Logger
	Now          func() time.Time
	// Interval is the pause between polls that found less than a batch
	// [1 s]. Lease is how long a claimed row is the provisioner's [2 min]:
	// longer than a try, which is up to three requests of at most 10 s.
	// Batch is the most rows claimed at once [32], carried out Concurrency
	// at a time [8].
	Interval, Lease    time.Duration
	Batch, Concurrency int
}

func (p *Provisioner) defaults() {
	if p.Interval <= 0 {
		p.Interval = time.Second
	}
	if p.Lease <= 0 {
		p.Lease = 2 * time.Minute
	}
	if p.Batch <= 0 {
		p.Batch = 32
	}
	if p.Concurrency <= 0 {
		p.Concurrency = 8
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Log == nil {
		p.Log = zap.NewNop()
	}
}

// Run polls until ctx ends. A database error is logged and the poll is
// repeated after the interval; it never stops the dispatcher.
func (p *Provisioner) Run(ctx context.Context) error {
	p.defaults()
	for {
		n, err := p.Tick(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			p.Log.Warn("coupon provisioning poll failed", zap.Error(err))
		}
		if n == p.Batch && err == nil {
			continue // more may be due
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.Interval):
		}
	}
}

// Tick claims the rows due now, carries them out, and returns how many it
// claimed. The first error of a row (a database error) is returned after
// every row was tried; the row comes back when its lease ends.
func (p *Provisioner) Tick(ctx context.Context) (int, error) {
	p.defaults()
	jobs, err := p.Store.ClaimCoupons(ctx, p.Batch, p.Lease)
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	g := errgroup.Group{}
	g.SetLimit(p.Concurrency)
	for _, j := range jobs {
		g.Go(func() error { return p.carryOut(ctx, j) })
	}
	return len(jobs), g.Wait()
}

// carryOut makes one try at a job and writes its outcome. When ctx ends
// during the try, what the platform did is unknown: the lease is released
// without an outcome, and the next try adopts the coupon if it was made.
func (p *Provisioner) carryOut(ctx context.Context, j redemption.CouponJob) error {
	settings, err := p.Integrations.FindIntegration(ctx, j.MerchantID, j.Platform)
	found := err == nil
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return p.release(ctx, j, err)
	}
	var in merchant.Integration
	if found {
		in = *settings
	}
	outcome, skip := j.Skip(in, found)
	if !skip {
		res, err := p.Platforms.ProvisionCoupon(ctx, j.Platform, in,
			j.Request(p.Now(), fmt.Sprintf("convida-coupon-%s-%s-%d", j.MemberID, j.Platform, j.Version)))
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return p.release(ctx, j, err)
		}
		outcome = j.Outcome(res, err, p.Retry)
	}
	// Written even while the dispatcher stops: the platform answered.
	if err := p.Store.FinishCoupon(context.WithoutCancel(ctx), j, outcome); err != nil {
		return err
	}
	p.Log.Info("coupon provisioning", zap.String("merchant", j.MerchantID.String()), zap.String("member", ids.Format(ids.Member, j.MemberID)),
		zap.String("platform", j.Platform), zap.String("status", outcome.Status), zap.Int("attempts", outcome.Attempts),
		zap.String("coupon_id", outcome.CouponID), zap.String("error", outcome.Error))
	return nil
}

// release gives a job's row back at once, with no outcome, and returns
// cause (nil when ctx ended: stopping is not a failure).
func (p *Provisioner) release(ctx context.Context, j redemption.CouponJob, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := p.Store.ReleaseCoupon(rctx, j); err != nil {
		p.Log.Warn("coupon provisioning: releasing a row failed; it comes back when its lease ends", zap.Error(err))
	}
	if ctx.Err() != nil {
		return nil
	}
	return cause
}
