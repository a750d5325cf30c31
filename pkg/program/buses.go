package program

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
)

// CommandBus publishes ledger commands keyed by member id, so one member's
// commands are applied in order by one partition's worker.
type CommandBus struct{ w *kafkabus.Writer }

// PublishCommands publishes cmds and returns once the broker acked them all.
func (b *CommandBus) PublishCommands(ctx context.Context, cmds []ledger.Command) error {
	msgs := make([]kafkabus.Message, len(cmds))
	for i, c := range cmds {
		raw, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("encode command %s: %w", c.ID, err)
		}
		msgs[i] = kafkabus.Message{Key: []byte(c.MemberID.String()), Value: raw,
			Headers: map[string]string{"command-type": c.Type, "merchant-id": c.MerchantID.String()}}
	}
	return b.w.Publish(ctx, msgs...)
}

// EventBus publishes outbox records to the events topic keyed by member id.
type EventBus struct{ w *kafkabus.Writer }

var _ outbox.Publisher = (*EventBus)(nil)

// PublishEvents publishes recs and returns once the broker acked them all.
func (b *EventBus) PublishEvents(ctx context.Context, recs []outbox.Record) error {
	msgs := make([]kafkabus.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafkabus.Message{Topic: topicOf(r), Key: []byte(r.MemberID.String()), Value: r.Payload,
			Headers: map[string]string{"event-type": r.Type, "merchant-id": r.MerchantID.String(), "event-id": r.EventID.String()}}
	}
	return b.w.Publish(ctx, msgs...)
}

// Publish publishes raw messages (the scheduler's webhook retry wake-ups).
func (b *EventBus) Publish(ctx context.Context, msgs ...kafkabus.Message) error {
	return b.w.Publish(ctx, msgs...)
}

// decodeCommands decodes a batch; an undecodable message is a permanent
// error (the runner isolates it and dead-letters it).
func decodeCommands(msgs []kafkabus.Message) ([]ledger.Command, error) {
	cmds := make([]ledger.Command, len(msgs))
	for i, m := range msgs {
		if err := json.Unmarshal(m.Value, &cmds[i]); err != nil {
			return nil, apperr.Permanent(fmt.Errorf("undecodable command at offset %d: %w", m.Offset, err))
		}
		if cmds[i].ID == "" || cmds[i].Type == "" {
			return nil, apperr.Permanent(fmt.Errorf("command at offset %d has no id or type", m.Offset))
		}
	}
	return cmds, nil
}
