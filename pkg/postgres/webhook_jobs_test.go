package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/webhook"
)

func TestWebhookEventPayload(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	event := uuid.New()
	// Odd spacing and key order: json (not jsonb) keeps the text as written.
	payload := `{"id": "evt_x",  "type":"member.created", "data":{"b":1,"a":2}}`
	if _, err := env.pool.Exec(ctx, `INSERT INTO outbox (merchant_id, event_id, member_id, type, payload) VALUES ($1, $2, $3, $4, $5)`,
		env.a, event, env.member, "member.created", payload); err != nil {
		t.Fatal(err)
	}
	typ, got, err := env.store.EventPayload(ctx, env.a, event)
	if err != nil || typ != "member.created" || string(got) != payload {
		t.Errorf("EventPayload = %q, %q, %v; want the stored bytes", typ, got, err)
	}
	_, _, err = env.store.EventPayload(ctx, env.b, event)
	wantCode(t, "EventPayload of another merchant", err, apperr.NotFound)
}

// mustJobs inserts n jobs of new events for ep, due at due.
func mustJobs(t *testing.T, env *webhookEnv, ep *webhook.Endpoint, n int, due time.Time) []webhook.Job {
	t.Helper()
	jobs := make([]webhook.Job, n)
	for i := range jobs {
		id := uuid.New()
		jobs[i] = webhook.Job{MerchantID: ep.MerchantID, WebhookID: ep.ID, EventID: id, EventType: "member.created",
			Payload: []byte(`{"id":"evt_` + id.String() + `"}`), NextAttemptAt: due}
	}
	got, err := env.store.InsertJobs(context.Background(), jobs)
	if err != nil || len(got) != n {
		t.Fatalf("InsertJobs = %d jobs, %v; want %d", len(got), err, n)
	}
	return got
}

// mustInactiveEndpoint is an endpoint of m switched off by its merchant.
func (e *webhookEnv) mustInactiveEndpoint(t *testing.T, m uuid.UUID) *webhook.Endpoint {
	t.Helper()
	ep := e.mustEndpoint(t, m)
	no := false
	if _, err := e.store.UpdateWebhook(context.Background(), m, ep.ID, webhook.Patch{IsActive: &no}); err != nil {
		t.Fatal(err)
	}
	return ep
}

