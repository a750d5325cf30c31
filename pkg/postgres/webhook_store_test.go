package postgres_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

// webhookEnv is a fresh database with a WebhookStore and two merchants.
type webhookEnv struct {
	pool   *pgxpool.Pool
	box    *secretbox.Box
	store  *postgres.WebhookStore
	a, b   uuid.UUID // merchants
	member uuid.UUID // a member of a, for outbox rows
}

func mustWebhookEnv(t *testing.T) *webhookEnv {
	t.Helper()
	pool := testenv.MustPool(t)
	s := mustSeed(t, pool, testenv.FixedCampaign(500, 7), 1)
	box := testenv.MustBox(t)
	other := testenv.MustMerchant(t, pool, box,
		merchant.Merchant{Name: "Outra Loja", StoreURL: "https://outra.example.com", DashboardEmail: "o@example.com"})
	return &webhookEnv{pool: pool, box: box, store: postgres.NewWebhookStore(pool, box),
		a: s.merchant.ID, b: other.ID, member: s.members[0].ID}
}

// mustEndpoint creates an active endpoint of merchant m subscribed to
// member.created and referral.approved.
func (e *webhookEnv) mustEndpoint(t *testing.T, m uuid.UUID) *webhook.Endpoint {
	t.Helper()
	ep := &webhook.Endpoint{MerchantID: m, URL: "https://hooks.example.com/convida",
		Events: []string{"member.created", "referral.approved"}, IsActive: true, Secret: webhook.NewSecret()}
	if err := e.store.CreateWebhook(context.Background(), ep); err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	return ep
}

func wantCode(t *testing.T, what string, err error, code apperr.Code) {
	t.Helper()
	if !apperr.Is(err, code) {
		t.Fatalf("%s: err = %v, want code %s", what, err, code)
	}
}

func TestWebhookCreateFindList(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	first := env.mustEndpoint(t, env.a)
	if first.ID == uuid.Nil || first.CreatedAt.IsZero() || !first.UpdatedAt.Equal(first.CreatedAt) {
		t.Fatalf("CreateWebhook filled ID %v, CreatedAt %v, UpdatedAt %v", first.ID, first.CreatedAt, first.UpdatedAt)
	}
	second := env.mustEndpoint(t, env.a)
	env.mustEndpoint(t, env.b)

	got, err := env.store.FindWebhook(ctx, env.a, first.ID)
	if err != nil {
		t.Fatalf("FindWebhook: %v", err)
	}
	if got.Secret != first.Secret || got.URL != first.URL || !slices.Equal(got.Events, first.Events) || !got.IsActive ||
		got.PreviousSecret != "" || !got.FailingSince.IsZero() || got.DisabledReason != "" {
		t.Errorf("FindWebhook = %+v, want the endpoint as created %+v", got, first)
	}
	_, err = env.store.FindWebhook(ctx, env.b, first.ID)
	wantCode(t, "FindWebhook of another merchant", err, apperr.NotFound)
	_, err = env.store.FindWebhook(ctx, env.a, uuid.New())
	wantCode(t, "FindWebhook of an unknown id", err, apperr.NotFound)

	list, err := env.store.ListWebhooks(ctx, env.a)
	if err != nil {
		t.Fatalf("ListWebhooks: %v", err)
	}
	if len(list) != 2 {
		t.Fatalf("ListWebhooks returned %d endpoints, want 2 (only merchant a's)", len(list))
	}
	newest, older := second, first
	if first.CreatedAt.After(second.CreatedAt) || (first.CreatedAt.Equal(second.CreatedAt) && bytes.Compare(first.ID[:], second.ID[:]) > 0) {
		newest, older = first, second
	}
	if list[0].ID != newest.ID || list[1].ID != older.ID {
		t.Errorf("ListWebhooks order = %v, %v; want newest first", list[0].ID, list[1].ID)
	}
	if list[0].Secret == "" {
		t.Error("ListWebhooks returned the secret sealed or empty")
	}
	if none, err := env.store.ListWebhooks(ctx, uuid.New()); err != nil || len(none) != 0 {
		t.Errorf("ListWebhooks of a merchant without endpoints = %v, %v; want none", none, err)
	}

	err = env.store.CreateWebhook(ctx, &webhook.Endpoint{MerchantID: uuid.New(), URL: "https://x.example.com", Events: []string{"member.created"}, Secret: webhook.NewSecret()})
	wantCode(t, "CreateWebhook for an unknown merchant", err, apperr.NotFound)
}

