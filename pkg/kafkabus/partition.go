package kafkabus

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/apperr"
)

// readerMaxWait is how long the broker may hold an empty fetch. Closing a
// reader waits for its fetch in flight, so this bounds how long a partition
// goroutine takes to stop in a rebalance; it costs idle fetches in return.
const readerMaxWait = 250 * time.Millisecond

// committer serialises one generation's commits on its coordinator connection.
type committer struct {
	mu  sync.Mutex
	gen *kafka.Generation
}

func (c *committer) commit(topic string, partition int, next int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen.CommitOffsets(map[string]map[int]int64{topic: {partition: next}})
}

// partition is the goroutine that owns one partition for one generation.
type partition struct {
	*runner
	commits *committer
	id      int
	next    int64 // offset of the first message not yet committed (or FirstOffset)
	// repeatBelow is the first offset past the previous owner's possible
	// last batch (see Message.Repeat); 0 until the first fetch.
	repeatBelow int64
	genCtx      context.Context
	log         *zap.Logger
}

// run processes the partition until ctx or the generation ends. It returns
// only when the generation has ended: returning earlier would end the
// generation at once and make kafka-go rejoin the group while RunGroup is
// about to leave it.
func (p *partition) run(ctx, genCtx context.Context) {
	p.genCtx = genCtx
	work, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(genCtx, cancel)
	p.loop(work)
	stop()
	cancel()
	<-genCtx.Done()
}

func (p *partition) loop(ctx context.Context) {
	reader := p.newReader()
	defer func() { reader.Close() }()
	waits := p.backoff()
	for ctx.Err() == nil {
		batch, err := p.fetch(ctx, reader)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// kafka-go retries broker errors itself; what reaches us
			// is fatal for this reader, so start a fresh one.
			p.log.Warn("reading partition failed; reopening", zap.Error(err))
			reader.Close()
			if !sleep(ctx, waits.Next()) {
				return
			}
			reader = p.newReader()
			continue
		}
		waits.Reset()
		if p.repeatBelow == 0 {
			p.repeatBelow = batch[0].Offset + int64(p.cfg.MaxBatch)
		}
		for i := range batch {
			batch[i].Repeat = batch[i].Offset < p.repeatBelow
		}
		p.cfg.Metrics.batch(p.cfg.GroupID, p.cfg.Topic, len(batch))
		if !p.process(ctx, batch) {
			return
		}
	}
}

func (p *partition) newReader() *kafka.Reader {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:         p.cfg.Brokers,
		Topic:           p.cfg.Topic,
		Partition:       p.id,
		MinBytes:        1,
		MaxBytes:        10 << 20,
		MaxWait:         readerMaxWait,
		QueueCapacity:   p.cfg.MaxBatch,
		ReadLagInterval: -1,
		ReadBackoffMin:  p.cfg.RetryBackoff,
		ReadBackoffMax:  p.cfg.MaxRetryBackoff,
		Logger:          kafkaLogger(p.log, zapcore.DebugLevel),
		ErrorLogger:     kafkaErrorLogger(p.log, zapcore.InfoLevel, p.cfg.Metrics, "reader"),
	})
	_ = r.SetOffset(p.next) // fails only for group readers
	return r
}

