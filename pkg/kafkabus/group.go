package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/retry"
)

// BatchHandler processes a batch of messages of one partition, in offset
// order. It is called by one goroutine per partition, so calls for different
// partitions run concurrently. It must be idempotent: after a rebalance, a
// restart or a cancelled batch, messages it has already processed come again.
//
// Returning nil means every message of the batch is processed; RunGroup then
// commits past the batch. An apperr.Permanent error means some message can never
// succeed; any other error is transient and the same batch is retried after a
// backoff. The handler must honour ctx: it ends when the run stops or this
// member loses the partition, and the batch is then abandoned and redelivered
// later. It must not modify msgs.
type BatchHandler func(ctx context.Context, msgs []Message) error

// Handler processes one message; Each turns it into a BatchHandler.
type Handler func(ctx context.Context, msg Message) error

// Each returns a BatchHandler that calls h for each message in order and
// stops at the first error, returning it. After a transient error the whole
// batch is retried, including the messages h already processed, which is
// fine because h must be idempotent.
func Each(h Handler) BatchHandler {
	return func(ctx context.Context, msgs []Message) error {
		for _, m := range msgs {
			if err := h(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
}

// Dead-letter record headers. Key, value and the original headers are copied.
const (
	HeaderDLQReason    = "dlq-reason"    // the permanent error's text
	HeaderDLQTopic     = "dlq-topic"     // where the message came from
	HeaderDLQPartition = "dlq-partition" // its partition, decimal
	HeaderDLQOffset    = "dlq-offset"    // its offset, decimal
	HeaderDLQGroup     = "dlq-group"     // the consumer group that gave up on it
)

// GroupConfig configures RunGroup. Brokers, GroupID and Topic are required;
// every other zero value means the default named on the field.
type GroupConfig struct {
	Brokers []string
	GroupID string
	Topic   string
	// DeadLetterTopic receives messages that failed permanently; "" means
	// Topic + ".dlq". RunGroup creates it when missing, with one partition
	// and the broker's default replication factor.
	DeadLetterTopic string
	// MaxBatch is the most messages handed to the handler at once; 500.
	MaxBatch int
	// MaxWait bounds how long, after the first message of a batch, RunGroup
	// keeps collecting messages the broker already has; 5 ms. Collection
	// stops earlier when the partition's end is reached, so a lone message
	// is handled at once.
	MaxWait time.Duration
	// SessionTimeout (30 s): a member silent this long is dropped from the
	// group. HeartbeatInterval (1 s): how often a member checks in, and so
	// how quickly it notices a rebalance. RebalanceTimeout (30 s): how long
	// the coordinator waits for members to rejoin in a rebalance.
	SessionTimeout, HeartbeatInterval, RebalanceTimeout time.Duration
	// RetryBackoff (100 ms) and MaxRetryBackoff (10 s) bound the jittered
	// exponential wait between retries of a batch after a transient error,
	// and between retries of commits and dead-letter writes.
	RetryBackoff, MaxRetryBackoff time.Duration
	// LagInterval (10 s) is how often the group's lag is measured into
	// convida_consumer_lag_messages (only with Metrics).
	LagInterval time.Duration
	// Final, when set, tells a handler's error that retrying cannot fix
	// besides apperr.Permanent ones (postgres.IsPermanent: a constraint a
	// message breaks): its message is dead-lettered like a permanent one.
	Final   func(error) bool
	Logger  *zap.Logger
	Metrics *Metrics // optional
}

func (c GroupConfig) withDefaults() (GroupConfig, error) {
	if len(c.Brokers) == 0 || c.GroupID == "" || c.Topic == "" {
		return c, apperr.Errorf(apperr.Invalid, "kafka: group config needs Brokers, GroupID and Topic")
	}
	if c.MaxBatch < 0 || c.MaxWait < 0 || c.SessionTimeout < 0 || c.HeartbeatInterval < 0 ||
		c.RebalanceTimeout < 0 || c.RetryBackoff < 0 || c.MaxRetryBackoff < 0 || c.LagInterval < 0 {
		return c, apperr.Errorf(apperr.Invalid, "kafka: group config has a negative value")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = c.Topic + ".dlq"
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 500
	}
	def(&c.MaxWait, 5*time.Millisecond)
	def(&c.SessionTimeout, 30*time.Second)
	def(&c.HeartbeatInterval, time.Second)
	def(&c.RebalanceTimeout, 30*time.Second)
	def(&c.RetryBackoff, 100*time.Millisecond)
	def(&c.MaxRetryBackoff, 10*time.Second)
	def(&c.LagInterval, 10*time.Second)
	if c.MaxRetryBackoff < c.RetryBackoff {
		c.MaxRetryBackoff = c.RetryBackoff
	}
	c.Logger = orNop(c.Logger).With(zap.String("group", c.GroupID), zap.String("topic", c.Topic))
	return c, nil
}

// runner is one RunGroup call.
type runner struct {
	cfg      GroupConfig
	handler  BatchHandler
	dlq      *Writer
	log      *zap.Logger
	joinWarn retry.Every // the brokers away: at start, or when the group is joined again
}

// RunGroup joins consumer group cfg.GroupID on cfg.Topic and processes
// messages until ctx ends, then leaves the group and returns nil.
//
// Each partition assigned to this member gets its own goroutine, which reads
// from the group's committed offset (the partition's start when there is
// none), hands batches to handler and, only after handler returned nil,
// commits the offset after the batch. Offsets are never committed
// automatically nor past a message that was not processed, so delivery is at
// least once and in offset order within a partition.
//
// A transient handler error makes the partition wait and retry the same batch
// with backoff; other partitions go on. An apperr.Permanent error on a batch of more
// than one message makes RunGroup re-run it one message at a time; a single
// message failing permanently is written to the dead-letter topic with the
// dlq-* headers, and its offset committed. A handler panic counts as a
// permanent error. When a rebalance ends the generation, the in-flight batch
// is abandoned (its ctx is cancelled) and will be redelivered to the
// partition's next owner.
//
// RunGroup returns an error only for what retrying cannot fix: an invalid
// config (apperr.Invalid), a Topic that does not exist (apperr.NotFound) or
// a group the broker refuses (authorization, inconsistent protocol).
// Anything else, such as a cluster unreachable at start or a lost
// coordinator, is logged and retried until ctx ends.
func RunGroup(ctx context.Context, cfg GroupConfig, handler BatchHandler) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	if handler == nil {
		return apperr.Errorf(apperr.Invalid, "kafka: nil handler")
	}
	r := &runner{cfg: cfg, handler: handler, log: cfg.Logger, joinWarn: retry.Every{Interval: retry.OutageWarnEvery}}
	if err := r.awaitTopics(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	r.dlq = NewWriter(WriterConfig{Brokers: cfg.Brokers, Topic: cfg.DeadLetterTopic, Logger: cfg.Logger, Metrics: cfg.Metrics})
	defer r.dlq.Close()
	cfg.Metrics.start(cfg.GroupID, cfg.Topic)
	lagCtx, stopLag := context.WithCancel(ctx)
	lagDone := make(chan struct{})
	go func() { defer close(lagDone); r.watchLag(lagCtx) }()
	defer func() { stopLag(); <-lagDone }()

	cg, err := kafka.NewConsumerGroup(r.groupConfig())
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err, "kafka: invalid consumer group config")
	}
	// Close ends the current generation, waits for its partition
	// goroutines and leaves the group, so that the partitions move to the
	// remaining members at once.
	defer cg.Close()
	for {
		gen, err := cg.Next(ctx)
		switch {
		case ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed):
			r.log.Info("leaving consumer group")
			return nil
		case isFatalGroupError(err):
			return fmt.Errorf("kafka: consumer group %q: %w", cfg.GroupID, err)
		case err != nil:
			if ce := r.log.Check(outageLevel(&r.joinWarn), "joining consumer group failed; retrying"); ce != nil {
				ce.Write(zap.Error(err))
			}
			continue
		}
		r.startGeneration(ctx, gen)
	}
}