func TestWebhookSecretIsSealedAtRest(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	old := ep.Secret
	if _, err := env.store.RotateWebhookSecret(ctx, env.a, ep.ID, webhook.NewSecret(), time.Hour, time.Now()); err != nil {
		t.Fatalf("RotateWebhookSecret: %v", err)
	}
	rotated, _ := env.store.FindWebhook(ctx, env.a, ep.ID)
	var row []byte
	if err := env.pool.QueryRow(ctx, `SELECT convert_to(w::text, 'UTF8') FROM webhook_endpoints w WHERE id = $1`, ep.ID).Scan(&row); err != nil {
		t.Fatal(err)
	}
	var current, previous []byte
	if err := env.pool.QueryRow(ctx, `SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&current, &previous); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{old, rotated.Secret} {
		// Neither the secret, nor its key part, nor any of them as the
		// bytea's hex text may appear in the row.
		key := secret[len(webhook.SecretPrefix):]
		for _, needle := range [][]byte{[]byte(secret), []byte(key), []byte(hexOf(secret)), []byte(hexOf(key))} {
			if bytes.Contains(row, needle) || bytes.Contains(current, needle) || bytes.Contains(previous, needle) {
				t.Fatalf("the stored row holds a secret in clear: %s", row)
			}
		}
	}
	if got, err := env.box.Open(current); err != nil || got != rotated.Secret {
		t.Errorf("secret_sealed opens to %q, %v; want the current secret", got, err)
	}
	other := testenv.MustBox(t)
	if _, err := postgres.NewWebhookStore(env.pool, other).FindWebhook(ctx, env.a, ep.ID); err == nil {
		t.Error("a store with another SECRETS_KEY opened the secret")
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(out)
}

func TestWebhookUpdate(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)

	url := "https://new.example.com/hook"
	got, err := env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{URL: &url})
	if err != nil {
		t.Fatalf("UpdateWebhook: %v", err)
	}
	if got.URL != url || !slices.Equal(got.Events, ep.Events) || !got.IsActive || got.Secret != ep.Secret {
		t.Errorf("after a URL patch: %+v; want only the URL changed", got)
	}
	if !got.UpdatedAt.After(ep.UpdatedAt) {
		t.Errorf("updated_at %v did not move past %v", got.UpdatedAt, ep.UpdatedAt)
	}
	got, err = env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{Events: []string{"wallet.credited"}})
	if err != nil || got.URL != url || !slices.Equal(got.Events, []string{"wallet.credited"}) {
		t.Fatalf("after an events patch: %+v, %v", got, err)
	}

	// The dispatcher disables it; the merchant re-enables it.
	mustJobs(t, env, ep, 2, time.Now())
	if _, err := env.pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = now() - interval '6 days' WHERE id = $1`, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := env.store.DisableWebhook(ctx, env.a, ep.ID, webhook.DisabledFailing); err != nil {
		t.Fatalf("DisableWebhook: %v", err)
	}
	got, _ = env.store.FindWebhook(ctx, env.a, ep.ID)
	if got.IsActive || got.DisabledReason != webhook.DisabledFailing || got.FailingSince.IsZero() {
		t.Errorf("after DisableWebhook: active %v, reason %q, failing since %v", got.IsActive, got.DisabledReason, got.FailingSince)
	}
	if n := countJobs(t, env, ep.ID); n != 0 {
		t.Errorf("DisableWebhook left %d jobs", n)
	}
	yes := true
	got, err = env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{IsActive: &yes})
	if err != nil || !got.IsActive || got.DisabledReason != "" || !got.FailingSince.IsZero() {
		t.Errorf("re-enabled: %+v, %v; want active, no reason, no failing_since", got, err)
	}

	// The merchant deactivates: the jobs owed are dropped.
	mustJobs(t, env, ep, 3, time.Now())
	no := false
	got, err = env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{IsActive: &no})
	if err != nil || got.IsActive || got.DisabledReason != "" {
		t.Errorf("deactivated: %+v, %v", got, err)
	}
	if n := countJobs(t, env, ep.ID); n != 0 {
		t.Errorf("deactivation left %d jobs", n)
	}

	_, err = env.store.UpdateWebhook(ctx, env.b, ep.ID, webhook.Patch{URL: &url})
	wantCode(t, "UpdateWebhook of another merchant", err, apperr.NotFound)
	wantCode(t, "DisableWebhook of another merchant", env.store.DisableWebhook(ctx, env.b, ep.ID, "x"), apperr.NotFound)
}

