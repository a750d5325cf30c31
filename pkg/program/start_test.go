package program_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// TestStartWaitsForPostgresAndTheBrokers: a program started while
// PostgreSQL and the broker do not answer does not fail: /readyz answers
// 503 "starting" naming both, one warning per dependency names its
// setting, and once both answer Start migrates, creates the topics and
// returns; /readyz is then ready.
func TestStartWaitsForPostgresAndTheBrokers(t *testing.T) {
	t.Parallel()
	dbURL, proxy := testenv.MustPostgresProxy(t)
	proxy.Cut()
	broker := testenv.StartBrokerServer(t)
	broker.Stop()
	cfg := config(t)
	cfg.DatabaseURL, cfg.KafkaBrokers = dbURL, broker.Addrs()
	core, logs := observer.New(zap.InfoLevel)
	d, err := program.New(cfg, zap.New(core), "test")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer d.Close()
	ops := httptest.NewServer(d.OpsRouter())
	defer ops.Close()
	started := make(chan error, 1)
	go func() { started <- d.Start(t.Context()) }()

	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-started:
		t.Fatalf("Start returned %v with PostgreSQL and the broker down, want it to wait", err)
	default:
	}
	wantReady(t, ops.URL, 503, "starting", map[string]string{"postgres": "unavailable", "kafka": "unavailable", "redis": "ok"})
	for setting, dep := range map[string]string{"DATABASE_URL": "postgres", "KAFKA_BROKERS": "kafka"} {
		if n := logs.FilterField(zap.String("setting", setting)).FilterLevelExact(zap.WarnLevel).Len(); n != 1 {
			t.Errorf("%d warnings naming %s in the first 1.5 s of waiting for %s, want 1 (at most one every 30 s)", n, setting, dep)
		}
	}

	proxy.Restore()
	broker.Start()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("Start = %v once both answer, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Start still waiting 30 s after PostgreSQL and the broker came back")
	}
	var tables int
	if err := d.Pool.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.tables WHERE table_name = 'goose_db_version'`).Scan(&tables); err != nil || tables != 1 {
		t.Errorf("migrations not applied: goose_db_version tables = %d (%v)", tables, err)
	}
	time.Sleep(2 * time.Second) // the broker probe's last answer expires
	wantReady(t, ops.URL, 200, "ready", map[string]string{"postgres": "ok", "kafka": "ok", "redis": "ok"})

	// The operator's port answers what it does not serve in the error
	// envelope too.
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{{http.MethodGet, "/nothing", 404, "not_found"}, {http.MethodPost, "/metrics", 405, "method_not_allowed"}} {
		req, _ := http.NewRequest(c.method, ops.URL+c.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code string } }
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != c.status || err != nil || body.Error.Code != c.code {
			t.Errorf("%s %s on the operator's port: %d %q (%v), want %d %s", c.method, c.path, res.StatusCode, body.Error.Code, err, c.status, c.code)
		}
	}
}

// TestStartGivesUpWhenAsked: Start waits until its context ends, and
// returns that context's error.
func TestStartGivesUpWhenAsked(t *testing.T) {
	t.Parallel()
	_, proxy := testenv.MustPostgresProxy(t)
	proxy.Cut()
	cfg := config(t)
	cfg.DatabaseURL, cfg.KafkaBrokers = "postgres://postgres@"+proxy.Addr()+"/x?sslmode=disable", testenv.MustBroker(t)
	d, err := program.New(cfg, zap.NewNop(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := d.Start(ctx); err != context.DeadlineExceeded {
		t.Errorf("Start = %v, want context.DeadlineExceeded", err)
	}
}

// TestNewRefusesInvalidSettings: a setting that cannot work is an error at
// once, naming the setting, before anything is waited for.
func TestNewRefusesInvalidSettings(t *testing.T) {
	t.Parallel()
	for setting, change := range map[string]func(*program.Config){
		"DATABASE_URL":  func(c *program.Config) { c.DatabaseURL = "postgres://%zz" },
		"REDIS_URL":     func(c *program.Config) { c.RedisURL = "http://nope" },
		"SECRETS_KEY":   func(c *program.Config) { c.SecretsKey = "short" },
		"KAFKA_BROKERS": func(c *program.Config) { c.KafkaBrokers = nil },
	} {
		cfg := config(t)
		cfg.DatabaseURL, cfg.KafkaBrokers = "postgres://postgres@127.0.0.1:1/x", []string{"127.0.0.1:1"}
		change(&cfg)
		d, err := program.New(cfg, zap.NewNop(), "test")
		if err == nil {
			d.Close()
			t.Errorf("%s invalid: New accepted it", setting)
			continue
		}
		if !strings.Contains(err.Error(), setting) {
			t.Errorf("%s invalid: New = %v, want the setting named", setting, err)
		}
	}
}

// config is the default configuration with a secrets key and the test
// Redis.
func config(t *testing.T) program.Config {
	t.Helper()
	cfg, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.SecretsKey, cfg.RedisURL = secretbox.NewKey(), testenv.RedisURL()
	return cfg
}

func wantReady(t *testing.T, base string, status int, state string, checks map[string]string) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != status || body.Status != state || !reflect.DeepEqual(body.Checks, checks) {
		t.Errorf("/readyz = %d %s %v, want %d %s %v", res.StatusCode, body.Status, body.Checks, status, state, checks)
	}
}
