package postgres

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/webhook"
)

// The job queue (webhook_jobs) holds the deliveries still owed: the
// dispatcher's side, where every method is one round trip for many rows.

// JobOutcome is what became of one claimed job (webhook.JobOutcome).
type JobOutcome = webhook.JobOutcome

// EventPayload returns the type and the envelope of an event from the
// outbox, byte for byte as stored (signatures cover the exact bytes), or
// apperr.NotFound.
func (s *WebhookStore) EventPayload(ctx context.Context, merchantID, eventID uuid.UUID) (string, []byte, error) {
	var typ, payload string
	err := s.pool.QueryRow(ctx, `SELECT type, payload::text FROM outbox WHERE merchant_id = $1 AND event_id = $2`,
		merchantID, eventID).Scan(&typ, &payload)
	if err != nil {
		return "", nil, notFound(err, "event not found")
	}
	return typ, []byte(payload), nil
}

type jobKey struct{ merchantID, webhookID, eventID uuid.UUID }

func keyOf(j *webhook.Job) jobKey { return jobKey{j.MerchantID, j.WebhookID, j.EventID} }

// FilterNewJobs returns the jobs that are new, in their order: their
// endpoint is active and no row and no logged attempt exists for their
// (endpoint, event). It is InsertJobs' test without the write, for the
// dispatcher's jobs that are delivered before (and mostly instead of)
// being stored; a job repeated in jobs is returned once.
func (s *WebhookStore) FilterNewJobs(ctx context.Context, jobs []webhook.Job) ([]webhook.Job, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	keys := make([]jobKey, len(jobs))
	for i := range jobs {
		keys[i] = keyOf(&jobs[i])
	}
	m, w, e := splitKeys(keys)
	rows, err := s.pool.Query(ctx, `SELECT u.i FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY
  AS u(merchant_id, webhook_id, event_id, i)
WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.merchant_id = u.merchant_id AND e.id = u.webhook_id AND e.is_active)
  AND NOT EXISTS (SELECT 1 FROM webhook_jobs j
    WHERE j.merchant_id = u.merchant_id AND j.webhook_id = u.webhook_id AND j.event_id = u.event_id)
  AND NOT EXISTS (SELECT 1 FROM webhook_attempts a
    WHERE a.merchant_id = u.merchant_id AND a.webhook_id = u.webhook_id AND a.event_id = u.event_id)`, m, w, e)
	if err != nil {
		return nil, err
	}
	ordinals, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	slices.Sort(ordinals)
	out := make([]webhook.Job, 0, len(ordinals))
	seen := make(map[jobKey]bool, len(ordinals))
	for _, i := range ordinals {
		j := jobs[i-1] // ordinals count from 1
		if k := keyOf(&j); !seen[k] {
			seen[k] = true
			out = append(out, j)
		}
	}
	return out, nil
}

// InsertJobs stores the jobs in one statement and returns those really
// inserted, with CreatedAt set (a zero CreatedAt becomes now()). A job
// already stored or already attempted (the event redelivered by the broker
// or published twice by the outbox sweep, perhaps after its delivery
// succeeded and its job was deleted), repeated in jobs, or whose endpoint
// is gone or inactive is not inserted and not returned, so the caller
// delivers only what it returns.
//
// An endpoint disabled while this runs may still get a job; no sweep claims
// it (ClaimDueJobs wants an active endpoint) and it is dropped with the
// endpoint or delivered if the endpoint is re-enabled. Locking the
// endpoints here would serialise every event of a merchant to close that
// window.
func (s *WebhookStore) InsertJobs(ctx context.Context, jobs []webhook.Job) ([]webhook.Job, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	sql, args := insertJobs(jobs, true)
	rows, err := s.pool.Query(ctx, sql+`
RETURNING merchant_id, webhook_id, event_id, created_at`, args...)
	if err != nil {
		return nil, err
	}
	inserted := map[jobKey]time.Time{}
	var k jobKey
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&k.merchantID, &k.webhookID, &k.eventID, &at}, func() error {
		inserted[k] = at
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]webhook.Job, 0, len(inserted))
	for _, j := range jobs {
		at, ok := inserted[keyOf(&j)]
		if !ok {
			continue
		}
		delete(inserted, keyOf(&j)) // a job repeated in jobs is returned once
		j.CreatedAt = at
		out = append(out, j)
	}
	return out, nil
}

