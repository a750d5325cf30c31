// Package embeddedbroker runs an in-process Kafka-protocol broker (kfake) on a
// real TCP listener. Tests and cmd/standalone use it in place of a Kafka
// cluster; the rest of the code talks to it over TCP exactly as it would to a
// real cluster, so nothing outside this package knows the difference.
//
// It is one broker (replication factor 1) that does not create topics on
// demand: topics are created by kafkabus.EnsureTopics, as in production.
package embeddedbroker

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
)

// DefaultPartitions is the partition count of a topic created without one.
const DefaultPartitions = 16

// minSessionTimeout is the smallest consumer-group session timeout the broker
// accepts. Kafka's floor is 6 s; a lower one lets tests notice a vanished
// member quickly. Production clients ask for far more.
const minSessionTimeout = 500 * time.Millisecond

// Config configures Start. The zero value is an in-memory broker on a free
// port with 16 partitions per topic and no logging.
type Config struct {
	// DataDir, when set, makes the broker persistent: topics, messages and
	// committed group offsets are kept in this directory and reloaded by the
	// next Start on the same directory. Writes are not fsynced per message,
	// so a process crash loses nothing but a machine crash may lose the last
	// writes. Empty means in memory only.
	DataDir string
	// Port is the TCP port to listen on, on 127.0.0.1; 0 picks a free one.
	Port int
	// Partitions is the partition count given to a topic created without an
	// explicit count (kafkabus.TopicSpec.Partitions 0); 0 means 16.
	Partitions int
	// Logger receives the broker's warnings and errors; nil discards them.
	Logger *zap.Logger
}

// Broker is an in-process Kafka-protocol broker listening on TCP.
// Its methods are safe for concurrent use.
type Broker struct {
	cluster *kfake.Cluster
	addrs   []string
}

// Start starts a broker and returns once it accepts connections. It fails
// when the port is taken or the DataDir cannot be read or created.
func Start(cfg Config) (*Broker, error) {
	if cfg.Port < 0 || cfg.Partitions < 0 {
		return nil, errors.New("embeddedbroker: negative Port or Partitions")
	}
	parts := cfg.Partitions
	if parts == 0 {
		parts = DefaultPartitions
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(parts),
		kfake.GroupMinSessionTimeout(minSessionTimeout),
		kfake.ClusterID("convida-embedded"),
	}
	if cfg.Port != 0 {
		opts = append(opts, kfake.Ports(cfg.Port))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	if cfg.Logger != nil {
		opts = append(opts, kfake.WithLogger(zapLogger{cfg.Logger.Named("kfake")}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("embeddedbroker: start: %w", err)
	}
	return &Broker{cluster: c, addrs: c.ListenAddrs()}, nil
}

// Addrs returns the broker's bootstrap addresses, "127.0.0.1:port".
// The slice is a copy.
func (b *Broker) Addrs() []string {
	return append([]string(nil), b.addrs...)
}

// Close stops the broker, dropping its connections, and, when it has a
// DataDir, saves its state there first. Calling Close again does nothing.
func (b *Broker) Close() {
	b.cluster.Close()
}

// zapLogger adapts zap to kfake's logger. kfake logs every request at info,
// so info and debug both become zap debug.
type zapLogger struct{ l *zap.Logger }

func (z zapLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	var lvl = zap.DebugLevel
	switch level {
	case kfake.LogLevelError:
		lvl = zap.ErrorLevel
	case kfake.LogLevelWarn:
		lvl = zap.WarnLevel
	}
	if ce := z.l.Check(lvl, ""); ce != nil {
		ce.Message = fmt.Sprintf(format, args...)
		ce.Write()
	}
}
