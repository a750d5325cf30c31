package program_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/convida/convida/pkg/apperr"
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
		if err := program.Bootstrap(ctx, cfg, args, &out); err != nil {
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
	second := run("key", "create", "--merchant", created["merchant_id"].(string))
	revoked := run("key", "revoke", "--merchant", created["merchant_id"].(string), "--key-prefix", first[:8])
	if revoked["revoked"].(float64) != 1 {
		t.Errorf("revoke = %v", revoked)
	}
	if _, err := store.Authenticate(ctx, first); !apperr.Is(err, apperr.Unauthorized) {
		t.Errorf("revoked key: %v, want unauthorized", err)
	}
	if _, err := store.Authenticate(ctx, second["api_key"].(string)); err != nil {
		t.Errorf("the new key: %v", err)
	}
	for _, bad := range [][]string{
		{"merchant", "create", "--name", "X"},
		{"merchant", "create", "--name", "X", "--store-url", "ftp://x"},
		{"key", "create", "--merchant", "nope"},
		{"merchant", "delete"},
	} {
		if err := program.Bootstrap(ctx, cfg, bad, &bytes.Buffer{}); !errors.Is(err, program.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}

func TestLoadConfigRefusesInvalidSettings(t *testing.T) {
	t.Parallel()
	for k, v := range map[string]string{"KAFKA_PARTITIONS": "0", "SCHEDULER_INTERVAL": "soon", "LOG_LEVEL": "loud",
		"ACTION_TIMEOUT": "-1s", "REDEMPTION_RETRY_DELAYS": "5s,x", "INGEST_RATE_LIMIT": "-3", "KAFKA_SESSION_TIMEOUT": "1ms"} {
		_, err := program.LoadConfig(func(key string) string {
			if key == k {
				return v
			}
			return ""
		})
		if err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}