// awaitTopics runs prepareTopics until the cluster answers it: a broker
// lost between a program's start and its consumer's is waited for, with
// the runner's backoff and a warning at most every
// retry.OutageWarnEvery, instead of stopping the program. A missing topic is returned
// at once.
func (r *runner) awaitTopics(ctx context.Context) error {
	waits := &retry.Backoff{Base: r.cfg.RetryBackoff, Max: r.cfg.MaxRetryBackoff}
	for {
		err := r.prepareTopics(ctx)
		if err == nil || ctx.Err() != nil || !apperr.Is(err, apperr.Unavailable) {
			return err
		}
		if ce := r.log.Check(outageLevel(&r.joinWarn), "the brokers do not answer; waiting for them to start consuming (KAFKA_BROKERS)"); ce != nil {
			ce.Write(zap.Error(err))
		}
		if retry.Sleep(ctx, waits.Next()) != nil {
			return ctx.Err()
		}
	}
}

// prepareTopics checks that the topic exists, so a typo fails fast instead of
// looping on join errors, and creates the dead-letter topic.
func (r *runner) prepareTopics(ctx context.Context) error {
	transport := &kafka.Transport{ClientID: "convida-kafkabus"}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(r.cfg.Brokers...), Transport: transport}
	missing, err := missingTopics(ctx, client, []TopicSpec{{Name: r.cfg.Topic}})
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "kafka: reading topic metadata failed")
	}
	if len(missing) > 0 {
		return apperr.Errorf(apperr.NotFound, "kafka: topic %q does not exist", r.cfg.Topic)
	}
	return EnsureTopics(ctx, r.cfg.Brokers, TopicSpec{Name: r.cfg.DeadLetterTopic, Partitions: 1, ReplicationFactor: -1})
}

