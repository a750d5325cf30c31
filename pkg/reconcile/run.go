package reconcile

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/retry"
)

// DedupeTTL is how long the fast path remembers a sale the pull
// published: as long as the ingest remembers a webhook's (7 days).
const DedupeTTL = 7 * 24 * time.Hour

// HeaderRun, among a reconciliation delivery's kept headers, names the
// run that found it.
const HeaderRun = "X-Convida-Reconciliation"

// Reconciler starts and carries out runs.
type Reconciler struct {
	Store     Store
	Coupons   Coupons
	Publisher Publisher
	Dedupe    Dedupe    // optional
	Platforms Platforms // one per process
	Observer  Observer  // optional
	Log       *zap.Logger
	Now       func() time.Time

	// MaxDuration bounds a run (RECONCILE_MAX_DURATION); zero means
	// DefaultMaxDuration.
	MaxDuration time.Duration
	// MaxPages bounds the pages a run reads, of all its lists
	// (RECONCILE_MAX_PAGES); zero means DefaultMaxPages.
	MaxPages int
	// Cooldown is how long after the start of an integration's last run
	// a new one may be asked for (RECONCILE_COOLDOWN); zero: at once.
	Cooldown time.Duration
}

func (r *Reconciler) maxDuration() time.Duration {
	if r.MaxDuration > 0 {
		return r.MaxDuration
	}
	return DefaultMaxDuration
}

func (r *Reconciler) maxPages() int {
	if r.MaxPages > 0 {
		return r.MaxPages
	}
	return DefaultMaxPages
}

func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now().UTC()
	}
	return r.Now().UTC()
}

func (r *Reconciler) log() *zap.Logger {
	if r.Log == nil {
		return zap.NewNop()
	}
	return r.Log
}

// CheckWindow refuses a window that is empty, reversed or longer than the
// platform's pull takes at once (provider.Descriptor.PullWindow), as
// apperr.Invalid.
func CheckWindow(platform string, from, to time.Time) error {
	d, _ := provider.Lookup(platform)
	max := d.PullWindow
	switch {
	case from.IsZero() || to.IsZero() || !from.Before(to):
		return apperr.Errorf(apperr.Invalid, "from must be before to")
	case max > 0 && to.Sub(from) > max:
		return apperr.Errorf(apperr.Invalid, "a %s reconciliation covers at most %d days", platform, int(max/(24*time.Hour)))
	}
	return nil
}

// Begin records a new run of the merchant's integration over [from, to),
// running, and returns it. claimed says whether the caller runs it now
// (the scheduler) or asks the leading scheduler to claim it (the API and
// the dashboard: a request, audited, and refused within Cooldown of the
// start of the integration's last run). It is
// apperr.IntegrationNotConfigured when in has no pull credentials,
// apperr.Invalid for a bad window, apperr.RateLimited wrapping a
// *CooldownError for a request too soon after the last run, and
// apperr.Conflict when a run of the integration is running.
func (r *Reconciler) Begin(ctx context.Context, merchantID uuid.UUID, in merchant.Integration, from, to time.Time, claimed bool) (Run, error) {
	if !Configured(in) {
		return Run{}, apperr.Errorf(apperr.IntegrationNotConfigured, "the %s integration has no API credentials to pull its sales with", in.Provider)
	}
	if err := CheckWindow(in.Provider, from, to); err != nil {
		return Run{}, err
	}
	run := Run{ID: uuid.New(), MerchantID: merchantID, Provider: in.Provider, Status: StatusRunning,
		From: from.UTC(), To: to.UTC(), StartedAt: r.now()}
	if claimed {
		return run, r.Store.StartRun(ctx, run)
	}
	last, err := r.Store.RequestRun(ctx, run, run.StartedAt.Add(-max(r.Cooldown, 0)))
	switch {
	case err != nil:
		return Run{}, err
	case !last.IsZero():
		return Run{}, cooldown(in.Provider, r.Cooldown, last, run.StartedAt)
	}
	return run, nil
}

