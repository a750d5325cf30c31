package redisx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convida/convida/pkg/apperr"
)

// Idempotency keeps idempotency records in Redis; it implements
// httpapi.Idempotency and privacy.Answers. A record is one hash,
// "idem:{scope}:{key}", holding the request's fingerprint and either the
// token of the request holding the claim (while it runs) or the stored
// answer (once it completed). Every transition is one Lua script, so two
// requests racing for a key cannot both claim it. The completed records of
// a scope are listed in a sorted set, "idem-index:{scope}", scored by when
// they expire, so that ForgetAnswers reads a merchant's records without
// scanning the keyspace.
// While the Breaker is open every method returns ErrUnavailable at once.
type Idempotency struct {
	rdb redis.UniversalClient
	brk *Breaker
}

// NewIdempotency returns an Idempotency on rdb that skips Redis while brk
// is open.
func NewIdempotency(rdb redis.UniversalClient, brk *Breaker) *Idempotency {
	return &Idempotency{rdb: rdb, brk: brk}
}

// beginScript claims an absent record or reports the present one:
// {"claimed"}, {"reused"}, {"in_flight"} or {"done", answer}.
var beginScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'fp', 'answer')
if not rec[1] then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'token', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'claimed'}
end
if rec[1] ~= ARGV[1] then return {'reused'} end
if not rec[2] then return {'in_flight'} end
return {'done', rec[2]}
`)

// completeScript stores the answer if the claim is still the caller's,
// lists the record in the scope's index (KEYS[2]) until it expires, and
// drops the index's expired entries. The index lives as long as its
// latest record. (The two keys share no hash tag: one Redis, not a
// cluster, as program.Open connects.)
var completeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'answer', ARGV[2])
redis.call('HDEL', KEYS[1], 'token')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1
`)

// releaseScript deletes the record if the claim is still the caller's.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`)

// Begin looks up key within scope (a merchant id) for a request whose
// fingerprint (method, path and body digest) is fingerprint.
//
//   - No record: it claims the key for lock and returns the claim, an opaque
//     handle for Complete or Release; the caller runs the request.
//   - A completed record with the same fingerprint: it returns the stored
//     answer (claim is empty).
//   - A record with the same fingerprint still in flight: an error coded
//     apperr.IdempotencyInUse.
//   - A record with another fingerprint, in flight or completed: an error
//     coded apperr.IdempotencyReused.
//
// Any other error means Redis did not answer; the claim may or may not
// have been made (it then expires after lock).
func (s *Idempotency) Begin(ctx context.Context, scope, key, fingerprint string, lock time.Duration) (claim string, answer []byte, err error) {
	rkey := recordKey(scope, key)
	token, err := newToken()
	if err != nil {
		return "", nil, err
	}
	var v []string
	err = s.brk.Do(ctx, func(ctx context.Context) (err error) {
		v, err = beginScript.Run(ctx, s.rdb, []string{rkey}, fingerprint, token, lock.Milliseconds()).StringSlice()
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("redisx: idempotency begin: %w", err)
	}
	switch {
	case len(v) == 1 && v[0] == "claimed":
		return token + ":" + rkey, nil, nil
	case len(v) == 1 && v[0] == "reused":
		return "", nil, apperr.Errorf(apperr.IdempotencyReused,
			"Idempotency-Key was already used with another request (method, path or body)")
	case len(v) == 1 && v[0] == "in_flight":
		return "", nil, apperr.Errorf(apperr.IdempotencyInUse,
			"a request with this Idempotency-Key is still in progress; retry later")
	case len(v) == 2 && v[0] == "done":
		return "", []byte(v[1]), nil
	}
	return "", nil, fmt.Errorf("redisx: idempotency begin: unexpected reply %q", v)
}

// Complete stores answer under the claim for ttl and ends the claim: later
// requests with the same fingerprint get the answer back from Begin. A claim
// no longer held (its lock expired, and another request may have claimed
// the key since) is left alone and the answer is not kept.
func (s *Idempotency) Complete(ctx context.Context, claim string, answer []byte, ttl time.Duration) error {
	token, rkey, err := splitClaim(claim)
	if err != nil {
		return err
	}
	if err := s.brk.Do(ctx, func(ctx context.Context) error {
		return completeScript.Run(ctx, s.rdb, []string{rkey, indexKey(scopeOf(rkey))}, token, answer, ttl.Milliseconds()).Err()
	}); err != nil {
		return fmt.Errorf("redisx: idempotency complete: %w", err)
	}
	return nil
}

// Release forgets the claim, so that a retry with the same key runs anew.
// Releasing a claim no longer held does nothing.
func (s *Idempotency) Release(ctx context.Context, claim string) error {
	token, rkey, err := splitClaim(claim)
	if err != nil {
		return err
	}
	if err := s.brk.Do(ctx, func(ctx context.Context) error {
		return releaseScript.Run(ctx, s.rdb, []string{rkey}, token).Err()
	}); err != nil {
		return fmt.Errorf("redisx: idempotency release: %w", err)
	}
	return nil
}

// recordKey is the Redis key of an idempotency record. The scope is a UUID,
// so the first colon after the prefix ends it and keys cannot collide
// across scopes whatever the idempotency key holds.
func recordKey(scope, key string) string { return "idem:" + scope + ":" + key }

// scopeOf is the scope of a record key.
func scopeOf(rkey string) string {
	scope, _, _ := strings.Cut(strings.TrimPrefix(rkey, "idem:"), ":")
	return scope
}

// indexKey is the Redis key of the sorted set that lists a scope's
// completed records.
func indexKey(scope string) string { return "idem-index:" + scope }

const tokenLen = 32 // hex characters

func newToken() (string, error) {
	b := make([]byte, tokenLen/2)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("redisx: idempotency token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func splitClaim(claim string) (token, rkey string, err error) {
	if len(claim) <= tokenLen+1 || claim[tokenLen] != ':' || !strings.HasPrefix(claim[tokenLen+1:], "idem:") {
		return "", "", errors.New("redisx: malformed idempotency claim")
	}
	return claim[:tokenLen], claim[tokenLen+1:], nil
}
