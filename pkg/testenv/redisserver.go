package testenv

import (
	"context"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server child process on a free port,
// without persistence, for a test that stops and restarts Redis. The
// shared test Redis (RedisURL) is never touched.
type RedisServer struct {
	tb   testing.TB
	port string
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

const redisBinary = "/usr/bin/redis-server"

// StartRedisServer starts a RedisServer and waits until it answers; it is
// killed at cleanup.
func StartRedisServer(tb testing.TB) *RedisServer {
	tb.Helper()
	if _, err := os.Stat(redisBinary); err != nil {
		tb.Fatalf("testenv: this test needs %s (apt-get install redis-server): %v", redisBinary, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	rs := &RedisServer{tb: tb, port: port, dir: tb.TempDir()}
	rs.Start()
	tb.Cleanup(rs.Stop)
	return rs
}

// Addr is the server's host:port.
func (rs *RedisServer) Addr() string { return "127.0.0.1:" + rs.port }

// URL is the server's redis:// URL (database 0).
func (rs *RedisServer) URL() string { return "redis://" + rs.Addr() + "/0" }

// Start runs the server on its port (again, after Stop) and waits until it
// answers a PING.
func (rs *RedisServer) Start() {
	rs.tb.Helper()
	rs.mu.Lock()
	rs.cmd = exec.Command(redisBinary, "--port", rs.port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--daemonize", "no", "--dir", rs.dir)
	err := rs.cmd.Start()
	rs.mu.Unlock()
	if err != nil {
		rs.tb.Fatalf("testenv: start %s: %v", redisBinary, err)
	}
	c := redis.NewClient(&redis.Options{Addr: rs.Addr(), MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			rs.tb.Fatalf("testenv: redis-server on %s did not answer in 10 s", rs.Addr())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Stop kills the server (as a crash would) and waits for it to exit.
func (rs *RedisServer) Stop() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.cmd == nil {
		return
	}
	_ = rs.cmd.Process.Kill()
	_ = rs.cmd.Wait()
	rs.cmd = nil
}
