package dispatch_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/dispatch"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

// fixture is a merchant with one endpoint on a local HTTPS receiver whose
// answers the test chooses, and a Dispatcher on the real store.
type fixture struct {
	pool     *pgxpool.Pool
	store    *postgres.WebhookStore
	merchant uuid.UUID
	endpoint *webhook.Endpoint
	calls    atomic.Int64
	disp     *dispatch.Dispatcher
}

func newFixture(t *testing.T, answer func(n int64) int, cfg dispatch.Config) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &fixture{pool: testenv.MustPool(t)}
	box := testenv.MustBox(t)
	m := testenv.MustMerchant(t, f.pool, nil, merchant.Merchant{})
	f.merchant = m.ID
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(answer(f.calls.Add(1)))
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	f.store = postgres.NewWebhookStore(f.pool, box)
	f.endpoint = &webhook.Endpoint{MerchantID: m.ID, URL: srv.URL, Events: []string{"referral.created"}, IsActive: true,
		Secret: webhook.NewSecret()}
	if err := f.store.CreateWebhook(ctx, f.endpoint); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Sender = f.store, webhook.NewClient(webhook.ClientConfig{AllowPrivateNetworks: true, RootCAs: roots})
	if cfg.Schedule == nil {
		cfg.Schedule = []time.Duration{time.Hour}
	}
	f.disp = dispatch.New(ctx, cfg)
	return f
}

// event is a referral.created message as the outbox relay publishes it.
func (f *fixture) event(t *testing.T) kafkabus.Message {
	rec, err := outbox.NewRecord(f.merchant, uuid.New(), "referral.created", map[string]string{"id": "ref_x"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return kafkabus.Message{Value: rec.Payload, Headers: map[string]string{topic.HeaderEventType: rec.Type,
		topic.HeaderMerchantID: rec.MerchantID.String(), topic.HeaderEventID: rec.EventID.String()}}
}

func (f *fixture) handle(t *testing.T, msgs ...kafkabus.Message) {
	t.Helper()
	if err := f.disp.HandleEvents(context.Background(), msgs); err != nil {
		t.Fatalf("HandleEvents: %v", err)
	}
}

func (f *fixture) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), query, f.merchant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) disabledReason(t *testing.T) string {
	ep, err := f.store.FindWebhook(context.Background(), f.merchant, f.endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ep.IsActive {
		return ""
	}
	return ep.DisabledReason
}

func TestGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(int64) int { return http.StatusGone }, dispatch.Config{})
	f.handle(t, f.event(t), f.event(t))
	testenv.Eventually(t, 10*time.Second, "the endpoint disabled", func() bool { return f.disabledReason(t) == webhook.DisabledGone })
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`); n != 0 {
		t.Errorf("%d jobs left for a gone endpoint, want 0", n)
	}
	// The outcome is written beside the disabling, not before it.
	testenv.Eventually(t, 10*time.Second, "the 410 attempt in the log", func() bool {
		return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'failed' AND response_status = 410`) >= 1
	})
}

func TestFailingForFiveDaysDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(int64) int { return http.StatusInternalServerError }, dispatch.Config{})
	if _, err := f.pool.Exec(context.Background(), `UPDATE webhook_endpoints SET failing_since = now() - interval '6 days'
WHERE merchant_id = $1`, f.merchant); err != nil {
		t.Fatal(err)
	}
	f.handle(t, f.event(t))
	testenv.Eventually(t, 10*time.Second, "the endpoint disabled", func() bool { return f.disabledReason(t) == webhook.DisabledFailing })
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`); n != 0 {
		t.Errorf("%d jobs left, want 0: a disabled endpoint's retries stop", n)
	}
}

// TestFailingForFiveDaysDisablesAHealthyLanesEndpoint: a lane made while
// its endpoint succeeded keeps count of the failures that follow, so five
// days of them disable the endpoint though its snapshot never reloads.
func TestFailingForFiveDaysDisablesAHealthyLanesEndpoint(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	start := time.Now()
	clock.Store(start.UnixNano())
	f := newFixture(t, func(n int64) int {
		if n == 1 {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	}, dispatch.Config{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	f.handle(t, f.event(t)) // delivered: the lane holds a healthy snapshot
	f.handle(t, f.event(t)) // the first failure starts the run
	testenv.Eventually(t, 10*time.Second, "two attempts", func() bool { return f.calls.Load() >= 2 })
	clock.Store(start.Add(webhook.FailingDisableAfter + time.Hour).UnixNano())
	f.handle(t, f.event(t))
	testenv.Eventually(t, 10*time.Second, "the endpoint disabled", func() bool { return f.disabledReason(t) == webhook.DisabledFailing })
}

func TestFailureSchedulesARetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(int64) int { return http.StatusServiceUnavailable }, dispatch.Config{})
	f.handle(t, f.event(t))
	testenv.Eventually(t, 10*time.Second, "the failed attempt logged", func() bool {
		return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND next_retry_at IS NOT NULL`) == 1
	})
	// The schedule's first step is an hour: the job waits in Postgres.
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1 AND attempts = 1
  AND next_attempt_at > now() + interval '50 minutes'`); n != 1 {
		t.Errorf("%d jobs rescheduled an hour ahead, want 1", n)
	}
	if f.disabledReason(t) != "" {
		t.Error("one failure disabled the endpoint")
	}
}

func TestRedeliveredEventIsNotSentAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(int64) int { return http.StatusOK }, dispatch.Config{})
	ev := f.event(t)
	f.handle(t, ev)
	testenv.Eventually(t, 10*time.Second, "the delivery", func() bool {
		return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'success'`) == 1
	})
	// The broker delivers the batch again (a new owner of the partition,
	// or a retry), which the consumer marks.
	ev.Repeat = true
	f.handle(t, ev, ev)
	time.Sleep(200 * time.Millisecond)
	if n := f.calls.Load(); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
}