// insertJobs is the statement that stores jobs (on active endpoints, and
// not over an existing row). unattempted adds InsertJobs' test that no
// attempt of the job is logged; FinishJobs, which logs the first attempt in
// the same transaction, leaves it out.
func insertJobs(jobs []webhook.Job, unattempted bool) (string, []any) {
	n := len(jobs)
	merchants, webhooks, events := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
	types := make([]string, n)
	payloads := make([][]byte, n)
	attempts := make([]int32, n)
	due := make([]time.Time, n)
	created := make([]*time.Time, n)
	for i := range jobs {
		j := &jobs[i]
		merchants[i], webhooks[i], events[i], types[i], payloads[i] = j.MerchantID, j.WebhookID, j.EventID, j.EventType, j.Payload
		attempts[i], due[i], created[i] = int32(j.Attempts), j.NextAttemptAt, timePtr(j.CreatedAt)
	}
	unattemptedTest := ""
	if unattempted {
		unattemptedTest = `
  AND NOT EXISTS (SELECT 1 FROM webhook_attempts a
    WHERE a.merchant_id = u.merchant_id AND a.webhook_id = u.webhook_id AND a.event_id = u.event_id)`
	}
	// ORDER BY the key: concurrent inserters take the index locks in one
	// order and so cannot deadlock.
	return `INSERT INTO webhook_jobs (merchant_id, webhook_id, event_id, event_type, payload,
  attempts, next_attempt_at, created_at)
SELECT u.merchant_id, u.webhook_id, u.event_id, u.event_type, u.payload, u.attempts, u.next_attempt_at,
  COALESCE(u.created_at, now())
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bytea[], $6::int[], $7::timestamptz[], $8::timestamptz[])
  AS u(merchant_id, webhook_id, event_id, event_type, payload, attempts, next_attempt_at, created_at)
WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.merchant_id = u.merchant_id AND e.id = u.webhook_id AND e.is_active)` +
			unattemptedTest + `
ORDER BY 1, 2, 3
ON CONFLICT DO NOTHING`,
		[]any{merchants, webhooks, events, types, payloads, attempts, due, created}
}

// ClaimDueJobs takes up to limit jobs due at now (next_attempt_at ≤ now)
// whose endpoint is active, earliest due first, and leases them: their
// next_attempt_at becomes now+lease, so no other caller takes them while
// they are worked on, and a job whose holder crashed is due again when the
// lease ends. Rows another caller is claiming are skipped, not waited for.
// The returned jobs carry the lease's end in NextAttemptAt.
func (s *WebhookStore) ClaimDueJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]webhook.Job, error) {
	return s.claimJobs(ctx, `j.next_attempt_at <= $1`, now, lease, limit)
}