func countJobs(t *testing.T, env *webhookEnv, webhookID uuid.UUID) int {
	t.Helper()
	var n int
	if err := env.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_jobs WHERE webhook_id = $1`, webhookID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWebhookInsertJobs(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep, off := env.mustEndpoint(t, env.a), env.mustInactiveEndpoint(t, env.a)
	due := time.Now()
	first := mustJobs(t, env, ep, 2, due)
	if first[0].CreatedAt.IsZero() {
		t.Error("InsertJobs did not fill CreatedAt")
	}
	dup := first[0]
	dup.Payload = []byte(`{"other":"bytes"}`)
	fresh := webhook.Job{MerchantID: env.a, WebhookID: ep.ID, EventID: uuid.New(), EventType: "member.updated",
		Payload: []byte(`{"fresh":true}`), NextAttemptAt: due}
	toOff := fresh
	toOff.WebhookID = off.ID
	gone := fresh
	gone.WebhookID = uuid.New()
	got, err := env.store.InsertJobs(ctx, []webhook.Job{dup, fresh, fresh, toOff, gone})
	if err != nil {
		t.Fatalf("InsertJobs: %v", err)
	}
	if len(got) != 1 || got[0].EventID != fresh.EventID || got[0].WebhookID != ep.ID {
		t.Fatalf("InsertJobs returned %+v; want only the fresh job, once", got)
	}
	var payload []byte
	_ = env.pool.QueryRow(ctx, `SELECT payload FROM webhook_jobs WHERE event_id = $1`, first[0].EventID).Scan(&payload)
	if string(payload) != string(first[0].Payload) {
		t.Errorf("a duplicate insert changed the payload to %s", payload)
	}
	if n := countJobs(t, env, off.ID); n != 0 {
		t.Errorf("%d jobs for an inactive endpoint", n)
	}
	if got, err := env.store.InsertJobs(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("InsertJobs(nil) = %v, %v", got, err)
	}
}

func TestWebhookClaimDueJobs(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep, off := env.mustEndpoint(t, env.a), env.mustEndpoint(t, env.b)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	due := mustJobs(t, env, ep, 3, now.Add(-time.Minute))
	mustJobs(t, env, ep, 2, now.Add(time.Minute)) // not yet due
	mustJobs(t, env, off, 1, now.Add(-time.Minute))
	if err := env.store.DisableWebhook(ctx, env.b, off.ID, webhook.DisabledGone); err != nil {
		t.Fatal(err)
	}
	// A job of an inactive endpoint (inserted while it was being disabled)
	// is never claimed.
	if _, err := env.pool.Exec(ctx, `INSERT INTO webhook_jobs (merchant_id, webhook_id, event_id, event_type, payload, next_attempt_at)
VALUES ($1, $2, $3, 'member.created', '\x7b7d', $4)`, env.b, off.ID, uuid.New(), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}

	got, err := env.store.ClaimDueJobs(ctx, now, 30*time.Second, 10)
	if err != nil {
		t.Fatalf("ClaimDueJobs: %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("claimed %d jobs, want the 3 due", len(got))
	}
	for _, j := range got {
		if !j.NextAttemptAt.Equal(now.Add(30*time.Second)) || j.Attempts != 0 || len(j.Payload) == 0 || j.WebhookID != ep.ID {
			t.Errorf("claimed %+v; want a lease to now+30s", j)
		}
		if !slices.ContainsFunc(due, func(d webhook.Job) bool { return d.EventID == j.EventID }) {
			t.Errorf("claimed a job not due: %v", j.EventID)
		}
	}
	// Leased: nobody else gets them.
	if again, _ := env.store.ClaimDueJobs(ctx, now.Add(29*time.Second), 30*time.Second, 10); len(again) != 0 {
		t.Errorf("a leased job was claimed again within its lease: %d", len(again))
	}
	// The lease expired (its holder crashed): claimable again, with the
	// two that became due meanwhile.
	again, err := env.store.ClaimDueJobs(ctx, now.Add(31*time.Second), time.Minute, 10)
	if err != nil || len(again) != 3 {
		t.Fatalf("after the lease: %d jobs, %v; want the 3 expired", len(again), err)
	}
	later, _ := env.store.ClaimDueJobs(ctx, now.Add(2*time.Minute), time.Minute, 1)
	if len(later) != 1 {
		t.Errorf("limit 1 claimed %d", len(later))
	}
}

func TestWebhookClaimDueJobsConcurrently(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	now := time.Now()
	var all []webhook.Job
	for range 4 {
		ep := env.mustEndpoint(t, env.a)
		all = append(all, mustJobs(t, env, ep, 60, now.Add(-time.Second))...)
	}
	const workers = 8
	claimed := make(chan webhook.Job, len(all)*2)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				jobs, err := env.store.ClaimDueJobs(ctx, now, time.Hour, 7)
				if err != nil {
					errs <- err
					return
				}
				if len(jobs) == 0 {
					return
				}
				for _, j := range jobs {
					claimed <- j
				}
			}
		}()
	}
	wg.Wait()
	close(claimed)
	close(errs)
	for err := range errs {
		t.Fatalf("ClaimDueJobs: %v", err)
	}
	seen := map[uuid.UUID]int{}
	for j := range claimed {
		seen[j.EventID]++
	}
	for _, j := range all {
		if seen[j.EventID] != 1 {
			t.Errorf("job %v claimed %d times, want exactly once", j.EventID, seen[j.EventID])
		}
	}
	if len(seen) != len(all) {
		t.Errorf("claimed %d distinct jobs, want %d", len(seen), len(all))
	}
}

func failingSince(t *testing.T, env *webhookEnv, ep *webhook.Endpoint) time.Time {
	t.Helper()
	got, err := env.store.FindWebhook(context.Background(), ep.MerchantID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got.FailingSince
}

func TestWebhookFinishJobs(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	jobs := mustJobs(t, env, ep, 4, now)
	claimed, err := env.store.ClaimDueJobs(ctx, now, time.Minute, 10)
	if err != nil || len(claimed) != 4 {
		t.Fatalf("ClaimDueJobs = %d, %v", len(claimed), err)
	}
	fail := func(j webhook.Job, at time.Time) webhook.Attempt {
		return attemptOf(ep, j.EventID, webhook.StatusFailed, j.Attempts+1, at)
	}
	ok := func(j webhook.Job, at time.Time) webhook.Attempt {
		return attemptOf(ep, j.EventID, webhook.StatusSuccess, j.Attempts+1, at)
	}
	retryAt := now.Add(5 * time.Minute)
	outcomes := []postgres.JobOutcome{
		{Job: jobs[0], Attempt: ok(jobs[0], now), Delete: true},
		{Job: jobs[1], Attempt: fail(jobs[1], now.Add(time.Second)), NextAttemptAt: retryAt},
		{Job: jobs[2], Attempt: fail(jobs[2], now.Add(2*time.Second)), NextAttemptAt: retryAt},
		{Job: jobs[3], Delete: true}, // no attempt made: only dropped
	}
	if err := env.store.FinishJobs(ctx, outcomes); err != nil {
		t.Fatalf("FinishJobs: %v", err)
	}
	if n := countJobs(t, env, ep.ID); n != 2 {
		t.Errorf("%d jobs left, want the 2 rescheduled", n)
	}
	var attempts int
	var next time.Time
	_ = env.pool.QueryRow(ctx, `SELECT attempts, next_attempt_at FROM webhook_jobs WHERE event_id = $1`, jobs[1].EventID).Scan(&attempts, &next)
	if attempts != 1 || !next.Equal(retryAt) {
		t.Errorf("rescheduled job: attempts %d next %v; want 1 and %v", attempts, next, retryAt)
	}
	list, total, _ := env.store.ListAttempts(ctx, env.a, ep.ID, webhook.AttemptFilter{Limit: 50})
	if total != 3 || len(list) != 3 {
		t.Errorf("logged %d attempts, want 3", total)
	}
	if got := failingSince(t, env, ep); !got.Equal(now.Add(time.Second)) {
		t.Errorf("failing_since = %v, want the first failure after the success, %v", got, now.Add(time.Second))
	}

	// More failures keep the start of the run.
	later := now.Add(5 * time.Minute)
	err = env.store.FinishJobs(ctx, []postgres.JobOutcome{{Job: jobs[1], Attempt: fail(jobs[1], later), NextAttemptAt: later.Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := failingSince(t, env, ep); !got.Equal(now.Add(time.Second)) {
		t.Errorf("failing_since after another failure = %v, want it kept at %v", got, now.Add(time.Second))
	}
	// A success ends the run.
	if err := env.store.FinishJobs(ctx, []postgres.JobOutcome{{Job: jobs[2], Attempt: ok(jobs[2], later.Add(time.Second)), Delete: true}}); err != nil {
		t.Fatal(err)
	}
	if got := failingSince(t, env, ep); !got.IsZero() {
		t.Errorf("failing_since after a success = %v, want none", got)
	}
	// Failure then success in one batch: the success is last, no run.
	j := jobs[1]
	if err := env.store.FinishJobs(ctx, []postgres.JobOutcome{
		{Job: j, Attempt: ok(j, later.Add(3*time.Second)), Delete: true},
		{Job: j, Attempt: fail(j, later.Add(2*time.Second)), NextAttemptAt: later},
	}); err != nil {
		t.Fatal(err)
	}
	if got := failingSince(t, env, ep); !got.IsZero() {
		t.Errorf("failing_since after failure then success = %v, want none", got)
	}

	// The endpoint deleted while its jobs were in flight: nothing fails.
	gone := env.mustEndpoint(t, env.a)
	gj := mustJobs(t, env, gone, 1, now)[0]
	if err := env.store.DeleteWebhook(ctx, env.a, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := env.store.FinishJobs(ctx, []postgres.JobOutcome{{Job: gj, Attempt: attemptOf(gone, gj.EventID, webhook.StatusFailed, 1, now), NextAttemptAt: later}}); err != nil {
		t.Errorf("FinishJobs for a deleted endpoint: %v", err)
	}
}

func TestWebhookDeferJobs(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	mustJobs(t, env, ep, 2, now)
	claimed, _ := env.store.ClaimDueJobs(ctx, now, time.Minute, 10)
	until := now.Add(10 * time.Second)
	if err := env.store.DeferJobs(ctx, claimed, until); err != nil {
		t.Fatalf("DeferJobs: %v", err)
	}
	if got, _ := env.store.ClaimDueJobs(ctx, until.Add(-time.Millisecond), time.Minute, 10); len(got) != 0 {
		t.Errorf("deferred jobs claimed before %v", until)
	}
	got, _ := env.store.ClaimDueJobs(ctx, until, time.Minute, 10)
	if len(got) != 2 || got[0].Attempts != 0 {
		t.Errorf("after the deferral: %d jobs, attempts %v; want 2 with no attempt counted", len(got), got)
	}
}

// TestWebhookHeldJobs: the dispatcher's jobs without a row. FilterNewJobs
// keeps only what was neither stored nor attempted, on active endpoints;
// FinishJobs of an Unstored job logs the attempt and writes the row only
// for a retry.
func TestWebhookHeldJobs(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep, off := env.mustEndpoint(t, env.a), env.mustInactiveEndpoint(t, env.a)
	now := time.Now().UTC().Truncate(time.Microsecond)
	stored := mustJobs(t, env, ep, 1, now)[0]
	job := func(e *webhook.Endpoint) webhook.Job {
		id := uuid.New()
		return webhook.Job{MerchantID: e.MerchantID, WebhookID: e.ID, EventID: id, EventType: "member.created",
			Payload: []byte(`{"id":"evt_` + id.String() + `"}`), NextAttemptAt: now.Add(time.Minute)}
	}
	delivered, failed, fresh, inactive := job(ep), job(ep), job(ep), job(off)
	retryAt := now.Add(time.Hour)
	err := env.store.FinishJobs(ctx, []postgres.JobOutcome{
		{Job: delivered, Attempt: attemptOf(ep, delivered.EventID, webhook.StatusSuccess, 1, now), Delete: true, Unstored: true},
		{Job: failed, Attempt: attemptOf(ep, failed.EventID, webhook.StatusFailed, 1, now), NextAttemptAt: retryAt, Unstored: true},
	})
	if err != nil {
		t.Fatalf("FinishJobs: %v", err)
	}
	if n := countJobs(t, env, ep.ID); n != 2 {
		t.Errorf("%d job rows, want 2: the stored one and the failed one's retry", n)
	}
	var attempts int
	var next time.Time
	if err := env.pool.QueryRow(ctx, `SELECT attempts, next_attempt_at FROM webhook_jobs WHERE event_id = $1`, failed.EventID).Scan(&attempts, &next); err != nil {
		t.Fatalf("the failed held job has no row: %v", err)
	}
	if attempts != 1 || !next.Equal(retryAt) {
		t.Errorf("failed held job: attempts %d, due %v; want 1 and %v", attempts, next, retryAt)
	}

	got, err := env.store.FilterNewJobs(ctx, []webhook.Job{stored, delivered, fresh, failed, inactive, fresh})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].EventID != fresh.EventID {
		t.Errorf("FilterNewJobs kept %d jobs %v, want only the fresh one, once", len(got), got)
	}
}
