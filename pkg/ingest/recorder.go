package ingest

import (
	"context"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
)

// RecordStore writes delivery records. RecordDeliveries must be idempotent
// by delivery id (a record already stored is left as it is): the broker
// redelivers the batches a consumer handled but did not commit.
type RecordStore interface {
	RecordDeliveries(ctx context.Context, ds []inbound.Delivery) error
}

// Recorder is the consumer of the delivery records the Service publishes:
// it writes a batch of them in one statement. The runner commits the
// batch's offsets only after HandleBatch returned nil, and retries the
// batch with backoff after any other error, so a record is never dropped.
type Recorder struct{ Store RecordStore }

// HandleBatch writes ds. A record that appears twice in the batch (a
// platform's retry is a new delivery with a new id, so only a redelivered
// message can) is written once.
func (r *Recorder) HandleBatch(ctx context.Context, ds []inbound.Delivery) error {
	seen := make(map[uuid.UUID]bool, len(ds))
	unique := ds[:0:0]
	for _, d := range ds {
		if !seen[d.ID] {
			seen[d.ID] = true
			unique = append(unique, d)
		}
	}
	return r.Store.RecordDeliveries(ctx, unique)
}
