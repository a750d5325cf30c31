package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

func mustKeys(t *testing.T, current string, previous ...string) *secretbox.Box {
	t.Helper()
	box, err := secretbox.FromBase64(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// TestSealedValueOpensOnlyInItsPlace: a sealed secret copied to another
// merchant's row, another row of the merchant, or another column does not
// open there, and the store says why.
func TestSealedValueOpensOnlyInItsPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 1, 1)
	pool, box := a.pool, mustKeys(t, secretbox.NewKey())
	merchants := postgres.NewMerchantStore(pool, box)
	webhooks := postgres.NewWebhookStore(pool, box)
	creators := postgres.NewCreatorStore(pool, box)
	for _, m := range []uuid.UUID{a.merchant.ID, b.merchant.ID} {
		for _, in := range []merchant.Integration{
			{Provider: provider.Guru, AccountToken: "guru-account-" + m.String(), UserToken: "guru-user-" + m.String()},
			{Provider: provider.Yampi, WebhookSecret: "yampi-hook", UserToken: "yampi-user", UserSecretKey: "yampi-key", StoreAlias: "loja"},
		} {
			if _, err := merchants.PutIntegration(ctx, m, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	epA := &webhook.Endpoint{MerchantID: a.merchant.ID, URL: "https://hooks.example.com/a", IsActive: true, Secret: webhook.NewSecret()}
	epB := &webhook.Endpoint{MerchantID: b.merchant.ID, URL: "https://hooks.example.com/b", IsActive: true, Secret: webhook.NewSecret()}
	for _, ep := range []*webhook.Endpoint{epA, epB} {
		if err := webhooks.CreateWebhook(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []seeded{a, b} {
		if _, _, err := creators.PutCreator(ctx, creator.Profile{MerchantID: s.merchant.ID, MemberID: s.members[0].ID, DisplayName: "Ana"}); err != nil {
			t.Fatal(err)
		}
	}

	integration := func(m uuid.UUID, provider string) func() error {
		return func() error { _, err := merchants.FindIntegration(ctx, m, provider); return err }
	}
	cases := []struct {
		name string
		move string // an UPDATE … SET … of the copy
		read func() error
	}{
		{"another merchant's integration", `integration_settings d SET account_token_enc = s.account_token_enc
  FROM integration_settings s WHERE s.merchant_id = $1 AND s.provider = 'guru' AND d.merchant_id = $2 AND d.provider = 'guru'`,
			integration(b.merchant.ID, provider.Guru)},
		{"another column", `integration_settings SET user_token_enc = account_token_enc WHERE merchant_id = $1 AND provider = 'guru'
  AND $2::uuid IS NOT NULL`, integration(a.merchant.ID, provider.Guru)},
		{"another provider's row", `integration_settings d SET user_token_enc = s.user_token_enc FROM integration_settings s
  WHERE s.merchant_id = $1 AND s.provider = 'guru' AND d.merchant_id = $1 AND d.provider = 'yampi' AND $2::uuid IS NOT NULL`,
			integration(a.merchant.ID, provider.Yampi)},
		{"another merchant's endpoint", `webhook_endpoints d SET secret_sealed = s.secret_sealed FROM webhook_endpoints s
  WHERE s.merchant_id = $1 AND d.merchant_id = $2`,
			func() error { _, err := webhooks.FindWebhook(ctx, b.merchant.ID, epB.ID); return err }},
		{"the endpoint's previous secret", `webhook_endpoints SET previous_secret_sealed = secret_sealed,
  previous_secret_expires_at = now() + interval '1 hour' WHERE merchant_id = $1 AND $2::uuid IS NOT NULL`,
			func() error { _, err := webhooks.FindWebhook(ctx, a.merchant.ID, epA.ID); return err }},
		{"another merchant's creator", `creator_profiles d SET token_enc = s.token_enc FROM creator_profiles s
  WHERE s.merchant_id = $1 AND d.merchant_id = $2`,
			func() error { _, err := creators.FindCreator(ctx, b.merchant.ID, b.members[0].ID); return err }},
	}
	for _, c := range cases {
		if err := c.read(); err != nil {
			t.Fatalf("%s: before the copy: %v", c.name, err)
		}
		if _, err := pool.Exec(ctx, `UPDATE `+c.move, a.merchant.ID, b.merchant.ID); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err := c.read()
		if !errors.Is(err, secretbox.ErrWrongPlace) {
			t.Errorf("%s: read after the copy = %v, want secretbox.ErrWrongPlace", c.name, err)
		}
	}
}

// sealedValues are the stored sealed values, by place as UnreadableAt
// names it.
func sealedValues(t *testing.T, pool *pgxpool.Pool) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, q := range []struct{ table, key, cols string }{
		{"integration_settings", "provider", "account_token_enc, webhook_secret_enc, user_token_enc, user_secret_key_enc, client_secret_enc, basic_token_enc"},
		{"webhook_endpoints", "id::text", "secret_sealed, previous_secret_sealed"},
		{"creator_profiles", "member_id::text", "token_enc"},
	} {
		cols := strings.Split(q.cols, ", ")
		rows, err := pool.Query(context.Background(), `SELECT merchant_id::text, `+q.key+`, `+q.cols+` FROM `+q.table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var m, k string
			vals := make([][]byte, len(cols))
			dest := []any{&m, &k}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if v != nil {
					out[q.table+"."+cols[i]+" merchant "+m+" row "+k] = v
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRotateInBatches: with batches of 2 rows, every value under the old
// key or of the old format is re-sealed once, and opens where it is with
// the new key alone; a value no key opens is counted, named and left.
func TestRotateInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ts := mustTenants(t, 2, 2, 1)
	pool, keyA, keyB := ts[0].pool, secretbox.NewKey(), secretbox.NewKey()
	boxA := mustKeys(t, keyA)
	for i, s := range ts {
		if _, err := postgres.NewMerchantStore(pool, boxA).PutIntegration(ctx, s.merchant.ID, merchant.Integration{
			Provider: provider.Yampi, WebhookSecret: "hook", UserToken: "user", UserSecretKey: "key", StoreAlias: "loja"}); err != nil {
			t.Fatal(err)
		}
		for _, m := range s.members {
			if _, _, err := postgres.NewCreatorStore(pool, boxA).PutCreator(ctx, creator.Profile{MerchantID: s.merchant.ID, MemberID: m.ID, DisplayName: "C"}); err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 { // one value of the format before key ids
			if _, err := pool.Exec(ctx, `UPDATE integration_settings SET user_token_enc = $2 WHERE merchant_id = $1`,
				s.merchant.ID, testenv.SealLegacy(t, keyA, "legacy-user")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One value under a key nobody has.
	lost := ts[2]
	if _, err := pool.Exec(ctx, `UPDATE creator_profiles SET token_enc = $3 WHERE merchant_id = $1 AND member_id = $2`,
		lost.merchant.ID, lost.members[0].ID, mustKeys(t, secretbox.NewKey()).Seal("lost",
			postgres.SealedAt("creator_profiles", "token_enc", lost.merchant.ID, lost.members[0].ID.String()))); err != nil {
		t.Fatal(err)
	}
	before := sealedValues(t, pool)

	rot := postgres.NewSecretsRotation(pool, mustKeys(t, keyB, keyA))
	rot.Batch = 2
	got, err := rot.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 3 integrations × 3 secrets, 4 of 5 creators.
	want := postgres.Resealed{Resealed: 13, Unreadable: 1}
	if got.Resealed != want || got.Tables["integration_settings"].Resealed != 9 || got.Tables["creator_profiles"].Resealed != 4 {
		t.Errorf("Rotate = %+v, want %+v (9 integration secrets, 4 creator tokens)", got, want)
	}
	lostAt := "creator_profiles.token_enc merchant " + lost.merchant.ID.String() + " row " + lost.members[0].ID.String()
	if len(got.UnreadableAt) != 1 || got.UnreadableAt[0] != lostAt {
		t.Errorf("UnreadableAt = %q, want [%q]", got.UnreadableAt, lostAt)
	}

	boxB := mustKeys(t, keyB)
	after := sealedValues(t, pool)
	for place, v := range after {
		if place == lostAt {
			if string(v) != string(before[place]) {
				t.Errorf("the unreadable value was changed")
			}
			continue
		}
		if !boxB.Current(v) {
			t.Errorf("%s is not under the new key", place)
		}
	}
	for _, s := range ts[:2] {
		in, err := postgres.NewMerchantStore(pool, boxB).FindIntegration(ctx, s.merchant.ID, provider.Yampi)
		if err != nil || in.WebhookSecret != "hook" || in.UserSecretKey != "key" || (in.UserToken != "user" && in.UserToken != "legacy-user") {
			t.Errorf("with the new key alone: FindIntegration = %+v, %v", in, err)
		}
		for _, m := range s.members {
			if _, err := postgres.NewCreatorStore(pool, boxB).FindCreator(ctx, s.merchant.ID, m.ID); err != nil {
				t.Errorf("with the new key alone: FindCreator: %v", err)
			}
		}
	}

	again, err := rot.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Resealed != (postgres.Resealed{AlreadyCurrent: 13, Unreadable: 1}) {
		t.Errorf("second Rotate = %+v, want nothing re-sealed, 13 already current", again.Resealed)
	}
}

// TestRotateKeepsAConcurrentWrite: a value a running program writes
// between the rotation's read and its write is kept, not overwritten with
// the re-sealed old one.
func TestRotateKeepsAConcurrentWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 0)[0]
	pool, keyA, keyB := s.pool, secretbox.NewKey(), secretbox.NewKey()
	m := s.merchant.ID
	if _, err := postgres.NewMerchantStore(pool, mustKeys(t, keyA)).PutIntegration(ctx, m, merchant.Integration{
		Provider: provider.Guru, AccountToken: "old-account", UserToken: "old-user"}); err != nil {
		t.Fatal(err)
	}
	running := mustKeys(t, keyB, keyA) // the programs, restarted with the new key

	// A program's write, in a transaction that holds the row while the
	// rotation runs.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `UPDATE integration_settings SET account_token_enc = $2 WHERE merchant_id = $1 AND provider = 'guru'`,
		m, running.Seal("written-meanwhile", postgres.SealedAt("integration_settings", "account_token_enc", m, "guru"))); err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   postgres.Rotation
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := postgres.NewSecretsRotation(pool, running).Rotate(ctx)
		done <- result{r, err}
	}()
	// The rotation has read the old value and waits to write it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var waiting int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
  AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rotation never waited for the row")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if n := res.r.Tables["integration_settings"]; n.Rewritten != 1 || n.Resealed != 1 {
		t.Errorf("integration_settings: %+v, want the account token rewritten meanwhile and the user token re-sealed", n)
	}
	in, err := postgres.NewMerchantStore(pool, mustKeys(t, keyB)).FindIntegration(ctx, m, provider.Guru)
	if err != nil || in.AccountToken != "written-meanwhile" || in.UserToken != "old-user" {
		t.Errorf("after the rotation: %+v, %v; want the concurrent write kept and the other secret re-sealed", in, err)
	}
}

// TestEverySealedColumnIsRotated: each bytea column named *_enc or
// *_sealed (the names of sealed columns) is one the rotation re-seals, so
// a new one is not left under an old key.
func TestEverySealedColumnIsRotated(t *testing.T) {
	t.Parallel()
	rows, err := testenv.MustPool(t).Query(context.Background(), `SELECT table_name || '.' || column_name FROM information_schema.columns
WHERE table_schema = 'public' AND data_type = 'bytea' AND (column_name LIKE '%\_enc' OR column_name LIKE '%\_sealed')
ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := postgres.SealedColumns()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sealed columns in the schema %q, rotated %q", got, want)
	}
}
