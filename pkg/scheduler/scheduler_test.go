package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/scheduler"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
)

// noCommands is the release publisher of a database with nothing due.
type noCommands struct{}

func (noCommands) PublishCommands(context.Context, []ledger.Command) error {
	return errors.New("no release was expected")
}

// TestTickRunsEveryTaskWhenTheSweepFails: the outbox sweep fails (a
// stranded event and a broker that cannot be reached); every task still
// runs, the one that fails too, and Tick returns both errors.
func TestTickRunsEveryTaskWhenTheSweepFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	rec, err := outbox.NewRecord(uuid.New(), uuid.New(), "referral.created", map[string]int{"seq": 1}, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `WITH o AS (INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING merchant_id, event_id, created_at)
INSERT INTO outbox_pending SELECT * FROM o`, rec.MerchantID, rec.EventID, rec.MemberID, rec.Type, string(rec.Payload), rec.CreatedAt); err != nil {
		t.Fatal(err)
	}
	down := topic.NewEventBus(kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: []string{"127.0.0.1:1"}, Topic: topic.Events}))
	t.Cleanup(func() { _ = down.Close() })
	leader := postgres.NewAdvisoryLeader(pool, 0x7465_7374)
	t.Cleanup(func() { leader.Release(context.Background()) })

	taskErr := errors.New("the first task failed")
	var ran []string
	s := &scheduler.Scheduler{
		Store: postgres.NewSchedulerStore(pool), Leader: leader, Publisher: noCommands{},
		Outbox: outbox.NewRelay(postgres.NewOutboxStore(pool), down),
		Log:    zap.NewNop(), Now: time.Now,
		Tasks: []scheduler.Task{
			func(context.Context, time.Time) error { ran = append(ran, "first"); return taskErr },
			func(context.Context, time.Time) error { ran = append(ran, "retries"); return nil },
		},
	}
	tickCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = s.Tick(tickCtx)
	if len(ran) != 2 {
		t.Errorf("tasks run = %v, want both though the sweep failed", ran)
	}
	if !errors.Is(err, taskErr) || apperr.CodeOf(err) != apperr.Unavailable {
		t.Errorf("Tick = %v, want the sweep's broker failure (unavailable) and the task's error", err)
	}
}
