package program

import (
	"context"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/topic"
)

// Recorder is the recorder role: it consumes inbound.deliveries, the
// record of every delivery the ingest answered, and writes each batch to
// inbound_deliveries in one statement, committing the offsets only after
// the write. cmd/ledger runs it beside the ledger: both are the
// pipeline's PostgreSQL writers fed by the broker, while the ingest keeps
// PostgreSQL off its request path. Its consumer group is LEDGER_GROUP with
// ".recorder" appended.
type Recorder struct {
	Group kafkabus.GroupConfig
	Store ingest.RecordStore
	Log   *zap.Logger
	// Middleware, when set, wraps the batch handler.
	Middleware Middleware
}

// NewRecorder returns the recorder role as production runs it.
func NewRecorder(d *Deps) *Recorder {
	log := d.Log.Named("recorder")
	return &Recorder{
		Group: d.consumerGroup(d.Config.LedgerGroup+".recorder", topic.Deliveries, 0, log),
		Store: postgres.NewDeliveryStore(d.Pool),
		Log:   log,
	}
}

// Handler returns the batch handler: topic decodes, the recorder writes.
func (r *Recorder) Handler() kafkabus.BatchHandler {
	rec := &ingest.Recorder{Store: r.Store}
	return r.Middleware.wrap(topic.DeliveriesHandler(rec.HandleBatch))
}

// Run consumes until ctx ends.
func (r *Recorder) Run(ctx context.Context) error {
	return kafkabus.RunGroup(ctx, r.Group, r.Handler())
}

// RunRecorder runs the recorder role as production does.
func RunRecorder(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return NewRecorder(d).Run(ctx)
}
