package dispatch_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/dispatch"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

// TestOperatorLogLines: a failed delivery and the disabling of an endpoint
// each write one info line an operator can follow, with the API's ids and
// nothing secret.
func TestOperatorLogLines(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	// The first event gets a 500 (retried in an hour), the second a 410.
	// Jobs are held until delivered, so the first event's attempt is made
	// before the second event arrives.
	f := newFixture(t, func(n int64) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusGone
	}, dispatch.Config{Log: zap.New(core), Hold: 10 * time.Second, MaxHold: 20 * time.Second})
	first, second := f.event(t), f.event(t)
	f.handle(t, first)
	f.handle(t, second)
	testenv.Eventually(t, 10*time.Second, "the endpoint disabled", func() bool { return logs.FilterMessage("webhook endpoint disabled").Len() == 1 })

	webhookID := ids.Format(ids.Webhook, f.endpoint.ID)
	eventOf := func(m map[string]string) string {
		return ids.Format(ids.Event, uuid.MustParse(m[topic.HeaderEventID]))
	}
	failed := logs.FilterMessage("webhook delivery failed").AllUntimed()
	if len(failed) != 2 {
		t.Fatalf("%d \"webhook delivery failed\" lines, want 2: %v", len(failed), failed)
	}
	byEvent := map[string]map[string]any{}
	for _, e := range failed {
		m := e.ContextMap()
		byEvent[fmt.Sprint(m["event_id"])] = m
	}
	tests := []struct {
		name string
		got  map[string]any
		want map[string]any
	}{
		{"the 500", byEvent[eventOf(first.Headers)], map[string]any{"webhook_id": webhookID, "event_id": eventOf(first.Headers),
			"event_type": "referral.created", "attempt": int64(1), "response_status": int64(500),
			"error": "status 500 Internal Server Error"}},
		{"the 410", byEvent[eventOf(second.Headers)], map[string]any{"webhook_id": webhookID, "event_id": eventOf(second.Headers),
			"event_type": "referral.created", "attempt": int64(1), "response_status": int64(410),
			"next_retry": "none: the endpoint is disabled (" + webhook.DisabledGone + ")"}},
		{"the disabling", logs.FilterMessage("webhook endpoint disabled").AllUntimed()[0].ContextMap(),
			map[string]any{"webhook_id": webhookID, "reason": webhook.DisabledGone}},
	}
	for _, tt := range tests {
		for k, want := range tt.want {
			if got := tt.got[k]; got != want {
				t.Errorf("%s: %s = %v (%T), want %v (%T)", tt.name, k, got, got, want, want)
			}
		}
	}
	if at, ok := byEvent[eventOf(first.Headers)]["next_retry_at"].(time.Time); !ok || time.Until(at) < 50*time.Minute {
		t.Errorf("the 500: next_retry_at = %v, want the retry an hour ahead", byEvent[eventOf(first.Headers)]["next_retry_at"])
	}
	for _, e := range logs.AllUntimed() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		for _, secret := range []string{f.endpoint.Secret, strings.TrimPrefix(f.endpoint.Secret, webhook.SecretPrefix), "ref_x"} {
			if strings.Contains(line, secret) {
				t.Errorf("log line %q reveals %q", line, secret)
			}
		}
	}
}
