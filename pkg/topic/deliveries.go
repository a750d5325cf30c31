package topic

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
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
		if d.ID == uuid.Nil || d.MerchantID == uuid.Nil {
			return nil, apperr.Permanent(fmt.Errorf("delivery record at offset %d has no id or merchant", m.Offset))
		}
		if d.Body == nil {
			d.Body = []byte{}
		}
		out[i] = inbound.Delivery(d)
	}
	return out, nil
}

// PublishDelivery publishes the record of a delivery and, when cmd is not
// nil, its command, in one Publish call (one WriteMessages of the writer,
// whose batches for both topics leave together), and returns once the
// broker acknowledged both: an accepted delivery's command is never
// acknowledged without its record, or the reverse, as far as the answer
// is concerned.
func (b *CommandBus) PublishDelivery(ctx context.Context, d inbound.Delivery, cmd *ledger.Command) error {
	rec, err := DeliveryMessage(d)
	if err != nil {
		return err
	}
	if cmd == nil {
		return b.w.Publish(ctx, rec)
	}
	c, err := EncodeCommand(*cmd)
	if err != nil {
		return err
	}
	return b.w.Publish(ctx, c, rec)
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
