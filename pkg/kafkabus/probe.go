package kafkabus

import (
	"context"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/convida/convida/pkg/apperr"
)

// Probe tells whether the brokers answer, for a readiness check: one
// ApiVersions request with a short timeout, its answer kept for ProbeTTL
// so that frequent checks cost the cluster one request a second or two.
type Probe struct {
	client    *kafka.Client
	transport *kafka.Transport

	mu  sync.Mutex
	at  time.Time // of the last answer kept
	err error
}

// Probe timings: how long an answer is kept, and how long a request may
// take before the brokers count as not answering.
const (
	ProbeTTL     = 2 * time.Second
	probeTimeout = time.Second
)

// NewProbe returns a Probe of brokers; it connects on its first Check.
func NewProbe(brokers []string) *Probe {
	t := &kafka.Transport{ClientID: "convida-probe", DialTimeout: probeTimeout}
	return &Probe{transport: t, client: &kafka.Client{Addr: kafka.TCP(brokers...), Transport: t, Timeout: probeTimeout}}
}

// Check returns nil when a broker answered within the last ProbeTTL, or
// answers now; otherwise an apperr.Unavailable error.
func (p *Probe) Check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < ProbeTTL {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := p.client.ApiVersions(ctx, &kafka.ApiVersionsRequest{})
	if err != nil {
		err = apperr.Wrap(apperr.Unavailable, err, "kafka: the brokers do not answer")
		p.transport.CloseIdleConnections() // the next check dials afresh
	}
	p.at, p.err = time.Now(), err
	return err
}

// Close releases the Probe's connections.
func (p *Probe) Close() { p.transport.CloseIdleConnections() }
