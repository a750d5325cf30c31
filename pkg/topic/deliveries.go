package topic

import (
	"context"
	"errors"
	"fmt"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
)

// delivery is the wire form of an inbound.Delivery on Deliveries. Its
// field names are the contract between the ingest and the recorder, so
// they are spelled here rather than taken from the Go struct.
type delivery struct {
	ID         uuid.UUID         `json:"id"`
	MerchantID uuid.UUID         `json:"merchant_id"`
	Provider   string            `json:"provider"`
	DedupeKey  string            `json:"dedupe_key,omitempty"`
	Outcome    string            `json:"outcome"`
	HTTPStatus int               `json:"http_status"`
	Error      string            `json:"error,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       []byte            `json:"body"`
	BodyLength int               `json:"body_length,omitempty"`
	BodySHA256 []byte            `json:"body_sha256,omitempty"`
	ReceivedAt time.Time         `json:"received_at"`
	Source     string            `json:"source,omitempty"`
}

// check refuses a record without an id or a merchant, and gives a record
// without a body an empty one (the column is not null).
func (d *delivery) check() error {
	if d.ID == uuid.Nil || d.MerchantID == uuid.Nil {
		return errors.New("delivery record has no id or merchant")
	}
	if d.Body == nil {
		d.Body = []byte{}
	}
	return nil
}

// DeliveryMessage renders a delivery record as a message of Deliveries:
// JSON (the body as base64), keyed by merchant id, with the merchant in the
// headers. The key is not for order: a merchant's records gather on one
// partition, so the concurrent deliveries of a burst share one produce
// request (and the recorder one statement) instead of one per partition.
func DeliveryMessage(d inbound.Delivery) (kafkabus.Message, error) {
	raw, err := json.Marshal(delivery(d))
	if err != nil {
		return kafkabus.Message{}, fmt.Errorf("encode delivery %s: %w", d.ID, err)
	}
	return kafkabus.Message{Topic: Deliveries, Key: []byte(d.MerchantID.String()), Value: raw,
		Headers: map[string]string{HeaderMerchantID: d.MerchantID.String()}}, nil
}

// DecodeDeliveries decodes a batch of messages of Deliveries. An
// undecodable message, or one without an id or a merchant, is an
// apperr.Permanent error (the runner isolates it and dead-letters it).
func DecodeDeliveries(msgs []kafkabus.Message) ([]inbound.Delivery, error) {
	out := make([]inbound.Delivery, len(msgs))
	for i, m := range msgs {
		var d delivery
		if err := json.Unmarshal(m.Value, &d); err != nil {
			return nil, apperr.Permanent(fmt.Errorf("undecodable delivery record at offset %d: %w", m.Offset, err))
		}
		if err := d.check(); err != nil {
			return nil, apperr.Permanent(fmt.Errorf("at offset %d: %w", m.Offset, err))
		}
		out[i] = inbound.Delivery(d)
	}
	return out, nil
}

// The intake's publisher: a sale's command with its record.
var _ intake.Publisher = (*CommandBus)(nil)

// PublishDelivery publishes the record of a delivery and returns once the
// broker acknowledged it. When cmd is not nil the record travels inside
// the command, on Commands (ledger.Command.Delivery), and the ledger
// writes it in the command's transaction: an accepted delivery costs one
// message, and its command is never acknowledged without its record, or
// the reverse. A delivery without a command goes to Deliveries, for the
// recorder.
func (b *CommandBus) PublishDelivery(ctx context.Context, d inbound.Delivery, cmd *ledger.Command) error {
	if cmd != nil {
		c := *cmd
		c.Delivery = &d
		msg, err := EncodeCommand(c)
		if err != nil {
			return err
		}
		return b.w.Publish(ctx, msg)
	}
	rec, err := DeliveryMessage(d)
	if err != nil {
		return err
	}
	return b.w.Publish(ctx, rec)
}

// DeliveriesHandler is the batch handler of Deliveries: it decodes the
// records and hands them to record (ingest.Recorder.HandleBatch). An
// undecodable message is an apperr.Permanent error.
func DeliveriesHandler(record func(context.Context, []inbound.Delivery) error) kafkabus.BatchHandler {
	return func(ctx context.Context, msgs []kafkabus.Message) error {
		ds, err := DecodeDeliveries(msgs)
		if err != nil {
			return err
		}
		return record(ctx, ds)
	}
}
