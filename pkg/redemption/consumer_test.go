package redemption_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redemption"
)

// consumerFake plays the consumer's dependencies: redemptions by id, the
// merchant's integrations by provider, the platforms' answers by
// redemption id, and the published settlements.
type consumerFake struct {
	mu           sync.Mutex
	redemptions  map[uuid.UUID]*redemption.Redemption
	integrations map[string]bool
	answers      map[uuid.UUID]error
	settled      [][]redemption.Settlement
	publishErr   error
	inFlight     atomic.Int32
	maxInFlight  atomic.Int32
}

func (f *consumerFake) FindRedemption(_ context.Context, _, id uuid.UUID) (*redemption.Redemption, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.redemptions[id]; ok {
		return r, nil
	}
	return nil, apperr.Errorf(apperr.NotFound, "redemption not found")
}

func (f *consumerFake) FindIntegration(_ context.Context, _ uuid.UUID, provider string) (*merchant.Integration, error) {
	if !f.integrations[provider] {
		return nil, apperr.Errorf(apperr.NotFound, "integration not found")
	}
	return &merchant.Integration{Provider: provider}, nil
}

func (f *consumerFake) Execute(ctx context.Context, _ merchant.Integration, req redemption.Request) (redemption.Result, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond)
	if err := f.answers[req.RedemptionID]; err != nil {
		return redemption.Result{}, err
	}
	return redemption.Result{CouponCode: "C-" + req.RedemptionID.String()[:4]}, nil
}

func (f *consumerFake) PublishSettlements(_ context.Context, s []redemption.Settlement) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.publishErr != nil {
		return f.publishErr
	}
	f.settled = append(f.settled, s)
	return nil
}

func (f *consumerFake) add(status, typ string, answer error) redemption.Requested {
	r := &redemption.Redemption{ID: uuid.New(), MerchantID: uuid.New(), MemberID: uuid.New(), Amount: 500, Type: typ, Status: status}
	f.redemptions[r.ID] = r
	if answer != nil {
		f.answers[r.ID] = answer
	}
	return redemption.Requested{RedemptionID: r.ID, MerchantID: r.MerchantID, MemberID: r.MemberID, Type: typ, Amount: r.Amount}
}

func newConsumer(f *consumerFake) (*redemption.Consumer, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	return &redemption.Consumer{Redemptions: f, Integrations: f, Platforms: f, Settlements: f, Log: zap.New(core),
		Now: func() time.Time { return now }}, logs
}

func newConsumerFake() *consumerFake {
	return &consumerFake{redemptions: map[uuid.UUID]*redemption.Redemption{}, answers: map[uuid.UUID]error{},
		integrations: map[string]bool{"yampi": true}}
}

func TestConsumerSettlesEveryRedemptionInOneWrite(t *testing.T) {
	t.Parallel()
	f := newConsumerFake()
	c, logs := newConsumer(f)
	ok := f.add(redemption.StatusPending, redemption.TypeStoreCredit, nil)
	refused := f.add(redemption.StatusPending, redemption.TypeStoreCredit, apperr.Errorf(apperr.Unprocessable, "yampi refused"))
	down := f.add(redemption.StatusPending, redemption.TypeStoreCredit, apperr.Errorf(apperr.Unavailable, "yampi is down"))
	noGuru := f.add(redemption.StatusPending, redemption.TypeSubscriptionDiscount, nil)
	done := f.add(redemption.StatusCompleted, redemption.TypeStoreCredit, nil) // a redelivery
	if err := c.HandleBatch(context.Background(), []redemption.Requested{ok, refused, down, noGuru, done}); err != nil {
		t.Fatal(err)
	}
	if len(f.settled) != 1 {
		t.Fatalf("%d writes, want 1", len(f.settled))
	}
	want := map[uuid.UUID]struct {
		success bool
		reason  string
	}{
		ok.RedemptionID:      {true, ""},
		refused.RedemptionID: {false, "yampi refused"},
		down.RedemptionID:    {false, "yampi is down"},
		noGuru.RedemptionID:  {false, "guru integration is not configured"},
	}
	got := f.settled[0]
	if len(got) != len(want) {
		t.Fatalf("%d settlements, want %d: %+v", len(got), len(want), got)
	}
	for _, s := range got {
		w, found := want[s.Outcome.RedemptionID]
		if !found || s.Outcome.Success != w.success || s.Outcome.FailureReason != w.reason {
			t.Errorf("settlement %+v, want %+v", s.Outcome, w)
		}
		if s.Redemption == nil || s.Redemption.ID != s.Outcome.RedemptionID || s.At.IsZero() {
			t.Errorf("settlement %+v lacks its redemption or time", s)
		}
	}
	if n := logs.FilterMessage("redemption carried out").Len(); n != 4 {
		t.Errorf("%d \"redemption carried out\" lines, want 4", n)
	}
}

func TestConsumerPublishesBeforeReportingAFailure(t *testing.T) {
	t.Parallel()
	f := newConsumerFake()
	c, _ := newConsumer(f)
	errDB := errors.New("database unreachable")
	ok := f.add(redemption.StatusPending, redemption.TypeStoreCredit, nil)
	broken := f.add(redemption.StatusPending, redemption.TypeStoreCredit, errDB)
	missing := redemption.Requested{RedemptionID: uuid.New(), MerchantID: uuid.New()}
	err := c.HandleBatch(context.Background(), []redemption.Requested{ok, broken, missing})
	if !errors.Is(err, errDB) || apperr.IsPermanent(err) {
		t.Errorf("HandleBatch = %v, want the transient error of the first failing request", err)
	}
	if len(f.settled) != 1 || len(f.settled[0]) != 1 || f.settled[0][0].Outcome.RedemptionID != ok.RedemptionID {
		t.Errorf("settled %+v, want the successful one alone", f.settled)
	}
	err = c.HandleBatch(context.Background(), []redemption.Requested{missing})
	if !apperr.IsPermanent(err) || !apperr.Is(err, apperr.NotFound) {
		t.Errorf("unknown redemption: %v, want a permanent not-found", err)
	}
	f.publishErr = errors.New("broker down")
	if err := c.HandleBatch(context.Background(), []redemption.Requested{ok}); !errors.Is(err, f.publishErr) {
		t.Errorf("publish failure: %v", err)
	}
}

func TestConsumerShutdownLeavesTheRedemptionPending(t *testing.T) {
	t.Parallel()
	f := newConsumerFake()
	c, _ := newConsumer(f)
	stopped := f.add(redemption.StatusPending, redemption.TypeStoreCredit,
		apperr.Wrap(apperr.Unavailable, context.Canceled, "yampi: stopped"))
	if err := c.HandleBatch(context.Background(), []redemption.Requested{stopped}); !errors.Is(err, context.Canceled) {
		t.Errorf("HandleBatch = %v, want the cancellation", err)
	}
	if len(f.settled) != 0 {
		t.Errorf("settled %+v during shutdown, want nothing", f.settled)
	}
}

func TestConsumerCallsSixteenPlatformsAtOnce(t *testing.T) {
	t.Parallel()
	f := newConsumerFake()
	c, _ := newConsumer(f)
	var reqs []redemption.Requested
	for range 64 {
		reqs = append(reqs, f.add(redemption.StatusPending, redemption.TypeStoreCredit, nil))
	}
	if err := c.HandleBatch(context.Background(), reqs); err != nil {
		t.Fatal(err)
	}
	if got := f.maxInFlight.Load(); got != 16 {
		t.Errorf("at most %d calls at once, want 16", got)
	}
}
