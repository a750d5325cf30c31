package redisx_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/testenv"
)

// TestIdempotencyForgetAnswers: the completed answers of a scope that name
// a needle — in any letter case, inside a body kept as JSON text or as
// base64, over more than one page of the index — are deleted, and their
// keys run anew; the others, those of another scope and a claim still in
// flight are left.
func TestIdempotencyForgetAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testenv.MustRedis(t)
	s := redisx.NewIdempotency(rdb, nil)
	scope, other := uuid.NewString(), uuid.NewString()
	complete := func(scope, key, answer string) {
		t.Helper()
		claim, _, err := s.Begin(ctx, scope, key, "fp", time.Minute)
		if err != nil || claim == "" {
			t.Fatalf("Begin %s: %q, %v", key, claim, err)
		}
		if err := s.Complete(ctx, claim, []byte(answer), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	body := `{"data":{"id":"mem_1","email":"Helena.Prado@Example.com","name":"Helena \"Lena\" Prado"}}` + "\n"
	naming := map[string]string{
		"as-text":   fmt.Sprintf(`{"status":201,"text":%q}`, body),
		"as-base64": `{"status":201,"body":"` + base64.StdEncoding.EncodeToString([]byte(body)) + `"}`,
		"by-doc":    `{"status":200,"text":"{\"referee_external_id\":\"390.533.447-05\"}"}`,
	}
	for k, a := range naming {
		complete(scope, k, a)
	}
	for i := range 300 { // more than a page of the index
		complete(scope, fmt.Sprintf("other-%d", i), `{"status":201,"text":"{\"email\":\"bruno@example.com\"}"}`)
	}
	complete(other, "as-text", naming["as-text"])
	inFlight, _, err := s.Begin(ctx, scope, "in-flight", "fp", time.Minute)
	if err != nil || inFlight == "" {
		t.Fatal(err)
	}

	n, err := s.ForgetAnswers(ctx, scope, []string{"helena.prado@example.com", "390.533.447-05"})
	if err != nil || n != len(naming) {
		t.Fatalf("ForgetAnswers = %d, %v; want %d", n, err, len(naming))
	}
	for k := range naming {
		if claim, answer, err := s.Begin(ctx, scope, k, "fp", time.Minute); err != nil || claim == "" {
			t.Errorf("%s after ForgetAnswers: claim %q, answer %s, %v; want a new claim", k, claim, answer, err)
		}
	}
	if _, answer, err := s.Begin(ctx, scope, "other-7", "fp", time.Minute); err != nil || answer == nil {
		t.Errorf("an answer naming nobody forgotten: %s, %v", answer, err)
	}
	if _, answer, err := s.Begin(ctx, other, "as-text", "fp", time.Minute); err != nil || answer == nil {
		t.Errorf("another scope's answer forgotten: %s, %v", answer, err)
	}
	if err := s.Complete(ctx, inFlight, []byte("late"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, answer, _ := s.Begin(ctx, scope, "in-flight", "fp", time.Minute); string(answer) != "late" {
		t.Errorf("the claim in flight: %q, want its answer kept", answer)
	}
	// The index lists the scope's completed records until they expire.
	if n, err := rdb.ZCard(ctx, "idem-index:"+scope).Result(); err != nil || n != 301 {
		t.Errorf("the index holds %d records, %v; want the 300 left and the late one", n, err)
	}
	if ttl := rdb.PTTL(ctx, "idem-index:"+scope).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the index expires in %v, want within the records' minute", ttl)
	}
	if n, err := s.ForgetAnswers(ctx, scope, nil); n != 0 || err != nil {
		t.Errorf("ForgetAnswers without needles = %d, %v", n, err)
	}
}

func TestIdempotencyForgetAnswersRedisDown(t *testing.T) {
	t.Parallel()
	down := redisx.NewIdempotency(deadRedis(t), nil)
	if _, err := down.ForgetAnswers(context.Background(), uuid.NewString(), []string{"x"}); err == nil {
		t.Error("ForgetAnswers with Redis down: no error")
	}
}
