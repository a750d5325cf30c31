package program

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/embeddedbroker"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/secretbox"
)

// Standalone runs the whole pipeline in one process for local use: an
// embedded persistent broker unless KAFKA_BROKERS is set, a SECRETS_KEY
// generated and kept in DATA_DIR unless set, a demo merchant on first run,
// and every role. It binds HTTP_ADDR, INGEST_ADDR and METRICS_ADDR first
// (bind): a taken port is its error, before anything else starts. Like
// Main, it waits for a PostgreSQL that does not answer yet. It prints the
// URLs on out once the demo merchant is there, and returns nil on SIGINT
// or SIGTERM once drained (Ctrl-C: exit 0, so make run prints no error);
// a second signal during the drain ends the process at once.
func Standalone(out io.Writer) error {
	tuneGC()
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		return err
	}
	// Before the ports: a second `make run` is told the data directory
	// is taken, not that a port is.
	held, err := lockDataDir(cfg.DataDir, false)
	if err != nil {
		return err
	}
	defer func() { _ = held.Close() }()
	ls, err := bind(cfg)
	if err != nil {
		return err
	}
	defer ls.Close()
	log, err := NewLogger(cfg.LogLevel)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // the next signal gets Go's default: the process ends
	keyFile := filepath.Join(cfg.DataDir, "secrets.key")
	if cfg.SecretsKey == "" {
		if err := refuseForeignDatabase(ctx, cfg, keyFile); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("DATA_DIR: %w", err)
	}
	if held == nil {
		if held, err = lockDataDir(cfg.DataDir, true); err != nil {
			return err
		}
	}
	if cfg.SecretsKey == "" {
		if cfg.SecretsKey, err = keepSecretsKey(keyFile); err != nil {
			return err
		}
	}
	if len(cfg.KafkaBrokers) == 0 {
		broker, err := embeddedbroker.Start(embeddedbroker.Config{DataDir: filepath.Join(cfg.DataDir, "kafka"),
			Partitions: cfg.KafkaPartitions, Logger: log.Named("broker")})
		if err != nil {
			return fmt.Errorf("embedded broker: %w", err)
		}
		defer broker.Close()
		cfg.KafkaBrokers = broker.Addrs()
	}
	d, err := New(cfg, log, "standalone")
	if err != nil {
		return err
	}
	defer d.Close()
	// The demo merchant needs the database: after Start, before the
	// banner; the servers serve from the start (503 until then).
	demo := func(ctx context.Context, d *Deps) error {
		if err := d.WaitStarted(ctx); err != nil {
			return err
		}
		dm, err := demoMerchant(ctx, d)
		if err != nil {
			return err
		}
		printBanner(out, cfg, dm)
		return RunRoles(ctx, d, RunLedger, RunRecorder, RunDispatcher, RunScheduler)
	}
	return RunRoles(ctx, d, ls.runOps, AfterStart(ls.runAPI, ls.runIngest, demo))
}

