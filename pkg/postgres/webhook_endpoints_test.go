package postgres_test

import (
	"bytes"
	"context"
	"slices"
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
	s := mustTenants(t, 1)[0]
	pool := s.pool
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
	if got, err := env.box.Open(current, postgres.SealedAt("webhook_endpoints", "secret_sealed", env.a, ep.ID.String())); err != nil || got != rotated.Secret {
		t.Errorf("secret_sealed opens to %q, %v; want the current secret", got, err)
	}
	if got, err := env.box.Open(previous, postgres.SealedAt("webhook_endpoints", "previous_secret_sealed", env.a, ep.ID.String())); err != nil || got != old {
		t.Errorf("previous_secret_sealed opens to %q, %v; want the secret rotated away", got, err)
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

// TestWebhookEndpointVersions: every change to a merchant's endpoints moves
// its version, and only its own; a failed change moves nothing.
func TestWebhookEndpointVersions(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	version := func() (a, b int64) {
		t.Helper()
		got, err := env.store.EndpointVersions(ctx, []uuid.UUID{env.a, env.b, uuid.New()})
		if err != nil {
			t.Fatalf("EndpointVersions: %v", err)
		}
		if len(got) > 2 {
			t.Fatalf("EndpointVersions = %v: a merchant without endpoints is absent", got)
		}
		return got[env.a], got[env.b]
	}
	if a, b := version(); a != 0 || b != 0 {
		t.Fatalf("versions before any endpoint: %d, %d; want 0, 0", a, b)
	}
	ep := env.mustEndpoint(t, env.a)
	off := false
	changes := []struct {
		name   string
		change func() error
	}{
		{"CreateWebhook", func() error { env.mustEndpoint(t, env.a); return nil }},
		{"UpdateWebhook (events)", func() error {
			_, err := env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{Events: []string{"member.updated"}})
			return err
		}},
		{"UpdateWebhook (is_active)", func() error {
			_, err := env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{IsActive: &off})
			return err
		}},
		{"RotateWebhookSecret", func() error {
			_, err := env.store.RotateWebhookSecret(ctx, env.a, ep.ID, webhook.NewSecret(), time.Hour, time.Now())
			return err
		}},
		{"DisableWebhook", func() error { return env.store.DisableWebhook(ctx, env.a, ep.ID, webhook.DisabledGone) }},
		{"DeleteWebhook", func() error { return env.store.DeleteWebhook(ctx, env.a, ep.ID) }},
	}
	last, _ := version()
	if last == 0 {
		t.Fatal("CreateWebhook left the version at 0")
	}
	for _, c := range changes {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		a, b := version()
		if a <= last {
			t.Errorf("%s: version %d, want more than %d", c.name, a, last)
		}
		if b != 0 {
			t.Errorf("%s moved another merchant's version to %d", c.name, b)
		}
		last = a
	}
	// Changes that find no endpoint roll back with their bump.
	_, err := env.store.UpdateWebhook(ctx, env.a, ep.ID, webhook.Patch{IsActive: &off})
	wantCode(t, "UpdateWebhook of a deleted endpoint", err, apperr.NotFound)
	wantCode(t, "DeleteWebhook of a deleted endpoint", env.store.DeleteWebhook(ctx, env.a, ep.ID), apperr.NotFound)
	if a, _ := version(); a != last {
		t.Errorf("failed changes moved the version from %d to %d", last, a)
	}
	if empty, err := env.store.EndpointVersions(ctx, nil); err != nil || len(empty) != 0 {
		t.Errorf("EndpointVersions(nil) = %v, %v", empty, err)
	}
}