// RenewJobLease leases the row of j again, until now + lease, on condition
// that no one else holds it: the row still carries the lease and attempt
// count this copy of the job was handed with, or its lease ran out by now.
// It reports false when the row is gone (delivered, or the endpoint
// deleted) or leased anew to another copy; that copy makes the attempt.
func (s *WebhookStore) RenewJobLease(ctx context.Context, j webhook.Job, now time.Time, lease time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_jobs SET next_attempt_at = $6
WHERE merchant_id = $1 AND webhook_id = $2 AND event_id = $3 AND attempts = $4
  AND (next_attempt_at = $5 OR next_attempt_at <= $7)`,
		j.MerchantID, j.WebhookID, j.EventID, j.Attempts, j.NextAttemptAt, now.Add(lease), now)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// ClaimSpilledJobs leases, like ClaimDueJobs, up to limit jobs of one
// endpoint that were never attempted and are due by before: the events its
// lane had no room for, which the lane takes back itself as soon as it has
// room (retries keep their schedule and come through ClaimDueJobs).
func (s *WebhookStore) ClaimSpilledJobs(ctx context.Context, merchantID, webhookID uuid.UUID, before, now time.Time,
	lease time.Duration, limit int) ([]webhook.Job, error) {
	return s.claimJobs(ctx, `j.merchant_id = $4 AND j.webhook_id = $5 AND j.attempts = 0 AND j.next_attempt_at <= greatest($1::timestamptz, $6)`,
		now, lease, limit, merchantID, webhookID, before)
}

// claimJobs leases up to limit jobs matching where (over webhook_jobs j,
// with $1 = now, $2 = the lease's end, $3 = limit, then args), earliest due
// first, on active endpoints only.
func (s *WebhookStore) claimJobs(ctx context.Context, where string, now time.Time, lease time.Duration, limit int, args ...any) ([]webhook.Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `WITH due AS (
  SELECT j.merchant_id, j.webhook_id, j.event_id FROM webhook_jobs j
  JOIN webhook_endpoints e ON e.merchant_id = j.merchant_id AND e.id = j.webhook_id AND e.is_active
  WHERE `+where+`
  ORDER BY j.next_attempt_at
  LIMIT $3
  FOR UPDATE OF j SKIP LOCKED
)
UPDATE webhook_jobs j SET next_attempt_at = $2
FROM due WHERE j.merchant_id = due.merchant_id AND j.webhook_id = due.webhook_id AND j.event_id = due.event_id
RETURNING j.merchant_id, j.webhook_id, j.event_id, j.event_type, j.payload, j.attempts, j.next_attempt_at, j.created_at`,
		append([]any{now, now.Add(lease), limit}, args...)...)
	if err != nil {
		return nil, err
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhook.Job, error) {
		var j webhook.Job
		err := row.Scan(&j.MerchantID, &j.WebhookID, &j.EventID, &j.EventType, &j.Payload, &j.Attempts, &j.NextAttemptAt, &j.CreatedAt)
		return j, err
	})
	if err != nil {
		return nil, err
	}
	// RETURNING has no order; oldest first keeps delivery close to the
	// events' order.
	slices.SortFunc(jobs, func(a, b webhook.Job) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return jobs, nil
}

// FinishJobs applies the outcomes of claimed jobs in one round trip and one
// transaction: it logs the attempts, deletes or reschedules the jobs (a
// rescheduled job counts one more attempt; an Unstored one gets its row
// with that one attempt) and keeps each endpoint's
// failing_since: set at the first failure of a run, cleared by a success.
// The attempts are logged as RecordAttempts does (zero attempt IDs are
// filled in, in done), so repeating the call after an error is safe for
// the log; a rescheduled job would count the attempt twice.
func (s *WebhookStore) FinishJobs(ctx context.Context, done []JobOutcome) error {
	if len(done) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	attempts := make([]webhook.Attempt, 0, len(done))
	var delKeys, moveKeys []jobKey
	var moveAt []time.Time
	var firstRows []webhook.Job
	for i := range done {
		o := &done[i]
		if o.Attempt.Status != "" && o.Attempt.ID == uuid.Nil {
			o.Attempt.ID = uuid.New()
		}
		attempts = append(attempts, o.Attempt)
		switch {
		case o.Unstored && o.Delete: // no row to delete
		case o.Unstored:
			j := o.Job
			j.Attempts, j.NextAttemptAt = j.Attempts+1, o.NextAttemptAt
			firstRows = append(firstRows, j)
		case o.Delete:
			delKeys = append(delKeys, keyOf(&o.Job))
		default:
			moveKeys, moveAt = append(moveKeys, keyOf(&o.Job)), append(moveAt, o.NextAttemptAt)
		}
	}
	queueAttempts(b, attempts)
	if len(firstRows) > 0 {
		sql, args := insertJobs(firstRows, false)
		b.Queue(sql, args...)
	}
	if len(delKeys) > 0 {
		m, w, e := splitKeys(delKeys)
		b.Queue(`DELETE FROM webhook_jobs j USING unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS k(merchant_id, webhook_id, event_id)
WHERE j.merchant_id = k.merchant_id AND j.webhook_id = k.webhook_id AND j.event_id = k.event_id`, m, w, e)
	}
	if len(moveKeys) > 0 {
		m, w, e := splitKeys(moveKeys)
		b.Queue(`UPDATE webhook_jobs j SET attempts = j.attempts + 1, next_attempt_at = k.next_attempt_at
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[]) AS k(merchant_id, webhook_id, event_id, next_attempt_at)
WHERE j.merchant_id = k.merchant_id AND j.webhook_id = k.webhook_id AND j.event_id = k.event_id`, m, w, e, moveAt)
	}
	queueFailingSince(b, done)
	// A batch outside a transaction runs as one implicit transaction.
	return s.pool.SendBatch(ctx, b).Close()
}

func splitKeys(keys []jobKey) (merchants, webhooks, events []uuid.UUID) {
	merchants, webhooks, events = make([]uuid.UUID, len(keys)), make([]uuid.UUID, len(keys)), make([]uuid.UUID, len(keys))
	for i, k := range keys {
		merchants[i], webhooks[i], events[i] = k.merchantID, k.webhookID, k.eventID
	}
	return merchants, webhooks, events
}

// queueFailingSince queues the update of failing_since of the endpoints
// that outcomes made attempts to. Per endpoint, the attempts in time order
// decide: ending on a success clears it; failures after the last success
// set it to the first of them; failures alone set it unless a run is
// already going. Endpoints whose value does not change are not written, so
// a steady stream of successes costs no row lock.
func queueFailingSince(b *pgx.Batch, outcomes []JobOutcome) {
	type endpointKey struct{ merchantID, id uuid.UUID }
	type state struct {
		reset bool       // a success was seen: since replaces the stored value
		since *time.Time // the first failure after the last success
	}
	made := make([]*webhook.Attempt, 0, len(outcomes))
	for i := range outcomes {
		if outcomes[i].Attempt.Status != "" {
			made = append(made, &outcomes[i].Attempt)
		}
	}
	slices.SortStableFunc(made, func(a, b *webhook.Attempt) int { return a.CreatedAt.Compare(b.CreatedAt) })
	states := map[endpointKey]*state{}
	now := time.Now()
	for _, a := range made {
		k := endpointKey{a.MerchantID, a.WebhookID}
		st := states[k]
		if st == nil {
			st = &state{}
			states[k] = st
		}
		if a.Status == webhook.StatusSuccess {
			st.reset, st.since = true, nil
			continue
		}
		if st.since == nil {
			at := a.CreatedAt
			if at.IsZero() {
				at = now
			}
			st.since = &at
		}
	}
	if len(states) == 0 {
		return
	}
	keys := make([]endpointKey, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	// One order of row locks for every caller.
	slices.SortFunc(keys, func(a, b endpointKey) int {
		return cmp.Or(slices.Compare(a.merchantID[:], b.merchantID[:]), slices.Compare(a.id[:], b.id[:]))
	})
	merchants, ids := make([]uuid.UUID, len(keys)), make([]uuid.UUID, len(keys))
	resets := make([]bool, len(keys))
	since := make([]*time.Time, len(keys))
	for i, k := range keys {
		merchants[i], ids[i], resets[i], since[i] = k.merchantID, k.id, states[k].reset, states[k].since
	}
	// The new value is computed from the row being updated, not from a
	// snapshot of it, so a concurrent writer's failing_since is respected.
	b.Queue(`UPDATE webhook_endpoints e