// TestFullLaneSpillsToPostgres: with one request in flight and room for one
// more, further events wait in Postgres, due soon, instead of blocking the
// consumer.
func TestFullLaneSpillsToPostgres(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f := newFixture(t, func(int64) int { <-release; return http.StatusOK },
		dispatch.Config{Concurrency: 1, QueueSize: 1, Spill: time.Minute, Lease: 5 * time.Minute})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	start := time.Now()
	for range 5 {
		f.handle(t, f.event(t))
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("HandleEvents took %v with a hanging endpoint: the consumer must not wait", took)
	}
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1 AND next_attempt_at < now() + interval '2 minutes'`); n != 3 {
		t.Errorf("%d jobs spilled (due within the spill delay), want 3", n)
	}
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`); n != 5 {
		t.Errorf("%d jobs stored, want 5", n)
	}
	// The two the lane holds were written by their batch's deadline,
	// leased to the lane so that no sweep offers them meanwhile.
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1 AND next_attempt_at > now() + interval '4 minutes'`); n != 2 {
		t.Errorf("%d jobs stored under the lane's lease, want 2", n)
	}
	// The endpoint answers again: its lane takes the spilled jobs back by
	// itself (no scheduler runs here) and every event arrives once.
	close(release)
	released = true
	testenv.Eventually(t, 10*time.Second, "every event delivered", func() bool {
		return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'success'`) == 5
	})
	if n := f.calls.Load(); n != 5 {
		t.Errorf("receiver got %d requests, want 5", n)
	}
}

// TestBatchReturnsOnceDelivered: a healthy endpoint's events are delivered
// and logged before HandleEvents returns (the offset is committed after),
// and no job row is left.
func TestBatchReturnsOnceDelivered(t *testing.T) {
	t.Parallel()
	// Holds long enough for a loaded machine's first TLS handshakes: what
	// is checked is that the batch waits for its deliveries, not how soon
	// it gives up.
	f := newFixture(t, func(int64) int { return http.StatusOK }, dispatch.Config{Hold: 10 * time.Second, MaxHold: 20 * time.Second})
	var batch []kafkabus.Message
	for range 50 {
		batch = append(batch, f.event(t))
	}
	f.handle(t, batch...)
	if n := f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'success'`); n != 50 {
		t.Errorf("%d successes logged when HandleEvents returned, want 50", n)
	}
	if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`); n != 0 {
		t.Errorf("%d job rows left, want 0", n)
	}
	if n := f.calls.Load(); n != 50 {
		t.Errorf("receiver got %d requests, want 50", n)
	}
}

