package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
)

// watchLag sets convida_consumer_lag_messages for the runner's group and
// topic every LagInterval until ctx ends. It asks the broker, not the
// partition goroutines: a handler stuck on one batch, or a partition no
// member owns during a rebalance, still shows its lag growing. Every member
// of a group reports the whole group's lag, so replicas agree and one that
// is alive is enough. A failed measurement keeps the last value and is
// logged at debug: the broker being away is what the other signals
// (readiness, publish errors) are for.
func (r *runner) watchLag(ctx context.Context) {
	if r.cfg.Metrics == nil {
		return
	}
	transport := &kafka.Transport{ClientID: "convida-kafkabus-lag"}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(r.cfg.Brokers...), Transport: transport, Timeout: 10 * time.Second}
	t := time.NewTicker(r.cfg.LagInterval)
	defer t.Stop()
	for {
		lag, err := GroupLag(ctx, client, r.cfg.GroupID, r.cfg.Topic)
		switch {
		case err == nil:
			r.cfg.Metrics.setLag(r.cfg.GroupID, r.cfg.Topic, lag)
		case ctx.Err() == nil:
			r.log.Debug("measuring the consumer lag failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// GroupLag returns how many messages of topic group has not committed yet:
// summed over the topic's partitions, the high-water mark less the group's
// committed offset, or less the partition's first offset where the group
// has committed none (RunGroup starts there). It is what
// kafka-consumer-groups.sh --describe shows as LAG, added up.
func GroupLag(ctx context.Context, client *kafka.Client, group, topic string) (int64, error) {
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return 0, fmt.Errorf("kafka: metadata of topic %q: %v", topic, topicError(meta))
	}
	var ids []int
	for _, p := range meta.Topics[0].Partitions {
		ids = append(ids, p.ID)
	}
	committed, err := committedOffsets(ctx, client, group, topic, ids)
	if err != nil {
		return 0, err
	}
	// Two requests: a broker refuses a partition named twice in one.
	last, err := listOffsets(ctx, client, topic, ids, kafka.LastOffsetOf)
	if err != nil {
		return 0, err
	}
	first, err := listOffsets(ctx, client, topic, ids, kafka.FirstOffsetOf)
	if err != nil {
		return 0, err
	}
	var lag int64
	for _, id := range ids {
		from, ok := committed[id]
		if !ok || from < 0 {
			from = first[id]
		}
		if d := last[id] - from; d > 0 {
			lag += d
		}
	}
	return lag, nil
}

func topicError(meta *kafka.MetadataResponse) error {
	if len(meta.Topics) == 0 {
		return errors.New("not in the answer")
	}
	return meta.Topics[0].Error
}

// committedOffsets returns group's committed offset of each partition it
// has committed on; a group the broker does not know has none.
func committedOffsets(ctx context.Context, client *kafka.Client, group, topic string, ids []int) (map[int]int64, error) {
	resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ids}})
	if err != nil {
		return nil, err
	}
	out := map[int]int64{}
	if errors.Is(resp.Error, kafka.GroupIdNotFound) {
		return out, nil
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("kafka: committed offsets of group %q: %w", group, resp.Error)
	}
	for _, p := range resp.Topics[topic] {
		if p.Error == nil {
			out[p.Partition] = p.CommittedOffset
		}
	}
	return out, nil
}

// listOffsets returns the offset of each partition that of asks for (its
// first or its high-water mark).
func listOffsets(ctx context.Context, client *kafka.Client, topic string, ids []int, of func(int) kafka.OffsetRequest) (map[int]int64, error) {
	reqs := make([]kafka.OffsetRequest, len(ids))
	for i, id := range ids {
		reqs[i] = of(id)
	}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, err
	}
	out := make(map[int]int64, len(ids))
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("kafka: offsets of %s/%d: %w", topic, p.Partition, p.Error)
		}
		// kafka-go files the answer by the timestamp the broker echoes,
		// which differs between brokers (a real one answers -1 to both
		// questions): the one asked for is the only offset not left at -1
		// or its initial 0.
		got := max(p.FirstOffset, p.LastOffset)
		for o := range p.Offsets {
			got = max(got, o)
		}
		out[p.Partition] = got
	}
	return out, nil
}
