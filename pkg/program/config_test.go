package program_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/webhook"
)

func TestLoadConfigRefusesInvalidSettings(t *testing.T) {
	t.Parallel()
	for k, v := range map[string]string{"KAFKA_PARTITIONS": "0", "SCHEDULER_INTERVAL": "soon", "LOG_LEVEL": "loud",
		"ACTION_TIMEOUT": "-1s", "REDEMPTION_RETRY_DELAYS": "5s,x", "COUPON_RETRY_DELAYS": "1s,-", "COUPON_POLL_INTERVAL": "0s", "INGEST_RATE_LIMIT": "-3", "KAFKA_SESSION_TIMEOUT": "1ms"} {
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

// TestLoadConfigDefaults: the defaults LoadConfig applies are those of the
// table the help prints.
func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	def := map[string]string{}
	for _, s := range program.Settings {
		def[s.Name] = s.Default
	}
	for name, got := range map[string]string{"DATABASE_URL": c.DatabaseURL, "REDIS_URL": c.RedisURL, "HTTP_ADDR": c.HTTPAddr,
		"INGEST_ADDR": c.IngestAddr, "METRICS_ADDR": c.MetricsAddr, "LOG_LEVEL": c.LogLevel, "DATA_DIR": c.DataDir,
		"LEDGER_GROUP": c.LedgerGroup, "DISPATCHER_GROUP": c.DispatcherGroup, "KAFKA_SESSION_TIMEOUT": c.KafkaSessionTimeout.String(),
		"SCHEDULER_INTERVAL": c.SchedulerInterval.String(), "ACTION_TIMEOUT": c.ActionTimeout.String()} {
		if got != def[name] {
			t.Errorf("%s = %q, want the table's default %q", name, got, def[name])
		}
	}
	if c.KafkaPartitions != 8 || c.LedgerMaxBatch != 500 || c.WebhookConcurrency != 16 || c.IngestRateLimit != 0 ||
		c.WebhookLease.String() != "30s" || c.WebhookAllowPrivateNetworks || len(c.KafkaBrokers) != 0 || c.SecretsKey != "" {
		t.Errorf("config %+v differs from the table's defaults", c)
	}
	if !slices.Equal(c.WebhookRetrySchedule, webhook.DefaultSchedule) {
		t.Errorf("WEBHOOK_RETRY_SCHEDULE = %v, want %v", c.WebhookRetrySchedule, webhook.DefaultSchedule)
	}
	if c.PublicURL != "http://localhost:8080" || c.IngestPublicURL != "http://localhost:8081" {
		t.Errorf("public URLs %q %q", c.PublicURL, c.IngestPublicURL)
	}
}

// TestHelpNamesEverySettingOnce: every setting is read by some program,
// and standalone's help names them all.
func TestHelpNamesEverySettingOnce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	program.Help(&out, "standalone", "about standalone")
	seen := map[string]bool{}
	for _, s := range program.Settings {
		if seen[s.Name] {
			t.Errorf("%s twice in Settings", s.Name)
		}
		seen[s.Name] = true
		if s.Meaning == "" {
			t.Errorf("%s has no meaning", s.Name)
		}
		if !strings.Contains(out.String(), "  "+s.Name+"="+s.Default+"\n") {
			t.Errorf("standalone's help lacks %s=%s", s.Name, s.Default)
		}
	}
	for _, p := range []string{"api", "ingest", "ledger", "dispatcher", "scheduler", program.Bootstrap} {
		if names := program.SettingsOf(p); len(names) == 0 || names[0].Name != "DATABASE_URL" {
			t.Errorf("%s reads %v, want DATABASE_URL first", p, names)
		}
	}
}

func TestRetentionSettings(t *testing.T) {
	t.Parallel()
	c, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	want := program.Retention{InboundDeliveries: 30 * day, WebhookAttempts: 30 * day, Outbox: 7 * day, ProcessedCommands: 90 * day,
		BuyerData: 365 * day, AuditEvents: 365 * day}
	if c.Retention != want || c.RetentionInterval != time.Hour {
		t.Errorf("defaults: %+v every %s, want %+v every 1h", c.Retention, c.RetentionInterval, want)
	}
	env := map[string]string{"RETENTION_OUTBOX": "0", "RETENTION_WEBHOOK_ATTEMPTS": "90s", "RETENTION_INTERVAL": "15m"}
	if c, err = program.LoadConfig(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.Retention.Outbox != 0 || c.Retention.WebhookAttempts != 90*time.Second || c.RetentionInterval != 15*time.Minute {
		t.Errorf("set: %+v every %s", c.Retention, c.RetentionInterval)
	}
	for _, bad := range []map[string]string{{"RETENTION_OUTBOX": "7 days"}, {"RETENTION_OUTBOX": "-1h"}, {"RETENTION_INTERVAL": "0"},
		{"RETENTION_AUDIT_EVENTS": "1.5d"}} {
		if _, err := program.LoadConfig(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestReconcileSettings(t *testing.T) {
	t.Parallel()
	c, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.ReconcileInterval != time.Hour || c.ReconcileWindow != 72*time.Hour || c.ReconcileMaxDuration != 10*time.Minute ||
		c.ReconcileMaxPages != 2000 || c.ReconcileCooldown != 5*time.Minute {
		t.Errorf("defaults: every %s over %s, at most %s and %d pages, %s apart; want every 1h over 72h, at most 10m and 2000 pages, 5m apart",
			c.ReconcileInterval, c.ReconcileWindow, c.ReconcileMaxDuration, c.ReconcileMaxPages, c.ReconcileCooldown)
	}
	env := map[string]string{"RECONCILE_INTERVAL": "0", "RECONCILE_WINDOW": "7d", "RECONCILE_MAX_DURATION": "3s",
		"RECONCILE_MAX_PAGES": "50", "RECONCILE_COOLDOWN": "0"}
	if c, err = program.LoadConfig(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.ReconcileInterval != 0 || c.ReconcileWindow != 7*24*time.Hour || c.ReconcileMaxDuration != 3*time.Second ||
		c.ReconcileMaxPages != 50 || c.ReconcileCooldown != 0 {
		t.Errorf("set: every %s over %s, at most %s and %d pages, %s apart; want 0 (off) over 7 days, at most 3s and 50 pages, none",
			c.ReconcileInterval, c.ReconcileWindow, c.ReconcileMaxDuration, c.ReconcileMaxPages, c.ReconcileCooldown)
	}
	for _, bad := range []map[string]string{{"RECONCILE_INTERVAL": "-1h"}, {"RECONCILE_INTERVAL": "hourly"}, {"RECONCILE_WINDOW": "0"},
		{"RECONCILE_WINDOW": "32d"}, {"RECONCILE_MAX_DURATION": "0"}, {"RECONCILE_MAX_DURATION": "25h"}, {"RECONCILE_MAX_DURATION": "soon"},
		{"RECONCILE_MAX_PAGES": "0"}, {"RECONCILE_MAX_PAGES": "many"}, {"RECONCILE_COOLDOWN": "-1s"}, {"RECONCILE_COOLDOWN": "5"}} {
		if _, err := program.LoadConfig(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
