package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

// stored is what the test sealed, as the stores read it back.
type stored struct {
	merchant    *merchant.Merchant
	guru, yampi merchant.Integration
	endpoint    *webhook.Endpoint // with a previous secret
	creator     *creator.Profile
}

// mustSealAll writes, with a box on key, every kind of sealed value:
// integration secrets of both providers, a webhook endpoint whose secret
// was rotated (so it has a previous one) and a creator token. The Guru
// user token is then replaced by one in the format before key ids.
func mustSealAll(t *testing.T, pool *pgxpool.Pool, key string) stored {
	t.Helper()
	ctx := context.Background()
	box, err := secretbox.FromBase64(key)
	if err != nil {
		t.Fatal(err)
	}
	s := stored{
		guru: merchant.Integration{Provider: provider.Guru, AccountToken: "guru-account-token", UserToken: "guru-user-token-legacy"},
		yampi: merchant.Integration{Provider: provider.Yampi, WebhookSecret: "yampi-webhook-secret", UserToken: "yampi-user-token",
			UserSecretKey: "yampi-secret-key", StoreAlias: "loja"},
	}
	s.merchant = testenv.MustMerchant(t, pool, box, merchant.Merchant{}, s.guru, s.yampi)
	c := testenv.MustCampaign(t, pool, s.merchant.ID, testenv.FixedCampaign(500, 7))
	m := &member.Member{MerchantID: s.merchant.ID, Email: "ana@example.com", Name: "Ana", CampaignID: c.ID}
	if err := postgres.NewMemberStore(pool).CreateMember(ctx, m, s.merchant.CodePrefix); err != nil {
		t.Fatal(err)
	}
	if s.creator, _, err = postgres.NewCreatorStore(pool, box).PutCreator(ctx, creator.Profile{MerchantID: s.merchant.ID, MemberID: m.ID, DisplayName: "Ana"}); err != nil {
		t.Fatal(err)
	}
	webhooks := postgres.NewWebhookStore(pool, box)
	ep := &webhook.Endpoint{MerchantID: s.merchant.ID, URL: "https://hooks.example.com/c", IsActive: true, Secret: webhook.NewSecret()}
	if err := webhooks.CreateWebhook(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if s.endpoint, err = webhooks.RotateWebhookSecret(ctx, s.merchant.ID, ep.ID, webhook.NewSecret(), time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE integration_settings SET user_token_enc = $2 WHERE merchant_id = $1 AND provider = 'guru'`,
		s.merchant.ID, testenv.SealLegacy(t, key, s.guru.UserToken)); err != nil {
		t.Fatal(err)
	}
	return s
}

// wantReadable checks that the stores, with box, read back every secret
// of s.
func (s stored) wantReadable(t *testing.T, pool *pgxpool.Pool, box *secretbox.Box, when string) {
	t.Helper()
	ctx := context.Background()
	for _, want := range []merchant.Integration{s.guru, s.yampi} {
		got, err := postgres.NewMerchantStore(pool, box).FindIntegration(ctx, s.merchant.ID, want.Provider)
		if err != nil || got.AccountToken != want.AccountToken || got.WebhookSecret != want.WebhookSecret ||
			got.UserToken != want.UserToken || got.UserSecretKey != want.UserSecretKey {
			t.Errorf("%s: %s integration = %+v, %v; want its secrets", when, want.Provider, got, err)
		}
	}
	ep, err := postgres.NewWebhookStore(pool, box).FindWebhook(ctx, s.merchant.ID, s.endpoint.ID)
	if err != nil || ep.Secret != s.endpoint.Secret || ep.PreviousSecret != s.endpoint.PreviousSecret || ep.PreviousSecret == "" {
		t.Errorf("%s: endpoint = %+v, %v; want its secret and previous secret", when, ep, err)
	}
	cr, err := postgres.NewCreatorStore(pool, box).FindCreator(ctx, s.merchant.ID, s.creator.MemberID)
	if err != nil || cr.Token != s.creator.Token {
		t.Errorf("%s: creator token = %+v, %v", when, cr, err)
	}
}

// mustConfigAndPool returns the default configuration on a fresh database,
// and a pool on it.
func mustConfigAndPool(t *testing.T) (program.Config, *pgxpool.Pool) {
	t.Helper()
	cfg, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = testenv.MustDatabase(t)
	pool, err := postgres.Open(context.Background(), cfg.DatabaseURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return cfg, pool
}

// TestSecretsRotate follows the documented rotation: everything sealed
// under key A; the programs restarted with SECRETS_KEY=B and
// SECRETS_KEY_PREVIOUS=A read every secret; `api secrets rotate` re-seals
// them all; B alone then reads them, and a second run re-seals nothing.
func TestSecretsRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keyA, keyB := secretbox.NewKey(), secretbox.NewKey()
	cfg, pool := mustConfigAndPool(t)
	if err := postgres.CheckSecretsKey(ctx, pool, mustBox(t, keyA)); err != nil { // the programs' first start, with A
		t.Fatal(err)
	}
	s := mustSealAll(t, pool, keyA)
	const sealed = 9 // guru 2, yampi 3, endpoint 2, creator 1, the key's check value

	cfg.SecretsKey, cfg.SecretsKeyPrevious = keyB, keyA
	rotating, err := program.NewBox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.wantReadable(t, pool, rotating, "SECRETS_KEY=B, SECRETS_KEY_PREVIOUS=A")

	rotate := func() map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := bootstrap(ctx, cfg, []string{"secrets", "rotate", "--batch", "1"}, &out); err != nil {
			t.Fatalf("secrets rotate: %v\n%s", err, out.String())
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("secrets rotate printed %q, not one JSON object", out.String())
		}
		return v
	}
	first := rotate()
	if first["resealed"] != float64(sealed) || first["already_current"] != float64(0) || first["unreadable"] != float64(0) {
		t.Errorf("first run = %v, want %d resealed", first, sealed)
	}
	tables, _ := first["tables"].(map[string]any)
	for table, n := range map[string]float64{"integration_settings": 5, "webhook_endpoints": 2, "creator_profiles": 1,
		"secrets_check": 1} {
		if got, _ := tables[table].(map[string]any); got["resealed"] != n {
			t.Errorf("first run, %s: %v, want %v resealed", table, got, n)
		}
	}

	cfg.SecretsKeyPrevious = ""
	onlyB, err := program.NewBox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.wantReadable(t, pool, onlyB, "SECRETS_KEY=B alone, after the rotation")
	if _, err := postgres.NewMerchantStore(pool, mustBox(t, keyA)).FindIntegration(ctx, s.merchant.ID, provider.Yampi); err == nil {
		t.Error("the old key still opens the rotated secrets")
	}

	second := rotate()
	if second["resealed"] != float64(0) || second["already_current"] != float64(sealed) {
		t.Errorf("second run = %v, want nothing resealed, %d already current", second, sealed)
	}
}

func mustBox(t *testing.T, key string) *secretbox.Box {
	t.Helper()
	box, err := secretbox.FromBase64(key)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// TestSecretsRotateUnreadable: a value neither key opens (while the keys
// open the database's check value) is named, the counts are printed, and
// the command fails.
func TestSecretsRotateUnreadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, pool := mustConfigAndPool(t)
	cfg.SecretsKey = secretbox.NewKey()
	if err := postgres.CheckSecretsKey(ctx, pool, mustBox(t, cfg.SecretsKey)); err != nil { // the programs' first start
		t.Fatal(err)
	}
	s := mustSealAll(t, pool, secretbox.NewKey()) // under a key forgotten since

	var out bytes.Buffer
	err := bootstrap(ctx, cfg, []string{"secrets", "rotate"}, &out)
	if err == nil || !strings.Contains(err.Error(), "8 sealed values open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS") {
		t.Fatalf("secrets rotate = %v, want the 8 unreadable values counted", err)
	}
	var v struct {
		Unreadable   int      `json:"unreadable"`
		UnreadableAt []string `json:"unreadable_at"`
	}
	if json.Unmarshal(out.Bytes(), &v) != nil || v.Unreadable != 8 || len(v.UnreadableAt) != 8 ||
		!strings.Contains(out.String(), "creator_profiles.token_enc merchant "+s.merchant.ID.String()) {
		t.Errorf("printed %s, want the 8 unreadable values counted and named", out.String())
	}
}

// TestMalformedKeysExit2 runs the api and its rotate command with a
// malformed SECRETS_KEY_PREVIOUS, or without SECRETS_KEY: each exits 2
// with one line naming the setting, before connecting to anything.
func TestMalformedKeysExit2(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "api")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/convida/convida/cmd/api").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, c := range []struct {
		args          []string
		current, prev string
		want          string
	}{
		{nil, secretbox.NewKey(), "not-base64!", "api: SECRETS_KEY_PREVIOUS is not base64"},
		{nil, secretbox.NewKey(), short, "api: SECRETS_KEY_PREVIOUS must be 32 bytes"},
		{[]string{"secrets", "rotate"}, secretbox.NewKey(), short, "api: SECRETS_KEY_PREVIOUS must be 32 bytes"},
		{[]string{"secrets", "rotate"}, "", "", "api: SECRETS_KEY is required"},
	} {
		cmd := exec.Command(bin, c.args...)
		// Nothing listens on these: the keys are checked first.
		cmd.Env = append(os.Environ(), "DATABASE_URL=postgres://nobody@127.0.0.1:1/none?sslmode=disable",
			"REDIS_URL=redis://127.0.0.1:1/0", "KAFKA_BROKERS=127.0.0.1:1", "SECRETS_KEY="+c.current, "SECRETS_KEY_PREVIOUS="+c.prev)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := -1
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		}
		line := stderr.String()
		if code != 2 || !strings.HasPrefix(line, c.want) || strings.Count(line, "\n") != 1 {
			t.Errorf("api %v: exit %d, stderr %q; want 2 and one line %q…", c.args, code, line, c.want)
		}
		if c.current != "" && strings.Contains(line, c.current) {
			t.Errorf("api %v printed SECRETS_KEY", c.args)
		}
	}
}
