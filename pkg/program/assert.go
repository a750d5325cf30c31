package program

import (
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/scheduler"
)

// The stores implement the interfaces their users (the edges) declare. The
// assertions live here, where both sides are imported, because an adapter
// never imports an edge.
var (
	_ ingest.RecordStore = (*postgres.DeliveryStore)(nil)
	_ scheduler.Store    = (*postgres.SchedulerStore)(nil)
	_ scheduler.Leader   = (*postgres.AdvisoryLeader)(nil)
)
