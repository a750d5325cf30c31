// Package program wires the five programs of Convida (api, ingest, ledger,
// dispatcher, scheduler) from configuration: each cmd/<program>/main.go and
// cmd/standalone call it, and so do the end-to-end tests, so what is tested
// is what runs.
package program

import (
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/webhook"
)

// Config is every setting, read from the environment (decision 24).
type Config struct {
	DatabaseURL     string
	RedisURL        string
	KafkaBrokers    []string // empty: standalone embeds a broker
	KafkaPartitions int
	// KafkaSessionTimeout is how long a silent consumer keeps its
	// partitions before the group rebalances them (a crashed worker's
	// partitions wait this long).
	KafkaSessionTimeout time.Duration
	HTTPAddr            string
	IngestAddr          string
	MetricsAddr         string // ledger, dispatcher and scheduler serve /healthz, /readyz, /metrics here
	PublicURL           string
	IngestPublicURL     string
	LogLevel            string
	SchedulerInterval   time.Duration
	DataDir             string
	SecretsKey          string // base64 of 32 bytes
	LedgerMaxBatch      int
	LedgerGroup         string
	// RedemptionRetryDelays are the pauses between tries of a platform
	// call (empty: about 2 minutes over 5 tries).
	RedemptionRetryDelays []time.Duration
	// ActionTimeout is how long the API waits for a wallet action.
	ActionTimeout time.Duration
	// IngestRateLimit is the per-merchant ceiling of inbound deliveries
	// per second; 0 is none (platforms burst during a sale).
	IngestRateLimit int
	DispatcherGroup string
	// WebhookAllowPrivateNetworks lets webhook deliveries reach private
	// addresses (development and tests only).
	WebhookAllowPrivateNetworks bool
	// WebhookCAFile is a PEM root trusted for receivers besides the
	// system's; WebhookRootCAs is the resulting pool (nil: the system's).
	WebhookCAFile  string
	WebhookRootCAs *x509.CertPool
	// WebhookRetrySchedule is the wait before each retry
	// (WEBHOOK_RETRY_SCHEDULE, comma-separated Go durations).
	WebhookRetrySchedule []time.Duration
	// WebhookConcurrency bounds the requests in flight per endpoint.
	WebhookConcurrency int
	// WebhookLease is how long a job held by a dispatcher stays invisible
	// to the retry sweep: a crashed dispatcher's jobs come back after it.
	WebhookLease time.Duration
}

