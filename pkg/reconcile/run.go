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
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/retry"
)

// HeaderRun, among a reconciliation delivery's kept headers, names the
// run that found it.
const HeaderRun = "X-Convida-Reconciliation"

// Reconciler starts and carries out runs.
type Reconciler struct {
	Store Store
	// Intake takes in the sales no webhook had brought, as the ingest
	// takes a webhook's.
	Intake    intake.Intake
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

// page handles one page of the pull: the sales the ledger has not
// applied (intake.AlreadyApplied) are taken in.
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
	trace, err := intake.TraceOf(ctx, r.Store, run.MerchantID, evs)
	if err != nil {
		return err
	}
	for _, it := range items {
		if intake.AlreadyApplied(it.ev, trace) {
			continue
		}
		if err := r.take(ctx, run, puller, it); err != nil {
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
		Currency: s.Currency, CouponCode: s.CouponCode, ReferralCode: s.ReferralCode, CouponID: s.PromocodeID,
		SubscriptionID: s.SubscriptionID, OccurredAt: at,
		Customer: inbound.Customer{Name: s.BuyerName, Email: s.BuyerEmail, Document: s.BuyerDocument}})
	if err != nil {
		r.log().Warn("pulled sale unmappable", zap.String("provider", run.Provider), zap.String("order", s.OrderID), zap.Error(err))
		return nil, false
	}
	return out.Event, !out.Ignored && out.Event != nil
}

// take takes in a sale no webhook had brought, as the ingest would have,
// with a delivery record of source "reconciliation" that keeps the sale
// as pulled; a sale that names no member is left, as its webhook would
// be, without a record.
func (r *Reconciler) take(ctx context.Context, run *Run, puller Puller, it pulled) error {
	body, err := json.Marshal(it.sale)
	if err != nil {
		return err
	}
	d := inbound.Delivery{ID: uuid.New(), MerchantID: run.MerchantID, Provider: run.Provider, Body: body, ReceivedAt: r.now(),
		Source: inbound.SourceReconciliation, Headers: map[string]string{HeaderRun: ids.Format(ids.Reconciliation, run.ID)}}
	taken, err := r.Intake.Take(ctx, &d, it.ev, r.orderCode(run, puller, it.sale))
	if err != nil || taken.Outcome != inbound.DeliveryAccepted {
		return err
	}
	run.Missing++
	if it.ev.Kind == inbound.KindRefund {
		run.Reversed++
	} else {
		run.Credited++
	}
	if r.Observer != nil {
		r.Observer.Missing(run.Provider, 1)
	}
	return nil
}

// orderCode reads the coupon code of s's order whole, for the rung of the
// intake's ladder after its coupon id (Yampi's list leaves the code out);
// nil when the platform's pull reads no order.
func (r *Reconciler) orderCode(run *Run, puller Puller, s inbound.Sale) intake.CodeReader {
	reader, ok := puller.(OrderReader)
	if !ok {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		whole, err := reader.Order(ctx, s.OrderID)
		_, transient := retry.AsTransient(err)
		switch {
		case err == nil:
			return whole.CouponCode, nil
		case transient || apperr.Is(err, apperr.Unavailable) || ctx.Err() != nil:
			return "", err // the platform is struggling: the run fails, the next one tries again
		}
		// This order alone cannot be read (gone, refused): it stays
		// unattributed rather than fail every run.
		r.log().Warn("pulled order unreadable", zap.String("provider", run.Provider), zap.String("order", s.OrderID), zap.Error(err))
		return "", nil
	}
}

// StaleError is the error recorded for a run whose process stopped
// writing its heartbeat (it died, or lost the database for long).
const StaleError = "abandoned: the process running it stopped"
