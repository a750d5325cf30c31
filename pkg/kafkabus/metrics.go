package kafkabus

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"go.uber.org/zap/zapcore"
)

// Metrics are the Prometheus metrics of writers and group runners. A nil
// *Metrics records nothing, so it is optional everywhere.
type Metrics struct {
	handled      *prometheus.CounterVec
	batchSize    *prometheus.HistogramVec
	handlerErrs  *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	publish      *prometheus.HistogramVec
	lag          *prometheus.GaugeVec
	clientErrs   *prometheus.CounterVec
}

// NewMetrics creates the kafkabus_* metrics and
// convida_consumer_lag_messages, labelled program=program, and
// registers them on reg. Call it once per registry and share the result
// between writers and runners: registering twice panics, like
// prometheus.MustRegister.
func NewMetrics(reg prometheus.Registerer, program string) *Metrics {
	f := promauto.With(reg)
	cl := prometheus.Labels{"program": program}
	return &Metrics{
		handled: f.NewCounterVec(prometheus.CounterOpts{
			Name: "kafkabus_messages_handled_total", ConstLabels: cl,
			Help: "Messages whose handler succeeded and whose offset was then committed.",
		}, []string{"group", "topic"}),
		batchSize: f.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kafkabus_batch_size", ConstLabels: cl,
			Help:    "Messages per batch handed to a handler (its count is the number of batches).",
			Buckets: []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000},
		}, []string{"group", "topic"}),
		handlerErrs: f.NewCounterVec(prometheus.CounterOpts{
			Name: "kafkabus_handler_errors_total", ConstLabels: cl,
			Help: "Handler calls that returned an error, by kind (transient, permanent).",
		}, []string{"group", "topic", "kind"}),
		deadLettered: f.NewCounterVec(prometheus.CounterOpts{
			Name: "kafkabus_dead_lettered_total", ConstLabels: cl,
			Help: "Messages moved to the dead-letter topic after a permanent error.",
		}, []string{"group", "topic"}),
		publish: f.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kafkabus_publish_seconds", ConstLabels: cl,
			Help:    "Duration of Writer.Publish calls until every message was acknowledged, by result (ok; refused: some messages refused for themselves, the others written; error).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"topic", "result"}),
		lag: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "convida_consumer_lag_messages", ConstLabels: cl,
			Help: "Messages of the topic the consumer group has not committed yet, summed over its partitions " +
				"(every member reports the whole group's: take the max over replicas).",
		}, []string{"group", "topic"}),
		clientErrs: f.NewCounterVec(prometheus.CounterOpts{
			Name: "kafkabus_client_errors_total", ConstLabels: cl,
			Help: "Error lines of the Kafka client (reader, group, writer), by the level they were logged at: debug for the connections it retries by itself (a steady rate is normal on an idle topic), warn for messages skipped.",
		}, []string{"client", "level"}),
	}
}

// start makes the series of a runner exist at zero before anything
// happens: a counter that appears with its first increment is invisible to
// increase() and rate(), so an alert on the first dead letter would never
// fire.
func (m *Metrics) start(group, topic string) {
	if m == nil {
		return
	}
	m.handled.WithLabelValues(group, topic)
	m.handlerErrs.WithLabelValues(group, topic, "transient")
	m.handlerErrs.WithLabelValues(group, topic, "permanent")
	m.deadLettered.WithLabelValues(group, topic)
}

func (m *Metrics) setLag(group, topic string, lag int64) {
	if m != nil {
		m.lag.WithLabelValues(group, topic).Set(float64(lag))
	}
}

func (m *Metrics) clientError(client string, level zapcore.Level) {
	if m != nil {
		m.clientErrs.WithLabelValues(client, level.String()).Inc()
	}
}

func (m *Metrics) batch(group, topic string, n int) {
	if m != nil {
		m.batchSize.WithLabelValues(group, topic).Observe(float64(n))
	}
}

func (m *Metrics) handledOK(group, topic string, n int) {
	if m != nil {
		m.handled.WithLabelValues(group, topic).Add(float64(n))
	}
}

func (m *Metrics) handlerError(group, topic string, permanent bool) {
	if m == nil {
		return
	}
	kind := "transient"
	if permanent {
		kind = "permanent"
	}
	m.handlerErrs.WithLabelValues(group, topic, kind).Inc()
}

func (m *Metrics) deadLetter(group, topic string) {
	if m != nil {
		m.deadLettered.WithLabelValues(group, topic).Inc()
	}
}

func (m *Metrics) published(topic string, start time.Time, err error, refused bool) {
	if m == nil {
		return
	}
	result := "ok"
	switch {
	case err != nil:
		result = "error"
	case refused:
		result = "refused"
	}
	m.publish.WithLabelValues(topic, result).Observe(time.Since(start).Seconds())
}