// Execute carries out run (running, claimed by the caller) against in and
// records its end; it returns the run as recorded. A pull that fails (the
// platform's 429, 5xx or timeouts past the retries of its page, a refused
// credential) ends the run failed with the error; so does one that
// reaches MaxDuration or MaxPages, and one whose ctx ends (the process
// stops, or the leader stops a run the stale sweep ended: ctx's cause is
// ErrStale). The sales published before stay published, and the next run
// skips them.
func (r *Reconciler) Execute(ctx context.Context, run Run, in merchant.Integration) Run {
	limit := r.maxDuration()
	runCtx, cancel := context.WithTimeoutCause(ctx, limit, tooLong(limit))
	defer cancel()
	err := r.pull(runCtx, &run, in)
	run.FinishedAt = r.now()
	run.Status = StatusSucceeded
	if err != nil {
		run.Status = StatusFailed
		reason, stopped := stopReason(ctx, runCtx, err)
		if !stopped {
			reason = r.Platforms.Describe(err)
		}
		run.Error = bounds.Cut(reason, MaxError)
		r.log().Warn("reconciliation failed", zap.String("merchant", run.MerchantID.String()),
			zap.String("provider", run.Provider), zap.String("run", ids.Format(ids.Reconciliation, run.ID)),
			zap.String("reason", run.Error), zap.Error(err))
	}
	// The end is written even when ctx ended, so that the run does not
	// wait for the stale sweep.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.Store.FinishRun(fctx, run); err != nil {
		r.log().Error("reconciliation end not recorded", zap.String("run", ids.Format(ids.Reconciliation, run.ID)), zap.Error(err))
	}
	if run.Status == StatusSucceeded && r.Observer != nil {
		r.Observer.Succeeded(run.Provider, run.FinishedAt)
	}
	r.log().Info("reconciliation finished", zap.String("merchant", run.MerchantID.String()), zap.String("provider", run.Provider),
		zap.String("run", ids.Format(ids.Reconciliation, run.ID)), zap.String("status", run.Status),
		zap.Int("seen", run.Seen), zap.Int("missing", run.Missing))
	return run
}

func (r *Reconciler) pull(ctx context.Context, run *Run, in merchant.Integration) error {
	if in.Provider != run.Provider {
		return apperr.Errorf(apperr.Unprocessable, "no pull for provider %q", run.Provider)
	}
	puller, err := r.Platforms.Puller(in)
	if err != nil {
		return err
	}
	pages, limit := 0, r.maxPages()
	return puller.Sales(ctx, inbound.Window{From: run.From, To: run.To}, func(sales []inbound.Sale) error {
		if pages++; pages > limit {
			return tooManyPages(limit)
		}
		if err := r.page(ctx, run, puller, sales); err != nil {
			return err
		}
		// Every page read, of every list: a run that moves on is alive.
		return r.Store.Heartbeat(ctx, *run, r.now())
	})
}

// pulled is a sale of a page and the order event its webhook would have
// carried.
type pulled struct {
	sale inbound.Sale
	ev   *inbound.OrderEvent
}

// page handles one page of the pull: the sales whose command the ledger
// has not applied are attributed and published.
func (r *Reconciler) page(ctx context.Context, run *Run, puller Puller, sales []inbound.Sale) error {
	run.Seen += len(sales)
	items := make([]pulled, 0, len(sales))
	evs := make([]*inbound.OrderEvent, 0, len(sales))
	for _, s := range sales {
		ev, ok := r.event(run, s)
		if ok {
			items = append(items, pulled{sale: s, ev: ev})
			evs = append(evs, ev)
		}
	}
	if len(items) == 0 {
		return nil
	}
	applied, err := r.Store.Applied(ctx, run.MerchantID, evs)
	if err != nil {
		return err
	}
	for _, it := range items {
		if applied[it.ev.DedupeKey] {
			continue
		}
		if err := r.publish(ctx, run, puller, it); err != nil {
			return err
		}
	}
	return nil
}