SET failing_since = CASE WHEN u.reset THEN u.since ELSE COALESCE(e.failing_since, u.since) END
FROM unnest($1::uuid[], $2::uuid[], $3::bool[], $4::timestamptz[]) AS u(merchant_id, id, reset, since)
WHERE e.merchant_id = u.merchant_id AND e.id = u.id
  AND e.failing_since IS DISTINCT FROM (CASE WHEN u.reset THEN u.since ELSE COALESCE(e.failing_since, u.since) END)`,
		merchants, ids, resets, since)
}

// DeferJobs pushes the jobs back to until without counting an attempt (the
// dispatcher had no capacity for their endpoint, or is shutting down).
func (s *WebhookStore) DeferJobs(ctx context.Context, jobs []webhook.Job, until time.Time) error {
	if len(jobs) == 0 {
		return nil
	}
	keys := make([]jobKey, len(jobs))
	for i := range jobs {
		keys[i] = keyOf(&jobs[i])
	}
	m, w, e := splitKeys(keys)
	_, err := s.pool.Exec(ctx, `UPDATE webhook_jobs j SET next_attempt_at = $4
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS k(merchant_id, webhook_id, event_id)
WHERE j.merchant_id = k.merchant_id AND j.webhook_id = k.webhook_id AND j.event_id = k.event_id`, m, w, e, until)
	return err
}
