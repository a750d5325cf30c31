package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/outbox"
)

// ManualStore is what a manual send needs of storage (postgres.WebhookStore):
// the delivery log it writes to, the stored events a retry sends again, and
// the endpoint a 410 disables.
type ManualStore interface {
	Store
	AttemptLog
	EventPayloads
}

// Manual makes the attempts a merchant asks for, outside the dispatcher:
// "send a test event" and "retry this delivery", from the management API
// and from the dashboard alike. Each is one attempt, now, logged.
type Manual struct {
	Sender Sender
	Store  ManualStore
	Now    func() time.Time
}

// ManualSendTimeout bounds a test or retry: the Sender's own 10 s plus
// the writes of the log record.
const ManualSendTimeout = 20 * time.Second

// TestMessage is the message of a webhook.test event.
const TestMessage = "This is a test event from Convida; no action is needed."

// testData is the data of a webhook.test event.
type testData struct {
	WebhookID string `json:"webhook_id"`
	Message   string `json:"message"`
}

// SendTest sends a new webhook.test event, enveloped like every event, to
// ep only, whatever it subscribes to. The caller checks ep is active.
func (m *Manual) SendTest(ctx context.Context, ep *Endpoint) (*Attempt, error) {
	eventID := uuid.New()
	data, err := json.Marshal(testData{WebhookID: ids.Format(ids.Webhook, ep.ID), Message: TestMessage})
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(outbox.Envelope{ID: ids.Format(ids.Event, eventID), Type: event.Test,
		CreatedAt: jsontime.Format(m.Now()), MerchantID: ep.MerchantID.String(), Data: data})
	if err != nil {
		return nil, err
	}
	return m.deliverNow(ctx, ep, eventID, event.Test, payload, 1)
}

// Retry sends the event of the log record rec again, now, as that event's
// next attempt (the same id and bytes, so receivers deduplicate it); a
// webhook.test record sends a fresh test event. Scheduled retries are not
// affected. An event no longer kept is apperr.InvalidState.
func (m *Manual) Retry(ctx context.Context, ep *Endpoint, rec *Attempt) (*Attempt, error) {
	if rec.EventType == event.Test {
		return m.SendTest(ctx, ep)
	}
	typ, payload, err := m.Store.EventPayload(ctx, ep.MerchantID, rec.EventID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Errorf(apperr.InvalidState, "the event of this record is no longer kept; it cannot be sent again")
	}
	if err != nil {
		return nil, err
	}
	last, err := m.Store.LastAttemptNumber(ctx, ep.MerchantID, ep.ID, rec.EventID)
	if err != nil {
		return nil, err
	}
	return m.deliverNow(ctx, ep, rec.EventID, typ, payload, last+1)
}

// deliverNow makes one attempt through the Sender and logs it. A 410
// disables the endpoint, as it does for the dispatcher's deliveries. The
// caller's going away (a client hanging up) neither cuts the attempt short
// nor loses its record.
func (m *Manual) deliverNow(ctx context.Context, ep *Endpoint, eventID uuid.UUID, typ string, payload []byte, attempt int) (*Attempt, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ManualSendTimeout)
	defer cancel()
	now := m.Now()
	a := Attempt{MerchantID: ep.MerchantID, ID: uuid.New(), WebhookID: ep.ID, EventID: eventID,
		EventType: typ, Attempt: attempt, CreatedAt: now}
	res := m.Sender.Send(ctx, Delivery{URL: ep.URL, Secrets: ep.Secrets(now), EventID: eventID,
		EventType: typ, LogID: a.ID, Payload: payload})
	a.Status = StatusFailed
	if res.Success {
		a.Status = StatusSuccess
	}
	a.ResponseStatus, a.ResponseBody, a.Error, a.DurationMS = res.StatusCode, res.Body, res.Error, res.Duration.Milliseconds()
	if err := m.Store.RecordAttempts(ctx, []Attempt{a}); err != nil {
		return nil, fmt.Errorf("record the attempt: %w", err)
	}
	if res.Gone {
		err := m.Store.DisableWebhook(ctx, ep.MerchantID, ep.ID, DisabledGone)
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			return nil, err
		}
	}
	return &a, nil
}
