// Package program does wiring only: it reads the configuration (Settings,
// LoadConfig), opens the connections (Open), builds the roles from them
// and runs them (Main, RunRoles). Each cmd/<program>/main.go and
// cmd/standalone call it, and so do the end-to-end tests and the bench, so
// what is tested is what runs.
//
// Each role (API, Ingest, Ledger, Events, Redemptions, Scheduler) is a
// value built from Deps whose fields a test or the bench may replace
// before Run: a wrapped store, a clock, a middleware over the batch
// handler. No business rule, wire format or consumer body lives here: the
// message contracts are in pkg/topic, the consumers in their domain
// packages (ledger.Worker, redemption.Consumer, dispatch.Dispatcher), the
// merchant's rules in pkg/merchant, and the administrative commands in
// cmd/api.
package program

import (
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/retry"
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
	LedgerLinger        time.Duration // see ledger.Worker.Linger
	LedgerGroup         string
	// RedemptionRetryDelays are the pauses between tries of a platform
	// call (empty: about 2 minutes over 5 tries).
	RedemptionRetryDelays []time.Duration
	// CouponRetryDelays are the pauses between tries of provisioning a
	// referee coupon at a platform (empty: as REDEMPTION_RETRY_DELAYS'
	// default); CouponPollInterval is how often the dispatcher looks for
	// coupons to provision.
	CouponRetryDelays  []time.Duration
	CouponPollInterval time.Duration
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
	// A dispatcher renews the lease of a delivery in flight every third of
	// it, so it may be shorter than an attempt.
	WebhookLease time.Duration
	// PlatformAllowPrivateNetworks lets the platforms' API calls, and
	// the api_url a merchant sets, reach loopback and private addresses
	// (development and tests only).
	PlatformAllowPrivateNetworks bool
	// TrustedProxies are the operator's proxies whose X-Forwarded-For is
	// believed (TRUSTED_PROXIES); the zero Resolver believes none.
	TrustedProxies clientip.Resolver
	// AuthFailureLimit is the failed authentications a client address may
	// make per minute at the API, and for each merchant at the ingest,
	// before 429 (AUTH_FAILURE_LIMIT); 0 is none.
	AuthFailureLimit int
	// RetentionInterval is how often the scheduler's leader sweeps what
	// has outlived its retention (RETENTION_INTERVAL); Retention is how
	// long each kind of record is kept.
	RetentionInterval time.Duration
	Retention         Retention
	// ReconcileInterval is how often the scheduler's leader pulls each
	// integration's recent sales from its platform (RECONCILE_INTERVAL);
	// ReconcileWindow is how far back each run looks (RECONCILE_WINDOW).
	ReconcileInterval time.Duration
	ReconcileWindow   time.Duration
	// ReconcileMaxDuration and ReconcileMaxPages bound one run
	// (RECONCILE_MAX_DURATION, RECONCILE_MAX_PAGES): past either it ends
	// failed, its slot free for another merchant. ReconcileCooldown is
	// how long after a run's start the next one of the integration may be
	// asked for (RECONCILE_COOLDOWN; 0: at once).
	ReconcileMaxDuration time.Duration
	ReconcileMaxPages    int
	ReconcileCooldown    time.Duration
	// SecretsKeyPrevious is the key being rotated away from
	// (SECRETS_KEY_PREVIOUS): secrets sealed with it still open.
	SecretsKeyPrevious string
	// Mail is the member portal's SMTP server (portal.go).
	Mail MailConfig
}

// Retention is how long each kind of record is kept before the retention
// sweep deletes (or, for buyer data, clears) it; 0 keeps it forever.
type Retention struct {
	InboundDeliveries time.Duration // RETENTION_INBOUND_DELIVERIES
	WebhookAttempts   time.Duration // RETENTION_WEBHOOK_ATTEMPTS
	Outbox            time.Duration // RETENTION_OUTBOX: relayed events only
	ProcessedCommands time.Duration // RETENTION_PROCESSED_COMMANDS
	BuyerData         time.Duration // RETENTION_BUYER_DATA: names, e-mails, documents on referrals
	AuditEvents       time.Duration // RETENTION_AUDIT_EVENTS
}

