package topic

import (
	"context"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/redemption"
)

// commandMessage is the wire form of a ledger command: the command's own
// fields, and the record of the delivery that brought it, if any, in the
// form the Deliveries topic carries it.
type commandMessage struct {
	ledger.Command
	Delivery *delivery `json:"delivery,omitempty"`
}

// EncodeCommand renders a ledger command as a message of Commands: JSON,
// keyed by member id, with its type and merchant in the headers.
func EncodeCommand(c ledger.Command) (kafkabus.Message, error) {
	raw, err := json.Marshal(commandMessage{Command: c, Delivery: (*delivery)(c.Delivery)})
	if err != nil {
		return kafkabus.Message{}, fmt.Errorf("encode command %s: %w", c.ID, err)
	}
	return kafkabus.Message{Key: []byte(c.MemberID.String()), Value: raw,
		Headers: map[string]string{HeaderCommandType: c.Type, HeaderMerchantID: c.MerchantID.String()}}, nil
}

// DecodeCommands decodes a batch of messages of Commands. An undecodable
// message, or one without an id or a type, is an apperr.Permanent error
// (the runner isolates it and dead-letters it).
func DecodeCommands(msgs []kafkabus.Message) ([]ledger.Command, error) {
	cmds := make([]ledger.Command, len(msgs))
	for i, m := range msgs {
		var wire commandMessage
		if err := json.Unmarshal(m.Value, &wire); err != nil {
			return nil, apperr.Permanent(fmt.Errorf("undecodable command at offset %d: %w", m.Offset, err))
		}
		if wire.ID == "" || wire.Type == "" {
			return nil, apperr.Permanent(fmt.Errorf("command at offset %d has no id or type", m.Offset))
		}
		if d := wire.Delivery; d != nil {
			if err := d.check(); err != nil {
				return nil, apperr.Permanent(fmt.Errorf("command at offset %d: %w", m.Offset, err))
			}
			wire.Command.Delivery = (*inbound.Delivery)(d)
		}
		cmds[i] = wire.Command
	}
	return cmds, nil
}

// ResultCommand is the ledger command that settles a redemption: it
// completes the redemption, or fails it and returns the money.
func ResultCommand(s redemption.Settlement) ledger.Command {
	outcome := s.Outcome
	return ledger.Command{ID: ledger.ResultCommandID(s.Redemption.ID), Type: ledger.CmdRedemptionResult,
		MerchantID: s.Redemption.MerchantID, MemberID: s.Redemption.MemberID, IssuedAt: s.At, Result: &outcome}
}

// CommandBus publishes ledger commands to Commands.
type CommandBus struct{ w *kafkabus.Writer }

var _ redemption.Settler = (*CommandBus)(nil)

// NewCommandBus returns a CommandBus that publishes with w, whose default
// topic must be Commands.
func NewCommandBus(w *kafkabus.Writer) *CommandBus { return &CommandBus{w: w} }

// PublishCommands publishes cmds and returns once the broker acked them all.
func (b *CommandBus) PublishCommands(ctx context.Context, cmds []ledger.Command) error {
	msgs := make([]kafkabus.Message, len(cmds))
	for i, c := range cmds {
		var err error
		if msgs[i], err = EncodeCommand(c); err != nil {
			return err
		}
	}
	return b.w.Publish(ctx, msgs...)
}

// PublishSettlements publishes the result command of each settlement and
// returns once the broker acked them all.
func (b *CommandBus) PublishSettlements(ctx context.Context, settled []redemption.Settlement) error {
	cmds := make([]ledger.Command, len(settled))
	for i, s := range settled {
		cmds[i] = ResultCommand(s)
	}
	return b.PublishCommands(ctx, cmds)
}

// Close closes the writer.
func (b *CommandBus) Close() error { return b.w.Close() }

// CommandsHandler is the batch handler of Commands: it decodes the
// commands and hands them to apply (ledger.Worker.Handle). An undecodable
// message is an apperr.Permanent error.
func CommandsHandler(apply func(context.Context, []ledger.Command) error) kafkabus.BatchHandler {
	return func(ctx context.Context, msgs []kafkabus.Message) error {
		cmds, err := DecodeCommands(msgs)
		if err != nil {
			return err
		}
		return apply(ctx, cmds)
	}
}