// fetch blocks for the first message, then collects the messages the broker
// already has, up to MaxBatch, for at most MaxWait. Once a message reports
// the high-water mark of its fetch, it keeps only what the reader has
// already buffered (bufferedWait): the mark is that of the fetch that
// brought the message, and while a batch is applied the reader prefetches
// many small responses, each "caught up" to its own older mark. Stopping
// there would make every batch a single fetch response (about one message
// under load); waiting for more would add latency to a lone message.
func (p *partition) fetch(ctx context.Context, r *kafka.Reader) ([]Message, error) {
	first, err := r.FetchMessage(ctx)
	if err != nil {
		return nil, err
	}
	batch := []Message{fromKafka(first)}
	if p.cfg.MaxBatch == 1 {
		return batch, nil
	}
	wait := p.cfg.MaxWait
	if caughtUp(first) {
		wait = bufferedWait
	}
	deadline := time.Now().Add(wait)
	for len(batch) < p.cfg.MaxBatch {
		collect, cancel := context.WithDeadline(ctx, deadline)
		m, err := r.FetchMessage(collect)
		cancel()
		if err != nil {
			break // the wait passed (or ctx ended, seen by the caller)
		}
		batch = append(batch, fromKafka(m))
		if caughtUp(m) {
			deadline = minTime(deadline, time.Now().Add(bufferedWait))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // stopping: the batch will be fetched again by whoever resumes
	}
	return batch, nil
}

// bufferedWait is how long fetch waits for a message once the partition
// looked caught up: long enough to take what the reader already holds.
const bufferedWait = 300 * time.Microsecond

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func caughtUp(m kafka.Message) bool {
	return m.HighWaterMark > 0 && m.Offset+1 >= m.HighWaterMark
}

// process hands batch to the handler until it succeeds, then commits past it.
// It reports false when ctx ended first; the batch is then abandoned, which
// is safe because it was not committed and will be redelivered.
func (p *partition) process(ctx context.Context, batch []Message) bool {
	waits := p.backoff()
	last := batch[len(batch)-1].Offset
	for attempt := 1; ; attempt++ {
		err := p.call(ctx, batch)
		if err == nil {
			return p.commit(last+1, len(batch))
		}
		if ctx.Err() != nil {
			return false
		}
		permanent := apperr.IsPermanent(err) || p.cfg.Final != nil && p.cfg.Final(err)
		p.cfg.Metrics.handlerError(p.cfg.GroupID, p.cfg.Topic, permanent)
		// Whatever the handler did before failing may be done again.
		for i := range batch {
			batch[i].Repeat = true
		}
		switch {
		case permanent && len(batch) > 1:
			p.log.Info("permanent error in batch; retrying one message at a time",
				zap.Int64("first_offset", batch[0].Offset), zap.Int64("last_offset", last), zap.Error(err))
			for i := range batch {
				if !p.process(ctx, batch[i:i+1]) {
					return false
				}
			}
			return true
		case permanent:
			return p.deadLetter(ctx, batch[0], err) && p.commit(last+1, 0)
		}
		wait := waits.Next()
		p.log.Warn("handler failed; retrying batch",
			zap.Int64("first_offset", batch[0].Offset), zap.Int("size", len(batch)),
			zap.Int("attempt", attempt), zap.Duration("backoff", wait), zap.Error(err))
		if !sleep(ctx, wait) {
			return false
		}
	}
}

// call runs the handler, turning a panic into a permanent error: a panic is a
// bug that the same input will trigger again, and retrying it forever would
// stall the partition.
func (p *partition) call(ctx context.Context, batch []Message) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("handler panicked", zap.Any("panic", v), zap.Stack("stack"))
			err = apperr.Permanent(fmt.Errorf("handler panicked: %v", v))
		}
	}()
	return p.handler(ctx, batch)
}

// commit commits next, retrying until it succeeds or the generation ends. It
// is bounded by the generation, not the run: a batch the handler finished
// while the run was stopping is still worth committing.
func (p *partition) commit(next int64, handled int) bool {
	waits := p.backoff()
	for {
		err := p.commits.commit(p.cfg.Topic, p.id, next)
		if err == nil {
			p.next = next
			p.cfg.Metrics.handledOK(p.cfg.GroupID, p.cfg.Topic, handled)
			return true
		}
		if p.genCtx.Err() != nil {
			p.log.Info("generation ended before commit; the batch will be redelivered",
				zap.Int64("offset", next), zap.Error(err))
			return false
		}
		p.log.Warn("commit failed; retrying", zap.Int64("offset", next), zap.Error(err))
		if !sleep(p.genCtx, waits.Next()) {
			return false
		}
	}
}

// deadLetter writes m to the dead-letter topic, retrying until it is
// acknowledged or ctx ends.
func (p *partition) deadLetter(ctx context.Context, m Message, cause error) bool {
	headers := maps.Clone(m.Headers)
	if headers == nil {
		headers = make(map[string]string, 5)
	}
	headers[HeaderDLQReason] = cause.Error()
	headers[HeaderDLQTopic] = m.Topic
	headers[HeaderDLQPartition] = strconv.Itoa(m.Partition)
	headers[HeaderDLQOffset] = strconv.FormatInt(m.Offset, 10)
	headers[HeaderDLQGroup] = p.cfg.GroupID
	dl := Message{Key: m.Key, Value: m.Value, Headers: headers}
	waits := p.backoff()
	for {
		err := p.dlq.Publish(ctx, dl)
		if err == nil {
			p.cfg.Metrics.deadLetter(p.cfg.GroupID, p.cfg.Topic)
			p.log.Error("message moved to the dead-letter topic",
				zap.Int64("offset", m.Offset), zap.String("dlq", p.cfg.DeadLetterTopic), zap.Error(cause))
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		p.log.Warn("dead-letter write failed; retrying", zap.Int64("offset", m.Offset), zap.Error(err))
		if !sleep(ctx, waits.Next()) {
			return false
		}
	}
}
