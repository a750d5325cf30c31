package testenv

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// RedisURL is the Redis the tests use (TEST_REDIS_URL overrides it). Tests
// share it: every key the service writes carries a merchant id, and each
// test creates its own merchants, so tests do not see each other's keys.
func RedisURL() string {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// MustRedis returns a client on the test Redis, closed at cleanup.
func MustRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(RedisURL())
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	c := redis.NewClient(opt)
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatalf("testenv: redis: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}