func (r *runner) groupConfig() kafka.ConsumerGroupConfig {
	return kafka.ConsumerGroupConfig{
		ID:                    r.cfg.GroupID,
		Brokers:               r.cfg.Brokers,
		Topics:                []string{r.cfg.Topic},
		HeartbeatInterval:     r.cfg.HeartbeatInterval,
		SessionTimeout:        r.cfg.SessionTimeout,
		RebalanceTimeout:      r.cfg.RebalanceTimeout,
		JoinGroupBackoff:      min(r.cfg.MaxRetryBackoff, time.Second),
		WatchPartitionChanges: true,
		StartOffset:           kafka.FirstOffset,
		Logger:                kafkaLogger(r.log, zapcore.DebugLevel),
		ErrorLogger:           kafkaErrorLogger(r.log, zapcore.InfoLevel, r.cfg.Metrics, "group"),
	}
}

// isFatalGroupError reports the join errors that no retry can fix.
func isFatalGroupError(err error) bool {
	for _, fatal := range []kafka.Error{
		kafka.GroupAuthorizationFailed, kafka.TopicAuthorizationFailed,
		kafka.ClusterAuthorizationFailed, kafka.SASLAuthenticationFailed,
		kafka.InvalidGroupId, kafka.InconsistentGroupProtocol,
	} {
		if errors.Is(err, fatal) {
			return true
		}
	}
	return false
}

// startGeneration starts one goroutine per assigned partition. kafka-go ends
// the generation when any of them returns and waits for all of them before it
// rejoins, which is what keeps an old owner from committing after a new owner
// has started.
func (r *runner) startGeneration(ctx context.Context, gen *kafka.Generation) {
	assigned := gen.Assignments[r.cfg.Topic]
	ids := make([]int, len(assigned))
	for i, a := range assigned {
		ids[i] = a.ID
	}
	r.log.Info("consumer group generation started",
		zap.Int32("generation", gen.ID), zap.String("member", gen.MemberID), zap.Ints("partitions", ids))
	commits := &committer{gen: gen}
	for _, a := range assigned {
		p := &partition{
			runner: r, commits: commits, id: a.ID, next: a.Offset,
			log: r.log.With(zap.Int("partition", a.ID), zap.Int32("generation", gen.ID)),
		}
		gen.Start(func(genCtx context.Context) { p.run(ctx, genCtx) })
	}
}
