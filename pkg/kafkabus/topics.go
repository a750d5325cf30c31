package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/convida/convida/pkg/apperr"
)

// TopicSpec describes a topic for EnsureTopics.
type TopicSpec struct {
	Name string
	// Partitions is the partition count of a topic EnsureTopics creates;
	// 0 leaves it to the broker's default (num.partitions).
	Partitions int
	// ReplicationFactor of a topic EnsureTopics creates; 0 means 1 and -1
	// the broker's default (default.replication.factor).
	ReplicationFactor int
}

// ensureTimeout bounds EnsureTopics when ctx has no earlier deadline, so that
// a start-up against an unreachable cluster fails instead of hanging.
const ensureTimeout = 30 * time.Second

// EnsureTopics creates those of topics that do not exist yet and returns once
// the cluster's metadata shows every one of them with a leader for each
// partition. A topic that already exists is left as it is, even when its
// partition count or replication factor differ from the spec.
//
// It is idempotent and safe to run concurrently from several processes: a
// topic that another process creates first counts as created. It waits at
// most until ctx ends or 30 s have passed; the error then, or when the
// brokers cannot be reached, has code apperr.Unavailable. A spec without a
// name or with negative counts yields apperr.Invalid.
func EnsureTopics(ctx context.Context, brokers []string, topics ...TopicSpec) error {
	if err := validateSpecs(brokers, topics); err != nil {
		return err
	}
	if len(topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ensureTimeout)
	defer cancel()
	transport := &kafka.Transport{ClientID: "convida-kafkabus"}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: transport}

	missing, err := missingTopics(ctx, client, topics)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "kafka: reading topic metadata failed")
	}
	if len(missing) > 0 {
		if err := createTopics(ctx, client, missing); err != nil {
			return apperr.Wrap(apperr.Unavailable, err, "kafka: creating topics failed")
		}
	}
	for {
		missing, err = missingTopics(ctx, client, topics)
		if err == nil && len(missing) == 0 {
			return nil
		}
		if !sleep(ctx, 25*time.Millisecond) {
			if err == nil {
				err = fmt.Errorf("topics %v not visible in metadata: %w", names(missing), ctx.Err())
			}
			return apperr.Wrap(apperr.Unavailable, err, "kafka: waiting for topics failed")
		}
	}
}

func validateSpecs(brokers []string, topics []TopicSpec) error {
	if len(brokers) == 0 {
		return apperr.Errorf(apperr.Invalid, "kafka: no broker addresses")
	}
	for _, t := range topics {
		if t.Name == "" || t.Partitions < 0 || t.ReplicationFactor < -1 {
			return apperr.Errorf(apperr.Invalid, "kafka: invalid topic spec %+v", t)
		}
	}
	return nil
}

// missingTopics returns the specs whose topic the metadata does not show
// complete: absent, in error, without partitions or without a leader.
func missingTopics(ctx context.Context, client *kafka.Client, topics []TopicSpec) ([]TopicSpec, error) {
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names(topics)})
	if err != nil {
		return nil, err
	}
	ready := make(map[string]bool, len(meta.Topics))
	for _, t := range meta.Topics {
		ready[t.Name] = t.Error == nil && len(t.Partitions) > 0 && allLed(t.Partitions)
	}
	var missing []TopicSpec
	for _, t := range topics {
		if !ready[t.Name] {
			missing = append(missing, t)
		}
	}
	return missing, nil
}

func allLed(ps []kafka.Partition) bool {
	for _, p := range ps {
		if p.Error != nil || p.Leader.Host == "" {
			return false
		}
	}
	return true
}

func createTopics(ctx context.Context, client *kafka.Client, topics []TopicSpec) error {
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		parts, rf := t.Partitions, t.ReplicationFactor
		if parts == 0 {
			parts = -1 // broker default
		}
		if rf == 0 {
			rf = 1
		}
		req.Topics = append(req.Topics, kafka.TopicConfig{
			Topic: t.Name, NumPartitions: parts, ReplicationFactor: rf,
		})
	}
	resp, err := client.CreateTopics(ctx, req)
	if err != nil {
		return err
	}
	var errs []error
	for name, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			errs = append(errs, fmt.Errorf("topic %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func names(topics []TopicSpec) []string {
	out := make([]string, len(topics))
	for i, t := range topics {
		out[i] = t.Name
	}
	return out
}
