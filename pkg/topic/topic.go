// Package topic is the one home of Convida's message contracts: the names
// of the topics, their dead-letter topics and the message headers, the
// encoding of ledger commands, of outbox events and of inbound delivery
// records as messages and their decoding, and the routing rule that sends
// each event to its topic. Producers and consumers go through it, so that a
// contract changes in one place.
package topic

import (
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/outbox"
)

// The topics.
const (
	// Commands carries ledger commands keyed by member id, so one member's
	// commands are applied in order by one partition's worker.
	Commands = "ledger.commands"
	// Events carries the outbox's events keyed by member id: the outbound
	// webhook dispatcher consumes it.
	Events = "events"
	// Redemptions carries redemption.requested events from the ledger to
	// the dispatcher, apart from Events so that a slow platform never
	// delays outbound webhooks.
	Redemptions = "redemptions"
	// Deliveries carries the record of every inbound delivery the ingest
	// answered, keyed by merchant id; the recorder writes them to
	// inbound_deliveries in batches.
	Deliveries = "inbound.deliveries"
)

// DeadLetter is the name of the dead-letter topic of topic, where a
// consumer moves a message it can never process (kafkabus.RunGroup's
// default).
func DeadLetter(topic string) string { return topic + ".dlq" }

// Message headers.
const (
	// HeaderCommandType is a ledger command's type (ledger.Cmd*).
	HeaderCommandType = "command-type"
	// HeaderMerchantID is the merchant of a command, an event or a retry.
	HeaderMerchantID = "merchant-id"
	// HeaderEventType is an event's type (pkg/event).
	HeaderEventType = "event-type"
	// HeaderEventID is an event's id, by which receivers deduplicate.
	HeaderEventID = "event-id"
	// HeaderKind marks a message of the events topic that is not an event:
	// KindRetry is a webhook job to retry, its value the job as JSON (the
	// scheduler's waker writes them, the dispatcher reads them).
	HeaderKind = "kind"
	KindRetry  = "webhook.retry"
)

// Specs are the topics a deployment creates at start, with partitions
// partitions each; a dead-letter topic has one.
func Specs(partitions int) []kafkabus.TopicSpec {
	var specs []kafkabus.TopicSpec
	for _, name := range []string{Commands, Events, Redemptions, Deliveries} {
		specs = append(specs, kafkabus.TopicSpec{Name: name, Partitions: partitions},
			kafkabus.TopicSpec{Name: DeadLetter(name), Partitions: 1})
	}
	return specs
}

// Of routes an outbox record: internal events go to their own topic, the
// rest to Events.
func Of(rec outbox.Record) string {
	if rec.Type == event.RedemptionRequested {
		return Redemptions
	}
	return Events
}
