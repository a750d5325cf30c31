package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

// keptRecord is the idempotency record of the tenant's key as Redis holds
// it (every field of the hash), for a test to look into.
func (tn *tenant) keptRecord(tb testing.TB, key string) string {
	tb.Helper()
	rec, err := testenv.MustRedis(tb).HGetAll(context.Background(), "idem:"+tn.merchant.ID.String()+":"+key).Result()
	if err != nil || rec["answer"] == "" {
		tb.Fatalf("the record of %q: %v, %v; want a kept answer", key, rec, err)
	}
	raw, _ := json.Marshal(rec)
	return string(raw)
}

// wantMaskedReplay checks that replay is first replayed, its field at path
// (data.secret, data.token) masked and everything else the same.
func wantMaskedReplay(tb testing.TB, first, replay reply, field, masked string) {
	tb.Helper()
	var want, got map[string]any
	if err := unmarshalNumbers(first.raw, &want); err != nil {
		tb.Fatal(err)
	}
	if err := unmarshalNumbers(replay.raw, &got); err != nil {
		tb.Fatal(err)
	}
	want["data"].(map[string]any)[field] = masked
	if replay.status != first.status || !jsonEqual(got, want) {
		tb.Errorf("replay = %s, want %s with %s %q", replay, first, field, masked)
	}
	if replay.header.Get("Idempotent-Replayed") != "true" || replay.header.Get("Content-Type") != first.header.Get("Content-Type") {
		tb.Errorf("replay headers %v", replay.header)
	}
}

// TestReplaysShowNoSecret: an answer that showed a webhook's signing
// secret (creation, rotation) is kept in Redis and replayed with the
// secret masked as the later reads show it, whsec_**** and its last 4;
// the record in Redis never holds it. A replayed answer without a secret
// is replayed byte for byte.
func TestReplaysShowNoSecret(t *testing.T) {
	t.Parallel()
	env := mustHookEnv(t)
	tn := env.mustTenant(t)
	body := map[string]any{"url": "https://example.com/hook", "events": []string{"member.created"}}

	first := tn.send(t, http.MethodPost, "/v1/webhooks", "wh-secret", body)
	wantStatus(t, first, http.StatusCreated)
	secret, id := str(t, first, "data.secret"), str(t, first, "data.id")
	if !strings.HasPrefix(secret, "whsec_") || strings.Contains(secret, "*") {
		t.Fatalf("the creation shows %q, want the whole secret", secret)
	}
	masked := webhook.MaskSecret(secret)
	if rec := tn.keptRecord(t, "wh-secret"); strings.Contains(rec, secret) || !strings.Contains(rec, masked) {
		t.Errorf("the kept record holds the secret or not its mask: %s", rec)
	}
	replay := tn.send(t, http.MethodPost, "/v1/webhooks", "wh-secret", body)
	wantMaskedReplay(t, first, replay, "secret", masked)
	if got := str(t, tn.get(t, "/v1/webhooks/"+id), "data.secret"); got != masked {
		t.Errorf("GET shows %q, the replay %q: want the same mask", got, masked)
	}

	rotated := tn.send(t, http.MethodPost, "/v1/webhooks/"+id+"/rotate-secret", "wh-rotate", nil)
	wantStatus(t, rotated, http.StatusOK)
	secret = str(t, rotated, "data.secret")
	if rec := tn.keptRecord(t, "wh-rotate"); strings.Contains(rec, secret) {
		t.Errorf("the kept record of the rotation holds the secret: %s", rec)
	}
	wantMaskedReplay(t, rotated, tn.send(t, http.MethodPost, "/v1/webhooks/"+id+"/rotate-secret", "wh-rotate", nil),
		"secret", webhook.MaskSecret(secret))

	// No secret: the answer is kept as sent, readable, and replayed as is.
	patch := tn.send(t, http.MethodPatch, "/v1/webhooks/"+id, "wh-patch", map[string]any{"is_active": false})
	wantStatus(t, patch, http.StatusOK)
	if rec := tn.keptRecord(t, "wh-patch"); !strings.Contains(rec, "https://example.com/hook") {
		t.Errorf("an answer without a secret is not kept as text: %s", rec)
	}
	wantReplay(t, patch, tn.send(t, http.MethodPatch, "/v1/webhooks/"+id, "wh-patch", map[string]any{"is_active": false}))
	env.v.WantExercised(t, ex("createWebhook", 201), ex("rotateWebhookSecret", 200))
}

// TestReplayedRotationShowsNoToken: a replayed rotation of a creator token
// shows it masked, ****abcd; the record in Redis never holds it; GET shows
// it whole, as before.
func TestReplayedRotationShowsNoToken(t *testing.T) {
	t.Parallel()
	env := mustCreatorEnv(t, creatorEnvOptions{})
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	old := tn.mustCreator(t, ana, "Ana Fit")
	path := "/api/v1/members/" + ana.prefID + "/creator/rotate-token"

	first := tn.send(t, http.MethodPost, path, "rotate-1", nil)
	wantStatus(t, first, http.StatusOK)
	token := str(t, first, "data.token")
	if token == old || !reToken.MatchString(token) {
		t.Fatalf("rotated token %q (was %q)", token, old)
	}
	if rec := tn.keptRecord(t, "rotate-1"); strings.Contains(rec, token) {
		t.Errorf("the kept record holds the token: %s", rec)
	}
	replay := tn.send(t, http.MethodPost, path, "rotate-1", nil)
	wantMaskedReplay(t, first, replay, "token", secretbox.Mask(token))
	if cc := replay.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("replay: Cache-Control %q, want no-store", cc)
	}
	if !bytes.Contains(replay.raw, []byte(`"token":"****`+token[len(token)-4:]+`"`)) {
		t.Errorf("replay %s, want the token as ****%s", replay.raw, token[len(token)-4:])
	}
	wantFields(t, tn.get(t, "/api/v1/members/"+ana.prefID+"/creator"), map[string]any{"data.token": token})
}

// TestReplayOfAnAnswerKeptAsBase64: an answer kept before answers were
// kept as text (its body base64 in "body") is still replayed as it was.
func TestReplayOfAnAnswerKeptAsBase64(t *testing.T) {
	t.Parallel()
	rdb := testenv.MustRedis(t)
	env := mustProtectedEnv(t, protectedOpts{rdb: rdb})
	tn := env.mustTenant(t)
	body := `{"name":"Indique e ganhe","reward_type":"fixed","reward_value":1000}`
	digest := sha256.Sum256([]byte("POST /api/v1/campaigns\n" + body))
	store := redisx.NewIdempotency(rdb, nil)
	claim, _, err := store.Begin(context.Background(), tn.merchant.ID.String(), "old-1", hex.EncodeToString(digest[:]), time.Minute)
	if err != nil || claim == "" {
		t.Fatalf("Begin: %q, %v", claim, err)
	}
	kept := `{"data":{"id":"camp_kept"}}` + "\n"
	old := `{"status":201,"header":{"Content-Type":"application/json"},"body":"` + base64.StdEncoding.EncodeToString([]byte(kept)) + `"}`
	if err := store.Complete(context.Background(), claim, []byte(old), time.Minute); err != nil {
		t.Fatal(err)
	}
	r := tn.send(t, http.MethodPost, "/api/v1/campaigns", "old-1", body)
	if r.status != http.StatusCreated || string(r.raw) != kept || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the replay of an answer kept as base64 = %s, want 201 %s", r, kept)
	}
	if n := tn.count(t, "campaigns"); n != 0 {
		t.Errorf("the replayed request ran: %d campaigns", n)
	}
}