// Setting is one environment variable of the programs: its name, its
// default ("" is none, or one Meaning explains) and what it means. The
// table Settings feeds both LoadConfig's defaults and the help text.
type Setting struct {
	Name    string
	Default string
	Meaning string
	// Programs are the programs that read it besides standalone, which
	// reads them all; nil is every one, the api's administrative commands
	// ("bootstrap") included.
	Programs []string
}

// Settings are every setting, in the order the help lists them.
var Settings = []Setting{
	{Name: "DATABASE_URL", Default: "postgres://postgres@127.0.0.1:5432/convida?sslmode=disable",
		Meaning: "PostgreSQL; the database is created if missing and migrated at start"},
	{Name: "REDIS_URL", Default: "redis://127.0.0.1:6379/0",
		Meaning:  "Redis: dedupe, rate limits, idempotency, results fast path; the service works without it",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "KAFKA_BROKERS", Meaning: "comma-separated host:port list; required, except by standalone, which embeds a broker when empty",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "KAFKA_PARTITIONS", Default: "8", Meaning: "partitions of the topics created at start (1 to 1024)",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "KAFKA_SESSION_TIMEOUT", Default: "10s", Meaning: "how long a silent consumer keeps its partitions before the group rebalances them (at least 500ms)",
		Programs: []string{"ledger", "dispatcher"}},
	{Name: "HTTP_ADDR", Default: ":8080", Meaning: "listen address of the API", Programs: []string{"api"}},
	{Name: "INGEST_ADDR", Default: ":8081", Meaning: "listen address of the ingest (platform webhooks)", Programs: []string{"ingest"}},
	{Name: "METRICS_ADDR", Default: "127.0.0.1:9090", Meaning: "address of /metrics and the detailed /readyz, never on a public port; bind it to a private interface",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "PUBLIC_URL", Meaning: "how clients reach the API (empty: http://localhost and the port of HTTP_ADDR); https in production: it turns on Strict-Transport-Security, and an http one is warned of at start", Programs: []string{"api"}},
	{Name: "INGEST_PUBLIC_URL", Meaning: "how platforms reach the ingest (empty: http://localhost and the port of INGEST_ADDR)", Programs: []string{"api"}},
	{Name: "SECRETS_KEY", Meaning: "base64 of 32 random bytes (openssl rand -base64 32) that encrypts provider secrets; required, except by standalone, which generates one into DATA_DIR",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "SECRETS_KEY_PREVIOUS", Meaning: "the key being rotated away from: secrets sealed with it still open until `api secrets rotate` has sealed them all with SECRETS_KEY",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "DATA_DIR", Default: ".data", Meaning: "standalone's broker data, key file and demo merchant credentials", Programs: []string{}},
	{Name: "LOG_LEVEL", Default: "info", Meaning: "debug, info, warn or error",
		Programs: []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}},
	{Name: "SCHEDULER_INTERVAL", Default: "5s", Meaning: "how often warranties are swept and due webhook retries woken", Programs: []string{"scheduler"}},
	{Name: "LEDGER_MAX_BATCH", Default: "500", Meaning: "most commands applied in one ledger transaction (1 to 10000)", Programs: []string{"ledger"}},
	{Name: "LEDGER_LINGER", Default: "20ms", Meaning: "how long a ledger transaction of fewer than 256 commands waits for more partitions' batches (0 to 1s; 0 never waits)", Programs: []string{"ledger"}},
	{Name: "LEDGER_GROUP", Default: "convida-ledger", Meaning: "consumer group id of the ledger", Programs: []string{"ledger"}},
	{Name: "DISPATCHER_GROUP", Default: "convida-dispatcher", Meaning: "consumer group id of the dispatcher (its redemptions group adds -redemptions)",
		Programs: []string{"dispatcher"}},
	{Name: "ACTION_TIMEOUT", Default: "10s", Meaning: "how long approve, reject and redeem wait for the ledger before answering 202", Programs: []string{"api"}},
	{Name: "REDEMPTION_RETRY_DELAYS", Meaning: "comma-separated pauses between tries of a redemption at a platform (" + titlesWith(provider.Redeem) +
		") that failed transiently (empty: 5s,15s,30s,70s)",
		Programs: []string{"dispatcher"}},
	{Name: "COUPON_RETRY_DELAYS", Meaning: "comma-separated pauses between tries of creating or updating a member's coupon at a platform (" +
		titlesWith(provider.Coupon) + ") that failed transiently (empty: 5s,15s,30s,70s)",
		Programs: []string{"dispatcher"}},
	{Name: "COUPON_POLL_INTERVAL", Default: "1s", Meaning: "how often the dispatcher looks for members' coupons to create or update at the platforms",
		Programs: []string{"dispatcher"}},
	{Name: "INGEST_RATE_LIMIT", Default: "0", Meaning: "per-merchant ceiling of inbound deliveries per second; 0 is none", Programs: []string{"ingest"}},
	{Name: "WEBHOOK_RETRY_SCHEDULE", Default: formatSchedule(webhook.DefaultSchedule),
		Meaning: "comma-separated waits before each retry of a failed webhook delivery", Programs: []string{"dispatcher"}},
	{Name: "WEBHOOK_ENDPOINT_CONCURRENCY", Default: "16", Meaning: "most webhook requests in flight per endpoint (1 to 1024)",
		Programs: []string{"api", "dispatcher"}},
	{Name: "WEBHOOK_LEASE", Default: "30s", Meaning: "how long a dispatcher holds a delivery before the scheduler offers it again, renewed while the delivery is in flight (at least 1s)",
		Programs: []string{"dispatcher", "scheduler"}},
	{Name: "WEBHOOK_ALLOW_PRIVATE_NETWORKS", Default: "false", Meaning: "true lets webhook deliveries reach loopback and private addresses (development and tests only)",
		Programs: []string{"api", "dispatcher"}},
	{Name: "WEBHOOK_CA_FILE", Meaning: "a PEM root trusted for webhook receivers besides the system's", Programs: []string{"api", "dispatcher"}},
	{Name: "RETENTION_INTERVAL", Default: "1h", Meaning: "how often the scheduler's leader deletes what has outlived its retention (a duration: 30s, 15m, 1h, 1d)",
		Programs: []string{"scheduler"}},
	{Name: "RETENTION_INBOUND_DELIVERIES", Default: "30d", Meaning: "how long the platforms' inbound deliveries are kept (0 keeps them forever)",
		Programs: []string{"scheduler"}},
	{Name: "RETENTION_WEBHOOK_ATTEMPTS", Default: "30d", Meaning: "how long the delivery log of outbound webhooks is kept (0 keeps it forever)",
		Programs: []string{"scheduler"}},
	{Name: "RETENTION_OUTBOX", Default: "7d", Meaning: "how long relayed outbox events are kept (never one not yet relayed; 0 keeps them forever)",
		Programs: []string{"scheduler"}},
	{Name: "RETENTION_PROCESSED_COMMANDS", Default: "90d", Meaning: "how long the ledger remembers a processed command id; must outlive the broker's retention of ledger.commands and the platforms' retries (0 keeps them forever)",
		Programs: []string{"scheduler"}},
	{Name: "RETENTION_BUYER_DATA", Default: "365d", Meaning: "how long buyers' names, e-mails and documents stay on referrals before they are cleared (0 keeps them)",
		Programs: []string{"scheduler"}},
	{Name: "RETENTION_AUDIT_EVENTS", Default: "365d", Meaning: "how long the audit trail is kept (0 keeps it forever)",
		Programs: []string{"scheduler"}},
	{Name: "RECONCILE_INTERVAL", Default: "1h", Meaning: "how often the scheduler's leader pulls each integration's recent sales from its platform to find those whose webhook was lost (a duration: 15m, 1h, 1d; 0 runs only those asked for through the API)",
		Programs: []string{"scheduler"}},
	{Name: "RECONCILE_WINDOW", Default: "72h", Meaning: "how far back each scheduled reconciliation, and one the API asks for without a window, looks (a duration, at most 31d)",
		Programs: []string{"api", "scheduler"}},
	{Name: "RECONCILE_MAX_DURATION", Default: "10m", Meaning: "the longest a reconciliation run may take before it ends failed, its slot handed to another merchant (a duration from 1s to 24h)",
		Programs: []string{"scheduler"}},
	{Name: "RECONCILE_MAX_PAGES", Default: strconv.Itoa(reconcile.DefaultMaxPages), Meaning: "the most pages, of all its lists, a reconciliation run reads from a platform before it ends failed (1 to 100000)",
		Programs: []string{"scheduler"}},
	{Name: "RECONCILE_COOLDOWN", Default: "5m", Meaning: "how long after the start of an integration's last reconciliation a merchant may ask for another (429 with Retry-After sooner; 0: at once)",
		Programs: []string{"api"}},
	{Name: "PLATFORM_ALLOW_PRIVATE_NETWORKS", Default: "false", Meaning: "true lets the platforms' API calls (and the api_url a merchant sets) reach loopback and private addresses and plain http (development and tests only)",
		Programs: []string{"api", "dispatcher", "scheduler"}},
	{Name: "AUTH_FAILURE_LIMIT", Default: "20", Meaning: "failed authentications per minute a client address (IPv6: its /64) may make at the API, and for each merchant at the ingest, after a burst of 10, before 429; 0 is none",
		Programs: []string{"api", "ingest"}},
	{Name: "TRUSTED_PROXIES", Meaning: "comma-separated CIDRs of the operator's reverse proxies; only a request from one of them has its X-Forwarded-For believed (empty: none)",
		Programs: []string{"api", "ingest"}},
}