func TestWebhookRotateSecret(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	now := time.Now()
	next := webhook.NewSecret()
	got, err := env.store.RotateWebhookSecret(ctx, env.a, ep.ID, next, 24*time.Hour, now)
	if err != nil {
		t.Fatalf("RotateWebhookSecret: %v", err)
	}
	if got.Secret != next || got.PreviousSecret != ep.Secret {
		t.Fatalf("after rotation: secret %q previous %q; want the new one and the old one", got.Secret, got.PreviousSecret)
	}
	if d := got.PreviousSecretExpiresAt.Sub(now.Add(24 * time.Hour)).Abs(); d > time.Millisecond {
		t.Errorf("previous secret expires at %v, want %v", got.PreviousSecretExpiresAt, now.Add(24*time.Hour))
	}
	if s := got.Secrets(now.Add(time.Hour)); !slices.Equal(s, []string{next, ep.Secret}) {
		t.Errorf("Secrets during the overlap = %d secrets, want both", len(s))
	}
	if s := got.Secrets(now.Add(25 * time.Hour)); !slices.Equal(s, []string{next}) {
		t.Errorf("Secrets after the overlap = %d secrets, want the new one only", len(s))
	}
	again, _ := env.store.FindWebhook(ctx, env.a, ep.ID)
	if again.Secret != next || again.PreviousSecret != ep.Secret {
		t.Error("the rotation was not stored")
	}
	// Without overlap the old secret stops at once.
	got, err = env.store.RotateWebhookSecret(ctx, env.a, ep.ID, webhook.NewSecret(), 0, now)
	if err != nil || got.PreviousSecret != "" || !got.PreviousSecretExpiresAt.IsZero() {
		t.Errorf("rotation without overlap: previous %q until %v, %v", got.PreviousSecret, got.PreviousSecretExpiresAt, err)
	}
	_, err = env.store.RotateWebhookSecret(ctx, env.b, ep.ID, webhook.NewSecret(), time.Hour, now)
	wantCode(t, "RotateWebhookSecret of another merchant", err, apperr.NotFound)
}