// refuseForeignDatabase refuses to make a new key when the key file is
// missing but the database already holds merchants or a key's check value:
// its secrets were sealed with the key of another data directory (DATA_DIR
// removed, the database kept). A new key could not open them, and a second
// demo merchant would be created beside the first. It creates nothing.
func refuseForeignDatabase(ctx context.Context, cfg Config, keyFile string) error {
	if _, err := os.Stat(keyFile); !errors.Is(err, os.ErrNotExist) {
		return nil // the key file is there (or unreadable: keepSecretsKey says so)
	}
	inUse, err := postgres.DatabaseInUse(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if !inUse {
		return nil
	}
	name, host, err := postgres.DatabaseOf(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	return fmt.Errorf(`%[1]s has no secrets.key and SECRETS_KEY is not set, but the database %[2]q on %[3]s (DATABASE_URL) already has merchants.
Its secrets were sealed with the key of the data directory it first ran with, kept in that directory's secrets.key;
a new key could not open them (its integrations would fail) and a second demo merchant would be created.
Nothing was created. Either:
  - restore that secrets.key into %[1]s, or set SECRETS_KEY to the key it held; or
  - start over: "make reset" drops the database %[2]q and removes %[1]s together (everything in them is lost)`,
		cfg.DataDir, name, host)
}

// Reset drops the standalone's database (DATABASE_URL) and removes its
// DATA_DIR, after saying so on out: "make reset", to start over. It is a
// developer's command: it refuses a database on another host, and a
// DATA_DIR that is the root, the home or the working directory.
func Reset(out io.Writer) error {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		return err
	}
	name, host, err := postgres.DatabaseOf(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	if !localHost(host) {
		return fmt.Errorf("DATABASE_URL names a database on %s: reset drops only a database on this machine (drop it yourself if you mean it)", host)
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("DATA_DIR: %w", err)
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	if dir == "/" || dir == home || dir == wd {
		return fmt.Errorf("DATA_DIR is %s: reset removes only a data directory of its own", dir)
	}
	held, err := lockDataDir(dir, false) // not from under a running standalone
	if err != nil {
		return err
	}
	defer func() { _ = held.Close() }()
	fmt.Fprintf(out, "reset: dropping the database %q on %s (DATABASE_URL) and removing %s (DATA_DIR)\n", name, host, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := postgres.DropDatabase(ctx, cfg.DatabaseURL); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("DATA_DIR: %w", err)
	}
	fmt.Fprintln(out, "reset: done; the next start makes a new key and a new demo merchant")
	return nil
}

// localHost reports whether a database host is this machine: a loopback
// name or address, or a Unix socket directory.
func localHost(host string) bool {
	if host == "localhost" || strings.HasPrefix(host, "/") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// keepSecretsKey reads the key file, creating it with a fresh key when
// missing.
func keepSecretsKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	key := secretbox.NewKey()
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", err
	}
	return key, nil
}

// demo is the demo merchant of a standalone data directory.
type demo struct {
	merchant.Credentials
	FirstRun bool
	File     string
}

// demoMerchant creates the demo merchant on first run and keeps its
// credentials in DATA_DIR/demo-merchant.json (mode 0600) so later runs can
// point to them. A data directory whose database was reset gets a new one.
func demoMerchant(ctx context.Context, d *Deps) (demo, error) {
	dm := demo{File: filepath.Join(d.Config.DataDir, "demo-merchant.json")}
	store := postgres.NewMerchantStore(d.Pool, d.Box)
	if kept, err := merchant.ReadCredentials(dm.File); err == nil {
		exists, err := merchantExists(ctx, store, kept.MerchantID)
		if err != nil {
			return dm, err
		}
		if exists {
			dm.Credentials = kept
			return dm, nil
		}
	}
	created, err := merchant.Register(ctx, store, &merchant.Merchant{Name: "Loja Demo", StoreURL: "https://loja-demo.example.com", CodePrefix: "DEMO"})
	if err != nil {
		return dm, fmt.Errorf("demo merchant: %w", err)
	}
	dm.Credentials, dm.FirstRun = created, true
	if err := created.WriteFile(dm.File); err != nil {
		return dm, err
	}
	d.Log.Info("demo merchant created", zap.String("merchant_id", created.MerchantID))
	return dm, nil
}

// merchantExists reports whether id names a stored merchant; an id that
// does not parse names none.
func merchantExists(ctx context.Context, store *postgres.MerchantStore, id string) (bool, error) {
	mid, err := uuid.Parse(id)
	if err != nil {
		return false, nil
	}
	_, err = store.FindMerchantByID(ctx, mid)
	if apperr.Is(err, apperr.NotFound) {
		return false, nil
	}
	return err == nil, err
}

func printBanner(out io.Writer, cfg Config, dm demo) {
	fmt.Fprintf(out, `
Convida standalone is running (Ctrl-C stops it).

  API        %s/api/v1
  Dashboard  %s/dashboard
  Ingest     %s/api/webhooks/{%s}/%s
  Health     %s/healthz
  Operator   %s/readyz   %s/metrics
  Kafka      %s
  Data       %s

`, cfg.PublicURL, cfg.PublicURL, cfg.IngestPublicURL, strings.Join(provider.Names(), "|"), dm.MerchantID, cfg.PublicURL, opsURL(cfg.MetricsAddr), opsURL(cfg.MetricsAddr),
		strings.Join(cfg.KafkaBrokers, ","), cfg.DataDir)
	if dm.FirstRun {
		fmt.Fprintf(out, "Demo merchant created (the API key is shown once; it is also kept in %s):\n", dm.File)
	} else {
		fmt.Fprintf(out, "Demo merchant (credentials kept in %s):\n", dm.File)
	}
	fmt.Fprintf(out, "  export MERCHANT_ID=%s\n  export API_KEY=%s\n\n", dm.MerchantID, dm.APIKey)
	fmt.Fprintf(out, "Dashboard sign-in (%s/dashboard):\n  Email     %s\n  Password  %s\n\n",
		cfg.PublicURL, dm.DashboardEmail, dm.DashboardPassword)
}

// opsURL is the operator's base URL on METRICS_ADDR (":9090" is
// http://localhost:9090).
func opsURL(addr string) string {
	if strings.HasPrefix(addr, ":") {
		addr = "localhost" + addr
	}
	return "http://" + addr
}
