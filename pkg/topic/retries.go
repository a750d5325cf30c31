package topic

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/webhook"
)

// RetryMessage renders a webhook job due again as a message of Events
// (HeaderKind KindRetry), keyed by its endpoint so that one endpoint's
// retries stay in order: the scheduler's waker writes them.
func RetryMessage(j webhook.Job) (kafkabus.Message, error) {
	raw, err := json.Marshal(j)
	if err != nil {
		return kafkabus.Message{}, err
	}
	return kafkabus.Message{Topic: Events, Key: []byte(j.WebhookID.String()), Value: raw,
		Headers: map[string]string{HeaderKind: KindRetry, HeaderMerchantID: j.MerchantID.String()}}, nil
}

// Event is an event of the Events topic as the dispatcher reads it.
type Event struct {
	MerchantID, EventID uuid.UUID
	Type                string
	Payload             []byte
	Repeat              bool // the broker may have handed it over before
}

// DecodeEvents splits a batch of Events into its events and its retries.
// A message without a merchant or an event id is no event and is left
// out; an undecodable retry is an apperr.Permanent error.
func DecodeEvents(msgs []kafkabus.Message) (events []Event, retries []webhook.Job, err error) {
	for _, m := range msgs {
		if m.Headers[HeaderKind] == KindRetry {
			var j webhook.Job
			if err := json.Unmarshal(m.Value, &j); err != nil {
				return nil, nil, apperr.Permanent(fmt.Errorf("undecodable retry at offset %d: %w", m.Offset, err))
			}
			retries = append(retries, j)
			continue
		}
		merchantID, err1 := uuid.Parse(m.Headers[HeaderMerchantID])
		eventID, err2 := uuid.Parse(m.Headers[HeaderEventID])
		if err1 != nil || err2 != nil {
			continue
		}
		events = append(events, Event{MerchantID: merchantID, EventID: eventID, Type: m.Headers[HeaderEventType],
			Payload: m.Value, Repeat: m.Repeat})
	}
	return events, retries, nil
}
