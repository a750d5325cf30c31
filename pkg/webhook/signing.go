package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of every attempt (docs/webhooks.md, "Headers").
const (
	HeaderServiceSignature = "X-Service-Signature"
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
	HeaderServiceEvent     = "X-Service-Event"
	HeaderServiceDelivery  = "X-Service-Delivery"
)

// UserAgent identifies the dispatcher to receivers.
const UserAgent = "Convida-Webhooks/1.0"

// DefaultTolerance is how far webhook-timestamp may be from the receiver's
// clock, as the Standard Webhooks libraries use.
const DefaultTolerance = 5 * time.Minute

// The errors of VerifyStandard; match them with errors.Is.
var (
	ErrMissingHeaders = errors.New("webhook-id, webhook-timestamp or webhook-signature missing")
	ErrTimestamp      = errors.New("webhook-timestamp invalid or outside the tolerance")
	ErrSignature      = errors.New("no webhook-signature entry matches")
)

// ServiceSignature returns the value of X-Service-Signature: "sha256=" and
// the lowercase hex HMAC-SHA256 of body, keyed with the whole secret string
// (prefix included) as bytes — the interface spec's scheme.
func ServiceSignature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// StandardSignature returns the value of webhook-signature (Standard
// Webhooks, https://www.standardwebhooks.com): for each secret, in order,
// "v1," and the base64 HMAC-SHA256 of msgID + "." + ts + "." + body keyed
// with the base64-decoded part of the secret after "whsec_"; entries are
// separated by one space. It fails when secrets is empty or a secret is
// malformed; the error never quotes a secret.
func StandardSignature(secrets []string, msgID string, ts int64, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("webhook: no signing secret")
	}
	prefix := msgID + "." + strconv.FormatInt(ts, 10) + "."
	var b strings.Builder
	for i, secret := range secrets {
		key, err := secretKey(secret)
		if err != nil {
			return "", fmt.Errorf("signing secret %d: %w", i+1, err)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(standardMAC(key, prefix, body)))
	}
	return b.String(), nil
}

func standardMAC(key []byte, prefix string, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(prefix))
	mac.Write(body)
	return mac.Sum(nil)
}

// SignHeaders sets the headers of one attempt on h: both signatures
// (X-Service-Signature with secrets[0] only, webhook-signature with every
// secret, so that a receiver still holding the previous secret keeps
// verifying during a rotation), webhook-id (eventID, "evt_…", the same on
// every attempt so that receivers can deduplicate), webhook-timestamp (ts in
// unix seconds: the time of this attempt), X-Service-Event (eventType),
// X-Service-Delivery (logID, "whl_…"), Content-Type and User-Agent. On error
// (no secret, a malformed secret) h is left unchanged.
func SignHeaders(h http.Header, secrets []string, eventID, eventType, logID string, ts time.Time, body []byte) error {
	unix := ts.Unix()
	standard, err := StandardSignature(secrets, eventID, unix, body)
	if err != nil {
		return err
	}
	h.Set(HeaderServiceSignature, ServiceSignature(secrets[0], body))
	h.Set(HeaderWebhookID, eventID)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(unix, 10))
	h.Set(HeaderWebhookSignature, standard)
	h.Set(HeaderServiceEvent, eventType)
	h.Set(HeaderServiceDelivery, logID)
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	return nil
}

// VerifyServiceSignature reports whether header is the X-Service-Signature
// of body under secret. The comparison takes constant time.
func VerifyServiceSignature(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(ServiceSignature(secret, body)), []byte(header))
}

// VerifyStandard checks the Standard Webhooks headers of a delivery as a
// receiver does: the three headers are present, webhook-timestamp is within
// tolerance of now (either way; DefaultTolerance when tolerance ≤ 0, which
// bounds replays), and one "v1," entry of webhook-signature is the signature
// under secret (constant-time comparison). It returns nil on success, or an
// error matching ErrMissingHeaders, ErrTimestamp or ErrSignature, or one for
// a malformed secret.
func VerifyStandard(secret string, h http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	id, tsText, sigs := h.Get(HeaderWebhookID), h.Get(HeaderWebhookTimestamp), h.Get(HeaderWebhookSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not unix seconds", ErrTimestamp, tsText)
	}
	if skew := now.Sub(time.Unix(ts, 0)).Abs(); skew > tolerance {
		return fmt.Errorf("%w: %s away from now", ErrTimestamp, skew)
	}
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	want := standardMAC(key, id+"."+tsText+".", body)
	for entry := range strings.FieldsSeq(sigs) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue // other schemes (v1a, …) are not ours to judge
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}
