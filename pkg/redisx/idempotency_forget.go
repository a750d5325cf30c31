package redisx

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// forgetPage is how many records ForgetAnswers reads per round trip.
const forgetPage = 256

// ForgetAnswers deletes the completed records of scope (a merchant id)
// whose answer names one of needles (lower-case; the answer's letter case
// is ignored) and returns how many it deleted: an erasure removes the kept
// answers that show the erased member (privacy.Answers), so a replay can
// no longer show her. A request with such a key runs anew afterwards.
//
// An answer is searched through the strings of its JSON and of the JSON
// documents those strings hold, as text or as base64 (httpapi keeps the
// body of an answer inside its record), so an escape in one layer hides
// nothing. The scope's records are read from its index, a page at a time;
// a record still in flight holds no answer yet and is not listed.
func (s *Idempotency) ForgetAnswers(ctx context.Context, scope string, needles []string) (int, error) {
	if len(needles) == 0 {
		return 0, nil
	}
	idx := indexKey(scope)
	forgotten := 0
	var cursor uint64
	for {
		var page []string
		var next uint64
		err := s.brk.Do(ctx, func(ctx context.Context) (err error) {
			page, next, err = s.rdb.ZScan(ctx, idx, cursor, "", forgetPage).Result()
			return err
		})
		if err != nil {
			return forgotten, fmt.Errorf("redisx: idempotency forget: %w", err)
		}
		n, err := s.forgetNaming(ctx, idx, page, needles)
		forgotten += n
		if err != nil {
			return forgotten, fmt.Errorf("redisx: idempotency forget: %w", err)
		}
		if next == 0 {
			return forgotten, nil
		}
		cursor = next
	}
}

// forgetNaming deletes, of a page of the index (member, score, member,
// score, …), the records whose answer names one of needles, and takes them
// out of the index.
func (s *Idempotency) forgetNaming(ctx context.Context, idx string, page []string, needles []string) (int, error) {
	var keys []string
	for i := 0; i < len(page); i += 2 {
		keys = append(keys, page[i])
	}
	if len(keys) == 0 {
		return 0, nil
	}
	answers := make([]*redis.StringCmd, len(keys))
	err := s.brk.Do(ctx, func(ctx context.Context) error {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				answers[i] = p.HGet(ctx, k, "answer")
			}
			return nil
		})
		if errors.Is(err, redis.Nil) { // an expired record: nothing to forget
			err = nil
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	var doomed []string
	for i, a := range answers {
		raw, err := a.Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return 0, err
		case names(raw, needles):
			doomed = append(doomed, keys[i])
		}
	}
	if len(doomed) == 0 {
		return 0, nil
	}
	var deleted *redis.IntCmd
	err = s.brk.Do(ctx, func(ctx context.Context) error {
		_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			deleted = p.Del(ctx, doomed...)
			p.ZRem(ctx, idx, toAny(doomed)...)
			return nil
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	return int(deleted.Val()), nil
}

// names reports whether the kept answer raw holds one of needles.
func names(raw []byte, needles []string) bool {
	for _, t := range texts(raw, 3, nil) {
		t = strings.ToLower(t)
		for _, n := range needles {
			if strings.Contains(t, n) {
				return true
			}
		}
	}
	return false
}

// texts appends to out the strings of the JSON document raw and, up to
// depth documents down, of the documents its strings hold (as JSON text
// or as base64 of it); raw that is not JSON is appended as text.
func texts(raw []byte, depth int, out []string) []string {
	var v any
	if depth == 0 || json.Unmarshal(raw, &v) != nil {
		return append(out, string(raw))
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if doc := document(v); doc != nil {
				out = texts(doc, depth-1, out)
			} else {
				out = append(out, v)
			}
		case map[string]any:
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

// document returns the JSON document (an object or an array) a string
// holds as text or as base64, nil when it holds none.
func document(s string) []byte {
	isDoc := func(b []byte) bool {
		b = bytes.TrimSpace(b)
		return len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b)
	}
	if isDoc([]byte(s)) {
		return []byte(s)
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && isDoc(b) {
		return b
	}
	return nil
}

func toAny(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