// defaultOf is the default of the setting named name.
func defaultOf(name string) string {
	for _, s := range Settings {
		if s.Name == name {
			return s.Default
		}
	}
	panic("program: no setting " + name) // a typo in LoadConfig
}

// formatSchedule writes a schedule as WEBHOOK_RETRY_SCHEDULE reads it.
func formatSchedule(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		p := d.String() // 30m0s, 2h0m0s
		if strings.HasSuffix(p, "m0s") {
			p = strings.TrimSuffix(p, "0s")
		}
		if strings.HasSuffix(p, "h0m") {
			p = strings.TrimSuffix(p, "0m")
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

// LoadConfig reads the configuration with getenv (os.Getenv in main).
// Every setting has a default that works on a developer machine
// (Settings); an invalid value is an error naming the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	get := func(k string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return defaultOf(k)
	}
	c := Config{
		DatabaseURL:        get("DATABASE_URL"),
		RedisURL:           get("REDIS_URL"),
		HTTPAddr:           get("HTTP_ADDR"),
		IngestAddr:         get("INGEST_ADDR"),
		MetricsAddr:        get("METRICS_ADDR"),
		LogLevel:           get("LOG_LEVEL"),
		DataDir:            get("DATA_DIR"),
		SecretsKey:         get("SECRETS_KEY"),
		SecretsKeyPrevious: get("SECRETS_KEY_PREVIOUS"),
		LedgerGroup:        get("LEDGER_GROUP"),
		DispatcherGroup:    get("DISPATCHER_GROUP"),
	}
	if c.PublicURL = get("PUBLIC_URL"); c.PublicURL == "" {
		c.PublicURL = "http://localhost" + portOf(c.HTTPAddr)
	}
	if c.IngestPublicURL = get("INGEST_PUBLIC_URL"); c.IngestPublicURL == "" {
		c.IngestPublicURL = "http://localhost" + portOf(c.IngestAddr)
	}
	if b := get("KAFKA_BROKERS"); b != "" {
		for _, s := range strings.Split(b, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.KafkaBrokers = append(c.KafkaBrokers, s)
			}
		}
	}
	var err error
	if c.KafkaPartitions, err = intSetting(get, "KAFKA_PARTITIONS", 1, 1024); err != nil {
		return c, err
	}
	if c.IngestRateLimit, err = intSetting(get, "INGEST_RATE_LIMIT", 0, 1_000_000); err != nil {
		return c, err
	}
	if c.LedgerMaxBatch, err = intSetting(get, "LEDGER_MAX_BATCH", 1, 10000); err != nil {
		return c, err
	}
	if c.LedgerLinger, err = time.ParseDuration(get("LEDGER_LINGER")); err != nil || c.LedgerLinger < 0 || c.LedgerLinger > time.Second {
		return c, fmt.Errorf("LEDGER_LINGER: want a Go duration from 0 to 1s such as 10ms, got %q", get("LEDGER_LINGER"))
	}
	if c.SchedulerInterval, err = time.ParseDuration(get("SCHEDULER_INTERVAL")); err != nil || c.SchedulerInterval <= 0 {
		return c, fmt.Errorf("SCHEDULER_INTERVAL: want a positive Go duration such as 5s, got %q", get("SCHEDULER_INTERVAL"))
	}
	if c.KafkaSessionTimeout, err = time.ParseDuration(get("KAFKA_SESSION_TIMEOUT")); err != nil || c.KafkaSessionTimeout < 500*time.Millisecond {
		return c, fmt.Errorf("KAFKA_SESSION_TIMEOUT: want a Go duration of at least 500ms, got %q", get("KAFKA_SESSION_TIMEOUT"))
	}
	if v := get("REDEMPTION_RETRY_DELAYS"); v != "" {
		if c.RedemptionRetryDelays, err = retry.ParseDelays(v); err != nil {
			return c, fmt.Errorf("REDEMPTION_RETRY_DELAYS: want comma-separated Go durations such as 5s,15s,30s,70s: %w", err)
		}
	}
	if v := get("COUPON_RETRY_DELAYS"); v != "" {
		if c.CouponRetryDelays, err = retry.ParseDelays(v); err != nil {
			return c, fmt.Errorf("COUPON_RETRY_DELAYS: want comma-separated Go durations such as 5s,15s,30s,70s: %w", err)
		}
	}
	if c.CouponPollInterval, err = time.ParseDuration(get("COUPON_POLL_INTERVAL")); err != nil || c.CouponPollInterval <= 0 {
		return c, fmt.Errorf("COUPON_POLL_INTERVAL: want a positive Go duration such as 1s, got %q", get("COUPON_POLL_INTERVAL"))
	}
	if c.ActionTimeout, err = time.ParseDuration(get("ACTION_TIMEOUT")); err != nil || c.ActionTimeout <= 0 {
		return c, fmt.Errorf("ACTION_TIMEOUT: want a positive Go duration such as 10s, got %q", get("ACTION_TIMEOUT"))
	}
	if c.WebhookAllowPrivateNetworks, err = strconv.ParseBool(get("WEBHOOK_ALLOW_PRIVATE_NETWORKS")); err != nil {
		return c, fmt.Errorf("WEBHOOK_ALLOW_PRIVATE_NETWORKS: want true or false, got %q", get("WEBHOOK_ALLOW_PRIVATE_NETWORKS"))
	}
	if c.RetentionInterval, err = retentionSetting(get, "RETENTION_INTERVAL"); err != nil {
		return c, err
	}
	if c.RetentionInterval <= 0 {
		return c, fmt.Errorf("RETENTION_INTERVAL: want a positive duration such as 1h, got %q", get("RETENTION_INTERVAL"))
	}
	for _, r := range []struct {
		name string
		into *time.Duration
	}{
		{"RETENTION_INBOUND_DELIVERIES", &c.Retention.InboundDeliveries}, {"RETENTION_WEBHOOK_ATTEMPTS", &c.Retention.WebhookAttempts},
		{"RETENTION_OUTBOX", &c.Retention.Outbox}, {"RETENTION_PROCESSED_COMMANDS", &c.Retention.ProcessedCommands},
		{"RETENTION_BUYER_DATA", &c.Retention.BuyerData}, {"RETENTION_AUDIT_EVENTS", &c.Retention.AuditEvents},
	} {
		if *r.into, err = retentionSetting(get, r.name); err != nil {
			return c, err
		}
	}
	if c.ReconcileInterval, err = retentionSetting(get, "RECONCILE_INTERVAL"); err != nil {
		return c, err
	}
	if c.ReconcileInterval < 0 {
		return c, fmt.Errorf("RECONCILE_INTERVAL: want a duration such as 1h (0: no scheduled run), got %q", get("RECONCILE_INTERVAL"))
	}
	if c.ReconcileWindow, err = retentionSetting(get, "RECONCILE_WINDOW"); err != nil {
		return c, err
	}
	if c.ReconcileWindow <= 0 || c.ReconcileWindow > maxReconcileWindow {
		return c, fmt.Errorf("RECONCILE_WINDOW: want a positive duration of at most 31d such as 72h, got %q", get("RECONCILE_WINDOW"))
	}
	if c.ReconcileMaxDuration, err = time.ParseDuration(get("RECONCILE_MAX_DURATION")); err != nil ||
		c.ReconcileMaxDuration < time.Second || c.ReconcileMaxDuration > 24*time.Hour {
		return c, fmt.Errorf("RECONCILE_MAX_DURATION: want a Go duration from 1s to 24h such as 10m, got %q", get("RECONCILE_MAX_DURATION"))
	}
	if c.ReconcileMaxPages, err = intSetting(get, "RECONCILE_MAX_PAGES", 1, 100_000); err != nil {
		return c, err
	}
	if c.ReconcileCooldown, err = time.ParseDuration(get("RECONCILE_COOLDOWN")); err != nil || c.ReconcileCooldown < 0 || c.ReconcileCooldown > 24*time.Hour {
		return c, fmt.Errorf("RECONCILE_COOLDOWN: want a Go duration from 0 to 24h such as 5m, got %q", get("RECONCILE_COOLDOWN"))
	}
	if c.PlatformAllowPrivateNetworks, err = strconv.ParseBool(get("PLATFORM_ALLOW_PRIVATE_NETWORKS")); err != nil {
		return c, fmt.Errorf("PLATFORM_ALLOW_PRIVATE_NETWORKS: want true or false, got %q", get("PLATFORM_ALLOW_PRIVATE_NETWORKS"))
	}
	if c.AuthFailureLimit, err = intSetting(get, "AUTH_FAILURE_LIMIT", 0, 1_000_000); err != nil {
		return c, err
	}
	if c.Mail, err = loadMail(get); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = clientip.Parse(get("TRUSTED_PROXIES")); err != nil {
		return c, fmt.Errorf("TRUSTED_PROXIES: want comma-separated CIDRs such as 10.0.0.0/8: %w", err)
	}
	// Loaded here so that an unreadable file stops the program at start.
	if c.WebhookCAFile = get("WEBHOOK_CA_FILE"); c.WebhookCAFile != "" {
		if c.WebhookRootCAs, err = webhook.LoadCAFile(c.WebhookCAFile); err != nil {
			return c, fmt.Errorf("WEBHOOK_CA_FILE: %w", err)
		}
	}
	if c.WebhookRetrySchedule, err = webhook.ParseSchedule(get("WEBHOOK_RETRY_SCHEDULE")); err != nil {
		return c, fmt.Errorf("WEBHOOK_RETRY_SCHEDULE: %w", err)
	}
	if c.WebhookConcurrency, err = intSetting(get, "WEBHOOK_ENDPOINT_CONCURRENCY", 1, 1024); err != nil {
		return c, err
	}
	if c.WebhookLease, err = time.ParseDuration(get("WEBHOOK_LEASE")); err != nil || c.WebhookLease < time.Second {
		return c, fmt.Errorf("WEBHOOK_LEASE: want a Go duration of at least 1s such as 30s, got %q", get("WEBHOOK_LEASE"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c, fmt.Errorf("LOG_LEVEL: want debug, info, warn or error, got %q", c.LogLevel)
	}
	return c, nil
}

// maxReconcileWindow is the longest RECONCILE_WINDOW: the shortest
// window a platform's pull takes at once (Hotmart's 31 days).
const maxReconcileWindow = 31 * 24 * time.Hour

// retentionSetting reads a duration that may count days: a Go duration
// (90s, 15m, 1h30m) or a whole number of days (30d); "0" is zero, which a
// retention reads as "keep forever".
func retentionSetting(get func(string) string, key string) (time.Duration, error) {
	s := get(key)
	d, err := ParseDays(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: want a duration such as 30s, 15m, 12h or 30d (0 keeps forever), got %q", key, s)
	}
	return d, nil
}

// ParseDays parses s as a Go duration, or as a whole number of days with
// the suffix d ("30d" is 720h); "0" is zero.
func ParseDays(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("%q is not a whole number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

func intSetting(get func(string) string, key string, lo, hi int) (int, error) {
	s := get(key)
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