// TestHeldJobRacingItsDeadline: answers that arrive around the moment the
// batch stops waiting and writes the job's row. Whichever comes first, a
// failure leaves exactly one row, counting the attempt and due at the
// retry, and a success leaves none.
func TestHeldJobRacingItsDeadline(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusOK} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			const events = 12
			f := newFixture(t, func(n int64) int {
				// 0 to 110 ms: before, around and after Hold (40 ms).
				time.Sleep(time.Duration(n%12) * 10 * time.Millisecond)
				return status
			}, dispatch.Config{Hold: 40 * time.Millisecond, MaxHold: 60 * time.Millisecond})
			for range events {
				f.handle(t, f.event(t))
			}
			testenv.Eventually(t, 10*time.Second, "every attempt logged", func() bool {
				return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1`) == events
			})
			time.Sleep(100 * time.Millisecond) // let any straggling write land
			wantRows := 0
			if status != http.StatusOK {
				wantRows = events
			}
			if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`); n != wantRows {
				t.Errorf("%d job rows, want %d", n, wantRows)
			}
			if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1 AND attempts = 1
  AND next_attempt_at > now() + interval '50 minutes'`); n != wantRows {
				t.Errorf("%d job rows count one attempt and wait for the retry an hour ahead, want %d", n, wantRows)
			}
			if n := f.calls.Load(); n != events {
				t.Errorf("receiver got %d requests, want %d", n, events)
			}
		})
	}
}

// TestCopiesOfAStoredJobDeliverOnce hands the dispatcher copies of one
// stored job that arrive late, as the scheduler's retry messages do when it
// offered the job again at each lease's end while dispatchers were slow:
// the first copy to reach a worker takes the job, the others drop out, and
// copies of a job leased anew to someone else are left to that one.
func TestCopiesOfAStoredJobDeliverOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		leasedFor time.Duration // the row's lease from now: negative, it ran out
		want      int64
	}{
		{"lease ran out", -time.Minute, 1},
		{"leased anew elsewhere", time.Minute, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(int64) int { return http.StatusOK }, dispatch.Config{Lease: 2 * time.Second})
			ev := f.event(t)
			eventID := uuid.MustParse(ev.Headers[topic.HeaderEventID])
			stored, err := f.store.InsertJobs(context.Background(), []webhook.Job{{MerchantID: f.merchant,
				WebhookID: f.endpoint.ID, EventID: eventID, EventType: "referral.created", Payload: ev.Value,
				NextAttemptAt: time.Now().Add(tt.leasedFor)}})
			if err != nil || len(stored) != 1 {
				t.Fatalf("InsertJobs = %v, %v", stored, err)
			}
			// Each copy carries an older lease, all of them past.
			var copies []kafkabus.Message
			for i := range 5 {
				j := stored[0]
				j.NextAttemptAt = time.Now().Add(-time.Duration(5-i) * 2 * time.Second)
				if i == 4 && tt.leasedFor < 0 {
					j.NextAttemptAt = stored[0].NextAttemptAt // the copy of the last lease
				}
				raw, _ := json.Marshal(j)
				copies = append(copies, kafkabus.Message{Value: raw, Headers: map[string]string{
					topic.HeaderKind: topic.KindRetry, topic.HeaderMerchantID: f.merchant.String()}})
			}
			f.handle(t, copies...)
			if tt.want > 0 {
				testenv.Eventually(t, 10*time.Second, "the delivery logged", func() bool {
					return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'success'`) == 1
				})
			}
			time.Sleep(300 * time.Millisecond) // a second delivery would show now
			if n := f.calls.Load(); n != tt.want {
				t.Errorf("receiver got %d requests, want %d", n, tt.want)
			}
			if n := f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1`); n != int(tt.want) {
				t.Errorf("%d attempts logged, want %d", n, tt.want)
			}
		})
	}
}

// TestLeaseRenewedWhileInFlight: an attempt that outlasts the lease of its
// job (an endpoint that takes 3 s, a 1 s lease) keeps its row leased all
// along, so the scheduler never offers the job again meanwhile: a stored
// job handed to the lane, and a held job whose batch wrote its row while
// the attempt ran. The job is delivered once and its row is gone.
func TestLeaseRenewedWhileInFlight(t *testing.T) {
	t.Parallel()
	const lease, attempt = time.Second, 3 * time.Second
	for _, tt := range []struct {
		name   string
		stored bool
	}{{"stored job", true}, {"held job written by its batch", false}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(int64) int { time.Sleep(attempt); return http.StatusOK },
				dispatch.Config{Lease: lease, Hold: 50 * time.Millisecond, MaxHold: 100 * time.Millisecond})
			ev := f.event(t)
			if tt.stored {
				stored, err := f.store.InsertJobs(context.Background(), []webhook.Job{{MerchantID: f.merchant,
					WebhookID: f.endpoint.ID, EventID: uuid.MustParse(ev.Headers[topic.HeaderEventID]), EventType: "referral.created",
					Payload: ev.Value, NextAttemptAt: time.Now().Add(lease)}})
				if err != nil || len(stored) != 1 {
					t.Fatalf("InsertJobs = %v, %v", stored, err)
				}
				raw, _ := json.Marshal(stored[0])
				ev = kafkabus.Message{Value: raw, Headers: map[string]string{topic.HeaderKind: topic.KindRetry,
					topic.HeaderMerchantID: f.merchant.String()}}
			}
			f.handle(t, ev)
			if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`); n != 1 {
				t.Fatalf("%d job rows while the attempt runs, want 1", n)
			}
			// While the attempt runs, the row is never due: the scheduler's
			// claim (next_attempt_at <= now) would find nothing.
			began := time.Now()
			for time.Since(began) < attempt-300*time.Millisecond {
				if n := f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1 AND next_attempt_at <= now()`); n != 0 {
					t.Fatalf("the job's lease lapsed %v into an attempt of %v: the scheduler would offer it again",
						time.Since(began).Round(time.Millisecond), attempt)
				}
				time.Sleep(50 * time.Millisecond)
			}
			testenv.Eventually(t, 10*time.Second, "the delivery logged", func() bool {
				return f.count(t, `SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'success'`) == 1
			})
			testenv.Eventually(t, 5*time.Second, "the job's row deleted", func() bool {
				return f.count(t, `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`) == 0
			})
			if n := f.calls.Load(); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
		})
	}
}
