package webhook_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/webhook"
)

// vector is one entry of testdata/signature_vectors.json, whose expected
// values were computed outside Go (python3 hmac, openssl).
type vector struct {
	Name              string   `json:"name"`
	Secrets           []string `json:"secrets"`
	MsgID             string   `json:"msg_id"`
	Timestamp         int64    `json:"timestamp"`
	Body              string   `json:"body"`
	XServiceSignature string   `json:"x_service_signature"`
	WebhookSignature  string   `json:"webhook_signature"`
}

func mustVectors(tb testing.TB) []vector {
	tb.Helper()
	raw, err := os.ReadFile("testdata/signature_vectors.json")
	if err != nil {
		tb.Fatal(err)
	}
	var file struct{ Vectors []vector }
	if err := json.Unmarshal(raw, &file); err != nil {
		tb.Fatal(err)
	}
	if len(file.Vectors) < 3 {
		tb.Fatalf("got %d vectors, want at least 3", len(file.Vectors))
	}
	return file.Vectors
}

func TestSignatureVectors(t *testing.T) {
	t.Parallel()
	for _, v := range mustVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			body := []byte(v.Body)
			if got := webhook.ServiceSignature(v.Secrets[0], body); got != v.XServiceSignature {
				t.Errorf("ServiceSignature = %s, want %s", got, v.XServiceSignature)
			}
			got, err := webhook.StandardSignature(v.Secrets, v.MsgID, v.Timestamp, body)
			if err != nil || got != v.WebhookSignature {
				t.Errorf("StandardSignature = %q, %v; want %q", got, err, v.WebhookSignature)
			}
			// A receiver holding any one of the secrets accepts the delivery.
			h := http.Header{}
			h.Set("webhook-id", v.MsgID)
			h.Set("webhook-timestamp", strconv.FormatInt(v.Timestamp, 10))
			h.Set("webhook-signature", v.WebhookSignature)
			for i, secret := range v.Secrets {
				if err := webhook.VerifyStandard(secret, h, body, time.Minute, time.Unix(v.Timestamp, 0)); err != nil {
					t.Errorf("VerifyStandard with secret %d: %v", i+1, err)
				}
			}
			if !webhook.VerifyServiceSignature(v.Secrets[0], body, v.XServiceSignature) {
				t.Error("VerifyServiceSignature refused the vector")
			}
		})
	}
}

// TestDocsQuoteTheVectors keeps docs/webhooks.md, the README and the code
// from drifting: every input and expected value of the vectors is in the
// page verbatim, and in the README's table (bodies aside).
func TestDocsQuoteTheVectors(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range mustVectors(t) {
		want := append([]string{v.MsgID, strconv.FormatInt(v.Timestamp, 10), v.Body, v.XServiceSignature, v.WebhookSignature}, v.Secrets...)
		for _, s := range want {
			if !strings.Contains(string(doc), s) {
				t.Errorf("docs/webhooks.md lacks %q of vector %s", s, v.Name)
			}
		}
		// The README's table quotes everything but the long bodies.
		for _, s := range append([]string{v.MsgID, strconv.FormatInt(v.Timestamp, 10), v.XServiceSignature, v.WebhookSignature}, v.Secrets...) {
			if !strings.Contains(string(readme), s) {
				t.Errorf("README.md lacks %q of vector %s", s, v.Name)
			}
		}
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	rest, ok := strings.CutPrefix(a, "whsec_")
	if !ok {
		t.Fatalf("secret %q lacks whsec_", a)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) != 32 {
		t.Fatalf("secret decodes to %d bytes, %v; want 32", len(key), err)
	}
	// A new secret signs both schemes.
	if _, err := webhook.StandardSignature([]string{a}, "evt_1", 1, nil); err != nil {
		t.Fatal(err)
	}
}

func TestSignHeaders(t *testing.T) {
	t.Parallel()
	secrets := []string{webhook.NewSecret(), webhook.NewSecret()}
	body := []byte(`{"id":"evt_0123456789abcdef0123456789abcdef"}`)
	ts := time.Unix(1767323046, 0)
	h := http.Header{}
	err := webhook.SignHeaders(h, secrets, "evt_0123456789abcdef0123456789abcdef", "member.created", "whl_00000000000000000000000000000001", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	std, _ := webhook.StandardSignature(secrets, "evt_0123456789abcdef0123456789abcdef", ts.Unix(), body)
	want := map[string]string{
		"X-Service-Signature": webhook.ServiceSignature(secrets[0], body),
		"webhook-id":          "evt_0123456789abcdef0123456789abcdef",
		"webhook-timestamp":   "1767323046",
		"webhook-signature":   std,
		"X-Service-Event":     "member.created",
		"X-Service-Delivery":  "whl_00000000000000000000000000000001",
		"Content-Type":        "application/json",
		"User-Agent":          "Convida-Webhooks/1.0",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if n := len(strings.Fields(h.Get("webhook-signature"))); n != 2 {
		t.Errorf("webhook-signature has %d entries, want 2", n)
	}
}

func TestSignHeadersRefusesBadSecrets(t *testing.T) {
	t.Parallel()
	for name, secrets := range map[string][]string{
		"none":       nil,
		"no prefix":  {"c2VjcmV0LXdpdGhvdXQtcHJlZml4"},
		"not base64": {"whsec_n0t-base64!!"},
		"bad second": {webhook.NewSecret(), "whsec_n0t-base64!!"},
	} {
		h := http.Header{}
		err := webhook.SignHeaders(h, secrets, "evt_1", "member.created", "whl_1", time.Now(), []byte("{}"))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), "n0t-base64") || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("%s: error %q quotes the secret", name, err)
		}
		if len(h) != 0 {
			t.Errorf("%s: headers set despite the error: %v", name, h)
		}
	}
}