// LoadConfig reads the configuration with getenv (os.Getenv in main).
// Every setting has a default that works on a developer machine; an
// invalid value is an error naming the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		DatabaseURL:     get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/convida?sslmode=disable"),
		RedisURL:        get("REDIS_URL", "redis://127.0.0.1:6379/0"),
		HTTPAddr:        get("HTTP_ADDR", ":8080"),
		IngestAddr:      get("INGEST_ADDR", ":8081"),
		MetricsAddr:     get("METRICS_ADDR", ":9090"),
		LogLevel:        get("LOG_LEVEL", "info"),
		DataDir:         get("DATA_DIR", ".data"),
		SecretsKey:      get("SECRETS_KEY", ""),
		LedgerGroup:     get("LEDGER_GROUP", "convida-ledger"),
		DispatcherGroup: get("DISPATCHER_GROUP", "convida-dispatcher"),
	}
	c.PublicURL = get("PUBLIC_URL", "http://localhost"+portOf(c.HTTPAddr))
	c.IngestPublicURL = get("INGEST_PUBLIC_URL", "http://localhost"+portOf(c.IngestAddr))
	if b := get("KAFKA_BROKERS", ""); b != "" {
		for _, s := range strings.Split(b, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.KafkaBrokers = append(c.KafkaBrokers, s)
			}
		}
	}
	var err error
	if c.KafkaPartitions, err = intSetting(get, "KAFKA_PARTITIONS", 16, 1, 1024); err != nil {
		return c, err
	}
	if c.IngestRateLimit, err = intSetting(get, "INGEST_RATE_LIMIT", 0, 0, 1_000_000); err != nil {
		return c, err
	}
	if c.LedgerMaxBatch, err = intSetting(get, "LEDGER_MAX_BATCH", 500, 1, 10000); err != nil {
		return c, err
	}
	if c.SchedulerInterval, err = time.ParseDuration(get("SCHEDULER_INTERVAL", "5s")); err != nil || c.SchedulerInterval <= 0 {
		return c, fmt.Errorf("SCHEDULER_INTERVAL: want a positive Go duration such as 5s, got %q", get("SCHEDULER_INTERVAL", ""))
	}
	if c.KafkaSessionTimeout, err = time.ParseDuration(get("KAFKA_SESSION_TIMEOUT", "10s")); err != nil || c.KafkaSessionTimeout < 500*time.Millisecond {
		return c, fmt.Errorf("KAFKA_SESSION_TIMEOUT: want a Go duration of at least 500ms, got %q", get("KAFKA_SESSION_TIMEOUT", ""))
	}
	if v := get("REDEMPTION_RETRY_DELAYS", ""); v != "" {
		for _, part := range strings.Split(v, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil || d < 0 {
				return c, fmt.Errorf("REDEMPTION_RETRY_DELAYS: want comma-separated Go durations such as 5s,15s,30s,70s, got %q", v)
			}
			c.RedemptionRetryDelays = append(c.RedemptionRetryDelays, d)
		}
	}
	if c.ActionTimeout, err = time.ParseDuration(get("ACTION_TIMEOUT", "10s")); err != nil || c.ActionTimeout <= 0 {
		return c, fmt.Errorf("ACTION_TIMEOUT: want a positive Go duration such as 10s, got %q", get("ACTION_TIMEOUT", ""))
	}
	if c.WebhookAllowPrivateNetworks, err = strconv.ParseBool(get("WEBHOOK_ALLOW_PRIVATE_NETWORKS", "false")); err != nil {
		return c, fmt.Errorf("WEBHOOK_ALLOW_PRIVATE_NETWORKS: want true or false, got %q", get("WEBHOOK_ALLOW_PRIVATE_NETWORKS", ""))
	}
	// Loaded here so that an unreadable file stops the program at start.
	if c.WebhookCAFile = get("WEBHOOK_CA_FILE", ""); c.WebhookCAFile != "" {
		if c.WebhookRootCAs, err = webhook.LoadCAFile(c.WebhookCAFile); err != nil {
			return c, fmt.Errorf("WEBHOOK_CA_FILE: %w", err)
		}
	}
	c.WebhookRetrySchedule = webhook.DefaultSchedule
	if v := get("WEBHOOK_RETRY_SCHEDULE", ""); v != "" {
		if c.WebhookRetrySchedule, err = webhook.ParseSchedule(v); err != nil {
			return c, fmt.Errorf("WEBHOOK_RETRY_SCHEDULE: %w", err)
		}
	}
	if c.WebhookConcurrency, err = intSetting(get, "WEBHOOK_ENDPOINT_CONCURRENCY", 16, 1, 1024); err != nil {
		return c, err
	}
	if c.WebhookLease, err = time.ParseDuration(get("WEBHOOK_LEASE", "5m")); err != nil || c.WebhookLease < time.Second {
		return c, fmt.Errorf("WEBHOOK_LEASE: want a Go duration of at least 1s such as 5m, got %q", get("WEBHOOK_LEASE", ""))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c, fmt.Errorf("LOG_LEVEL: want debug, info, warn or error, got %q", c.LogLevel)
	}
	return c, nil
}

func intSetting(get func(string, string) string, key string, def, lo, hi int) (int, error) {
	s := get(key, strconv.Itoa(def))
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s: want an integer from %d to %d, got %q", key, lo, hi, s)
	}
	return n, nil
}

func portOf(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i:]
	}
	return ""
}

// Exit prints one clear line for an invalid setting or a failed start and
// exits with status 2 (decision 24).
func Exit(program string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
	os.Exit(2)
}