func TestWebhookDeleteCascades(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	mustJobs(t, env, ep, 2, time.Now())
	if err := env.store.RecordAttempts(ctx, []webhook.Attempt{attemptOf(ep, uuid.New(), webhook.StatusFailed, 1, time.Now())}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "DeleteWebhook of another merchant", env.store.DeleteWebhook(ctx, env.b, ep.ID), apperr.NotFound)
	if err := env.store.DeleteWebhook(ctx, env.a, ep.ID); err != nil {
		t.Fatalf("DeleteWebhook: %v", err)
	}
	_, err := env.store.FindWebhook(ctx, env.a, ep.ID)
	wantCode(t, "FindWebhook after delete", err, apperr.NotFound)
	wantCode(t, "DeleteWebhook again", env.store.DeleteWebhook(ctx, env.a, ep.ID), apperr.NotFound)
	var attempts, jobs int
	_ = env.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_attempts), (SELECT count(*) FROM webhook_jobs)`).Scan(&attempts, &jobs)
	if attempts != 0 || jobs != 0 {
		t.Errorf("after delete: %d attempts, %d jobs remain; want none", attempts, jobs)
	}
	// Writing the log of a deleted endpoint is not an error.
	if err := env.store.RecordAttempts(ctx, []webhook.Attempt{attemptOf(ep, uuid.New(), webhook.StatusSuccess, 1, time.Now())}); err != nil {
		t.Errorf("RecordAttempts for a deleted endpoint: %v", err)
	}
}

func attemptOf(ep *webhook.Endpoint, event uuid.UUID, status string, n int, at time.Time) webhook.Attempt {
	a := webhook.Attempt{MerchantID: ep.MerchantID, WebhookID: ep.ID, EventID: event, EventType: "member.created",
		Status: status, Attempt: n, DurationMS: 12, CreatedAt: at}
	if status == webhook.StatusSuccess {
		a.ResponseStatus, a.ResponseBody = 200, "ok"
	} else {
		a.ResponseStatus, a.ResponseBody, a.Error, a.NextRetryAt = 500, "boom", "HTTP 500", at.Add(5*time.Second)
	}
	return a
}

func TestWebhookAttemptLog(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	other := env.mustEndpoint(t, env.a)
	base := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	event := uuid.New()
	var batch []webhook.Attempt
	for i := 0; i < 7; i++ {
		status := webhook.StatusFailed
		if i%3 == 0 {
			status = webhook.StatusSuccess // 0, 3, 6
		}
		batch = append(batch, attemptOf(ep, event, status, i+1, base.Add(time.Duration(i)*time.Minute)))
	}
	network := attemptOf(ep, uuid.New(), webhook.StatusFailed, 1, base.Add(-time.Hour))
	network.ResponseStatus, network.ResponseBody, network.Error = 0, "nul\x00 and \xff bytes", "dial tcp: refused"
	batch = append(batch, network, attemptOf(other, event, webhook.StatusSuccess, 1, base))
	if err := env.store.RecordAttempts(ctx, batch); err != nil {
		t.Fatalf("RecordAttempts: %v", err)
	}
	for i, a := range batch {
		if a.ID == uuid.Nil {
			t.Fatalf("RecordAttempts left attempt %d without an id", i)
		}
	}
	// Repeating the write changes nothing.
	if err := env.store.RecordAttempts(ctx, batch); err != nil {
		t.Fatalf("RecordAttempts again: %v", err)
	}

	tests := []struct {
		name          string
		f             webhook.AttemptFilter
		wantN, wantTo int
		first         int // index in batch of the first record
	}{
		{"all", webhook.AttemptFilter{Limit: 50}, 8, 8, 6},
		{"page", webhook.AttemptFilter{Limit: 2, Offset: 2}, 2, 8, 4},
		{"success", webhook.AttemptFilter{Status: webhook.StatusSuccess, Limit: 50}, 3, 3, 6},
		{"failed", webhook.AttemptFilter{Status: webhook.StatusFailed, Limit: 1}, 1, 5, 5},
		{"past the end", webhook.AttemptFilter{Limit: 10, Offset: 100}, 0, 8, -1},
	}
	for _, tt := range tests {
		list, total, err := env.store.ListAttempts(ctx, env.a, ep.ID, tt.f)
		if err != nil {
			t.Fatalf("%s: ListAttempts: %v", tt.name, err)
		}
		if len(list) != tt.wantN || total != tt.wantTo {
			t.Errorf("%s: got %d records of %d, want %d of %d", tt.name, len(list), total, tt.wantN, tt.wantTo)
			continue
		}
		if tt.first >= 0 && list[0].ID != batch[tt.first].ID {
			t.Errorf("%s: first record is attempt %d, want %d", tt.name, list[0].Attempt, batch[tt.first].Attempt)
		}
		for i := 1; i < len(list); i++ {
			if list[i].CreatedAt.After(list[i-1].CreatedAt) {
				t.Errorf("%s: not newest first at %d", tt.name, i)
			}
		}
	}
	if list, total, _ := env.store.ListAttempts(ctx, env.b, ep.ID, webhook.AttemptFilter{Limit: 50}); len(list) != 0 || total != 0 {
		t.Errorf("another merchant sees %d records", total)
	}

	network = batch[7] // with the id RecordAttempts gave it
	got, err := env.store.FindAttempt(ctx, env.a, ep.ID, network.ID)
	if err != nil {
		t.Fatalf("FindAttempt: %v", err)
	}
	want := batch[7]
	if got.ResponseStatus != 0 || got.Error != want.Error || got.ResponseBody != "nul and \uFFFD bytes" ||
		!got.NextRetryAt.Equal(want.NextRetryAt) || !got.CreatedAt.Equal(want.CreatedAt) || got.DurationMS != 12 ||
		got.EventID != want.EventID || got.Attempt != 1 || got.Status != webhook.StatusFailed {
		t.Errorf("FindAttempt = %+v, want %+v with the body made storable", got, want)
	}
	ok, _ := env.store.FindAttempt(ctx, env.a, ep.ID, batch[0].ID)
	if ok.ResponseStatus != 200 || !ok.NextRetryAt.IsZero() {
		t.Errorf("success record: status %d next retry %v", ok.ResponseStatus, ok.NextRetryAt)
	}
	_, err = env.store.FindAttempt(ctx, env.a, other.ID, network.ID)
	wantCode(t, "FindAttempt under another endpoint", err, apperr.NotFound)
	_, err = env.store.FindAttempt(ctx, env.b, ep.ID, network.ID)
	wantCode(t, "FindAttempt of another merchant", err, apperr.NotFound)

	if n, err := env.store.LastAttemptNumber(ctx, env.a, ep.ID, event); err != nil || n != 7 {
		t.Errorf("LastAttemptNumber = %d, %v; want 7", n, err)
	}
	if n, err := env.store.LastAttemptNumber(ctx, env.a, other.ID, event); err != nil || n != 1 {
		t.Errorf("LastAttemptNumber at the other endpoint = %d, %v; want 1", n, err)
	}
	if n, err := env.store.LastAttemptNumber(ctx, env.a, ep.ID, uuid.New()); err != nil || n != 0 {
		t.Errorf("LastAttemptNumber of an unknown event = %d, %v; want 0", n, err)
	}
}

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

func TestWebhookActiveEndpoints(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	a1, a2 := env.mustEndpoint(t, env.a), env.mustEndpoint(t, env.a)
	b1 := env.mustEndpoint(t, env.b)
	if err := env.store.DisableWebhook(ctx, env.a, a2.ID, webhook.DisabledGone); err != nil {
		t.Fatal(err)
	}
	got, err := env.store.ActiveEndpoints(ctx, []uuid.UUID{env.a, env.b, env.a, uuid.New()})
	if err != nil {
		t.Fatalf("ActiveEndpoints: %v", err)
	}
	if len(got) != 2 || len(got[env.a]) != 1 || got[env.a][0].ID != a1.ID || len(got[env.b]) != 1 || got[env.b][0].ID != b1.ID {
		t.Fatalf("ActiveEndpoints = %v; want a1 for a and b1 for b", got)
	}
	if got[env.a][0].Secret != a1.Secret {
		t.Error("ActiveEndpoints did not open the secret")
	}
	if empty, err := env.store.ActiveEndpoints(ctx, nil); err != nil || len(empty) != 0 {
		t.Errorf("ActiveEndpoints(nil) = %v, %v", empty, err)
	}
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