func TestVerifyStandardRefuses(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	body := []byte(`{"a":1}`)
	ts := time.Unix(1767323046, 0)
	signed := func() http.Header {
		h := http.Header{}
		if err := webhook.SignHeaders(h, []string{secret}, "evt_1", "member.created", "whl_1", ts, body); err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		name   string
		edit   func(http.Header)
		secret string
		body   []byte
		now    time.Time
		want   error
	}{
		{"missing id", func(h http.Header) { h.Del("webhook-id") }, secret, body, ts, webhook.ErrMissingHeaders},
		{"too old", func(http.Header) {}, secret, body, ts.Add(6 * time.Minute), webhook.ErrTimestamp},
		{"from the future", func(http.Header) {}, secret, body, ts.Add(-6 * time.Minute), webhook.ErrTimestamp},
		{"bad timestamp", func(h http.Header) { h.Set("webhook-timestamp", "soon") }, secret, body, ts, webhook.ErrTimestamp},
		{"replayed with a new timestamp", func(h http.Header) { h.Set("webhook-timestamp", "1767323047") }, secret, body, ts, webhook.ErrSignature},
		{"other id", func(h http.Header) { h.Set("webhook-id", "evt_2") }, secret, body, ts, webhook.ErrSignature},
		{"altered body", func(http.Header) {}, secret, []byte(`{"a":2}`), ts, webhook.ErrSignature},
		{"other secret", func(http.Header) {}, webhook.NewSecret(), body, ts, webhook.ErrSignature},
		{"unknown version only", func(h http.Header) {
			h.Set("webhook-signature", strings.Replace(h.Get("webhook-signature"), "v1,", "v1a,", 1))
		}, secret, body, ts, webhook.ErrSignature},
	}
	for _, tt := range tests {
		h := signed()
		tt.edit(h)
		if err := webhook.VerifyStandard(tt.secret, h, tt.body, 5*time.Minute, tt.now); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
	// Within the tolerance, either way, it passes.
	if err := webhook.VerifyStandard(secret, signed(), body, 5*time.Minute, ts.Add(-4*time.Minute)); err != nil {
		t.Errorf("4 min early: %v", err)
	}
}

func TestVerifyServiceSignature(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	body := []byte(`{"a":1}`)
	good := webhook.ServiceSignature(secret, body)
	for _, tt := range []struct {
		name, secret, header string
		body                 []byte
		want                 bool
	}{
		{"good", secret, good, body, true},
		{"uppercase hex", secret, "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), body, false},
		{"no prefix", secret, strings.TrimPrefix(good, "sha256="), body, false},
		{"altered body", secret, good, []byte(`{"a":2}`), false},
		{"other secret", webhook.NewSecret(), good, body, false},
		{"empty", secret, "", body, false},
	} {
		if got := webhook.VerifyServiceSignature(tt.secret, tt.body, tt.header); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