// event maps a pulled sale as its webhook would be mapped; false for a
// sale that could not be read whole, or that the webhook would ignore.
func (r *Reconciler) event(run *Run, s inbound.Sale) (*inbound.OrderEvent, bool) {
	if s.Problem != "" {
		r.log().Warn("pulled sale unreadable", zap.String("provider", run.Provider), zap.String("order", s.OrderID), zap.String("problem", s.Problem))
		return nil, false
	}
	at := s.ConfirmedAt
	if at.IsZero() {
		at = s.OrderedAt
	}
	out, err := inbound.Pulled(inbound.PulledSale{Provider: run.Provider, OrderID: s.OrderID, Status: s.Status, Amount: s.Amount,
		Currency: s.Currency, CouponCode: s.CouponCode, SubscriptionID: s.SubscriptionID, OccurredAt: at,
		Customer: inbound.Customer{Name: s.BuyerName, Email: s.BuyerEmail, Document: s.BuyerDocument}})
	if err != nil {
		r.log().Warn("pulled sale unmappable", zap.String("provider", run.Provider), zap.String("order", s.OrderID), zap.Error(err))
		return nil, false
	}
	return out.Event, !out.Ignored && out.Event != nil
}

// publish attributes a sale no webhook had brought and publishes its
// command with its delivery record, as the ingest would have; a sale
// that attributes to no member is left, as its webhook would be.
func (r *Reconciler) publish(ctx context.Context, run *Run, puller Puller, it pulled) error {
	memberID, code, err := r.attribute(ctx, run, puller, it.sale)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	ev := *it.ev
	if ev.CouponCode == "" {
		ev.CouponCode = code
	}
	now := r.now()
	body, err := json.Marshal(it.sale)
	if err != nil {
		return err
	}
	d := inbound.Delivery{ID: uuid.New(), MerchantID: run.MerchantID, Provider: run.Provider, DedupeKey: ev.DedupeKey,
		Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, // as its webhook would have been answered
		Body: body, ReceivedAt: now,
		Source: inbound.SourceReconciliation, Headers: map[string]string{HeaderRun: ids.Format(ids.Reconciliation, run.ID)}}
	cmd := ledger.OrderCommand(&ev, run.MerchantID, memberID, now)
	if err := r.Publisher.PublishDelivery(ctx, d, &cmd); err != nil {
		return err
	}
	if r.Dedupe != nil {
		if err := r.Dedupe.Remember(ctx, inbound.FastDedupeKey(run.MerchantID, ev.DedupeKey), DedupeTTL); err != nil {
			r.log().Debug("dedupe fast path unavailable", zap.Error(err))
		}
	}
	run.Missing++
	if ev.Kind == inbound.KindRefund {
		run.Reversed++
	} else {
		run.Credited++
	}
	if r.Observer != nil {
		r.Observer.Missing(run.Provider, 1)
	}
	return nil
}

// attribute finds the member of a sale: by the id of her coupon at the
// platform (Yampi's promocode_id), reading the order whole when the id is
// unknown and the list left its code out; then by the coupon code, then
// by the code of a referral link. apperr.NotFound: no member.
func (r *Reconciler) attribute(ctx context.Context, run *Run, puller Puller, s inbound.Sale) (uuid.UUID, string, error) {
	if s.PromocodeID != "" {
		id, code, err := r.Coupons.FindMemberByCouponID(ctx, run.MerchantID, run.Provider, s.PromocodeID)
		if !apperr.Is(err, apperr.NotFound) {
			return id, code, err
		}
		if reader, ok := puller.(OrderReader); ok && s.CouponCode == "" {
			whole, err := reader.Order(ctx, s.OrderID)
			_, transient := retry.AsTransient(err)
			switch {
			case err == nil:
				s.CouponCode = whole.CouponCode
			case transient || apperr.Is(err, apperr.Unavailable) || ctx.Err() != nil:
				return uuid.Nil, "", err // the platform is struggling: the run fails, the next one tries again
			default:
				// This order alone cannot be read (gone, refused): it
				// stays unattributed rather than fail every run.
				r.log().Warn("pulled order unreadable", zap.String("provider", run.Provider), zap.String("order", s.OrderID), zap.Error(err))
			}
		}
	}
	for _, code := range []string{s.CouponCode, s.ReferralCode} {
		if code == "" {
			continue
		}
		id, err := r.Coupons.FindMemberByCoupon(ctx, run.MerchantID, code)
		if !apperr.Is(err, apperr.NotFound) {
			return id, code, err
		}
	}
	return uuid.Nil, "", apperr.Errorf(apperr.NotFound, "no member")
}

// StaleError is the error recorded for a run whose process stopped
// writing its heartbeat (it died, or lost the database for long).
const StaleError = "abandoned: the process running it stopped"
