package topic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/redemption"
)

// EventMessage renders an outbox record as a message of its topic (Of):
// the envelope as value, keyed by member id, with its type, merchant and
// id in the headers.
func EventMessage(r outbox.Record) kafkabus.Message {
	return kafkabus.Message{Topic: Of(r), Key: []byte(r.MemberID.String()), Value: r.Payload,
		Headers: map[string]string{HeaderEventType: r.Type, HeaderMerchantID: r.MerchantID.String(), HeaderEventID: r.EventID.String()}}
}

// DecodeRedemptionRequests decodes a batch of messages of Redemptions:
// each is a redemption.requested envelope. An undecodable message is an
// apperr.Permanent error.
func DecodeRedemptionRequests(msgs []kafkabus.Message) ([]redemption.Requested, error) {
	reqs := make([]redemption.Requested, len(msgs))
	for i, m := range msgs {
		var env struct {
			Data redemption.Requested `json:"data"`
		}
		if err := json.Unmarshal(m.Value, &env); err != nil {
			return nil, apperr.Permanent(fmt.Errorf("undecodable redemption event at offset %d: %w", m.Offset, err))
		}
		reqs[i] = env.Data
	}
	return reqs, nil
}

// RedemptionHandler is the batch handler of Redemptions: it decodes the
// requests and hands them to c.
func RedemptionHandler(c *redemption.Consumer) kafkabus.BatchHandler {
	return func(ctx context.Context, msgs []kafkabus.Message) error {
		reqs, err := DecodeRedemptionRequests(msgs)
		if err != nil {
			return err
		}
		return c.HandleBatch(ctx, reqs)
	}
}

// EventBus publishes outbox records, each to its topic (Of).
type EventBus struct{ w *kafkabus.Writer }

var _ outbox.Publisher = (*EventBus)(nil)

// NewEventBus returns an EventBus that publishes with w, whose default
// topic must be Events.
func NewEventBus(w *kafkabus.Writer) *EventBus { return &EventBus{w: w} }

// PublishEvents publishes recs and returns once the broker acked them all;
// a record the broker refuses fails the call like any other error.
func (b *EventBus) PublishEvents(ctx context.Context, recs []outbox.Record) error {
	return b.w.Publish(ctx, eventMessages(recs)...)
}

// PublishEach publishes recs and returns the records refused for
// themselves (kafkabus.Writer.PublishEach): every other one is published
// when the error is nil.
func (b *EventBus) PublishEach(ctx context.Context, recs []outbox.Record) ([]outbox.Refused, error) {
	refused, err := b.w.PublishEach(ctx, eventMessages(recs)...)
	if len(refused) == 0 {
		return nil, err
	}
	out := make([]outbox.Refused, len(refused))
	for i, r := range refused {
		out[i] = outbox.Refused{Record: recs[r.Index], Err: r.Err}
	}
	return out, err
}

func eventMessages(recs []outbox.Record) []kafkabus.Message {
	msgs := make([]kafkabus.Message, len(recs))
	for i, r := range recs {
		msgs[i] = EventMessage(r)
	}
	return msgs
}

// Publish publishes raw messages (the scheduler's webhook retry wake-ups).
func (b *EventBus) Publish(ctx context.Context, msgs ...kafkabus.Message) error {
	return b.w.Publish(ctx, msgs...)
}

// Close closes the writer.
func (b *EventBus) Close() error { return b.w.Close() }
