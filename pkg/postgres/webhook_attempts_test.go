package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/webhook"
)

func attemptOf(ep *webhook.Endpoint, event uuid.UUID, status string, n int, at time.Time) webhook.Attempt {
	a := webhook.Attempt{MerchantID: ep.MerchantID, WebhookID: ep.ID, EventID: event, EventType: "member.created",
		Status: status, Attempt: n, DurationMS: 12, CreatedAt: at}
	if status == webhook.StatusSuccess {
		a.ResponseStatus, a.ResponseBody = 200, "ok"
	} else {
		a.ResponseStatus, a.ResponseBody, a.Error, a.NextRetryAt = 500, "boom", "HTTP 500", at.Add(5*time.Second)
	}
	return a
}

func TestWebhookAttemptLog(t *testing.T) {
	t.Parallel()
	env := mustWebhookEnv(t)
	ctx := context.Background()
	ep := env.mustEndpoint(t, env.a)
	other := env.mustEndpoint(t, env.a)
	base := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	event := uuid.New()
	var batch []webhook.Attempt
	for i := 0; i < 7; i++ {
		status := webhook.StatusFailed
		if i%3 == 0 {
			status = webhook.StatusSuccess // 0, 3, 6
		}
		batch = append(batch, attemptOf(ep, event, status, i+1, base.Add(time.Duration(i)*time.Minute)))
	}
	network := attemptOf(ep, uuid.New(), webhook.StatusFailed, 1, base.Add(-time.Hour))
	network.ResponseStatus, network.ResponseBody, network.Error = 0, "nul\x00 and \xff bytes", "dial tcp: refused"
	batch = append(batch, network, attemptOf(other, event, webhook.StatusSuccess, 1, base))
	if err := env.store.RecordAttempts(ctx, batch); err != nil {
		t.Fatalf("RecordAttempts: %v", err)
	}
	for i, a := range batch {
		if a.ID == uuid.Nil {
			t.Fatalf("RecordAttempts left attempt %d without an id", i)
		}
	}
	// Repeating the write changes nothing.
	if err := env.store.RecordAttempts(ctx, batch); err != nil {
		t.Fatalf("RecordAttempts again: %v", err)
	}

	tests := []struct {
		name          string
		f             webhook.AttemptFilter
		wantN, wantTo int
		first         int // index in batch of the first record
	}{
		{"all", webhook.AttemptFilter{Limit: 50}, 8, 8, 6},
		{"page", webhook.AttemptFilter{Limit: 2, Offset: 2}, 2, 8, 4},
		{"success", webhook.AttemptFilter{Status: webhook.StatusSuccess, Limit: 50}, 3, 3, 6},
		{"failed", webhook.AttemptFilter{Status: webhook.StatusFailed, Limit: 1}, 1, 5, 5},
		{"past the end", webhook.AttemptFilter{Limit: 10, Offset: 100}, 0, 8, -1},
	}
	for _, tt := range tests {
		list, total, err := env.store.ListAttempts(ctx, env.a, ep.ID, tt.f)
		if err != nil {
			t.Fatalf("%s: ListAttempts: %v", tt.name, err)
		}
		if len(list) != tt.wantN || total != tt.wantTo {
			t.Errorf("%s: got %d records of %d, want %d of %d", tt.name, len(list), total, tt.wantN, tt.wantTo)
			continue
		}
		if tt.first >= 0 && list[0].ID != batch[tt.first].ID {
			t.Errorf("%s: first record is attempt %d, want %d", tt.name, list[0].Attempt, batch[tt.first].Attempt)
		}
		for i := 1; i < len(list); i++ {
			if list[i].CreatedAt.After(list[i-1].CreatedAt) {
				t.Errorf("%s: not newest first at %d", tt.name, i)
			}
		}
	}
	if list, total, _ := env.store.ListAttempts(ctx, env.b, ep.ID, webhook.AttemptFilter{Limit: 50}); len(list) != 0 || total != 0 {
		t.Errorf("another merchant sees %d records", total)
	}

	network = batch[7] // with the id RecordAttempts gave it
	got, err := env.store.FindAttempt(ctx, env.a, ep.ID, network.ID)
	if err != nil {
		t.Fatalf("FindAttempt: %v", err)
	}
	want := batch[7]
	if got.ResponseStatus != 0 || got.Error != want.Error || got.ResponseBody != "nul and \uFFFD bytes" ||
		!got.NextRetryAt.Equal(want.NextRetryAt) || !got.CreatedAt.Equal(want.CreatedAt) || got.DurationMS != 12 ||
		got.EventID != want.EventID || got.Attempt != 1 || got.Status != webhook.StatusFailed {
		t.Errorf("FindAttempt = %+v, want %+v with the body made storable", got, want)
	}
	ok, _ := env.store.FindAttempt(ctx, env.a, ep.ID, batch[0].ID)
	if ok.ResponseStatus != 200 || !ok.NextRetryAt.IsZero() {
		t.Errorf("success record: status %d next retry %v", ok.ResponseStatus, ok.NextRetryAt)
	}
	_, err = env.store.FindAttempt(ctx, env.a, other.ID, network.ID)
	wantCode(t, "FindAttempt under another endpoint", err, apperr.NotFound)
	_, err = env.store.FindAttempt(ctx, env.b, ep.ID, network.ID)
	wantCode(t, "FindAttempt of another merchant", err, apperr.NotFound)

	if n, err := env.store.LastAttemptNumber(ctx, env.a, ep.ID, event); err != nil || n != 7 {
		t.Errorf("LastAttemptNumber = %d, %v; want 7", n, err)
	}
	if n, err := env.store.LastAttemptNumber(ctx, env.a, other.ID, event); err != nil || n != 1 {
		t.Errorf("LastAttemptNumber at the other endpoint = %d, %v; want 1", n, err)
	}
	if n, err := env.store.LastAttemptNumber(ctx, env.a, ep.ID, uuid.New()); err != nil || n != 0 {
		t.Errorf("LastAttemptNumber of an unknown event = %d, %v; want 0", n, err)
	}
}
