package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

func TestBootstrapCommands(t *testing.T) {
	t.Parallel()
	cfg, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = testenv.MustDatabase(t)
	ctx := context.Background()
	run := func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := bootstrap(ctx, cfg, args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("%v printed %q, not one JSON object", args, out.String())
		}
		return v
	}
	created := run("merchant", "create", "--name", "Loja Exemplo", "--store-url", "https://loja.example.com")
	for _, k := range []string{"merchant_id", "api_key", "dashboard_email", "dashboard_password"} {
		if s, _ := created[k].(string); s == "" {
			t.Errorf("merchant create: %s missing in %v", k, created)
		}
	}
	if created["dashboard_email"] != "owner@loja.example.com" {
		t.Errorf("dashboard_email = %v", created["dashboard_email"])
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := postgres.NewMerchantStore(pool, nil)
	first := created["api_key"].(string)
	if _, err := store.Authenticate(ctx, first); err != nil {
		t.Fatalf("the printed key does not authenticate: %v", err)
	}
	id := created["merchant_id"].(string)
	second := run("key", "create", "--merchant", id)
	revoked := run("key", "revoke", "--merchant", id, "--key-prefix", first[:8])
	if revoked["revoked"].(float64) != 1 {
		t.Errorf("revoke = %v", revoked)
	}
	if _, err := store.Authenticate(ctx, first); !apperr.Is(err, apperr.Unauthorized) {
		t.Errorf("revoked key: %v, want unauthorized", err)
	}
	if _, err := store.Authenticate(ctx, second["api_key"].(string)); err != nil {
		t.Errorf("the new key: %v", err)
	}

	// The commands act as the system, labelled cli, in the merchant's trail.
	events, _, err := postgres.NewAuditStore(pool).ListAuditEvents(ctx, uuid.MustParse(id), audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range events {
		actions = append(actions, e.Action)
		if e.Actor != (audit.Actor{Type: audit.ActorSystem, Label: "cli"}) || e.IP != "" || e.Target.Type != audit.TargetAPIKey {
			t.Errorf("event %+v, want an API key's, by the system labelled cli, without an address", e)
		}
	}
	if got := strings.Join(actions, " "); got != "api_key.revoked api_key.created api_key.created" {
		t.Errorf("the merchant's trail: %s, want the two keys created and the first revoked, newest first", got)
	}

	listed := run("key", "list", "--merchant", id)
	if listed["merchant_id"] != id {
		t.Errorf("key list merchant_id = %v, want %s", listed["merchant_id"], id)
	}
	keys, _ := listed["keys"].([]any)
	if len(keys) != 2 {
		t.Fatalf("key list = %v, want the two keys", listed)
	}
	k0, k1 := keys[0].(map[string]any), keys[1].(map[string]any)
	if k0["key_prefix"] != first[:8] || k0["revoked_at"] == nil || k0["last_used_at"] == nil {
		t.Errorf("first key %v, want its prefix, used and revoked", k0)
	}
	if k1["key_prefix"] != second["key_prefix"] || k1["revoked_at"] != nil || k1["created_at"] == "" {
		t.Errorf("second key %v, want its prefix, created and not revoked", k1)
	}
	for _, k := range keys {
		if len(k.(map[string]any)) != 4 {
			t.Errorf("listed key %v, want exactly key_prefix, created_at, last_used_at, revoked_at", k)
		}
	}
	raw, _ := json.Marshal(listed)
	for _, secret := range []string{first, second["api_key"].(string)} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("key list printed a key: %s", raw)
		}
	}
	if none := run("key", "list", "--merchant", "00000000-0000-0000-0000-000000000001"); len(none["keys"].([]any)) != 0 {
		t.Errorf("an unknown merchant's keys = %v, want []", none)
	}

	for _, bad := range [][]string{
		{"merchant", "create", "--name", "X"},
		{"merchant", "create", "--name", "X", "--store-url", "ftp://x"},
		{"merchant", "create", "--name", "X", "--store-url", "https://x.example.com", "--code-prefix", "A1"},
		{"key", "create", "--merchant", "nope"},
		{"key", "list"},
		{"key", "revoke", "--merchant", id},
		{"merchant", "delete"},
		{"merchant", "create", "--bogus"},
		{"key"},
	} {
		if err := bootstrap(ctx, cfg, bad, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}
