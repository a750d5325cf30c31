package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/provider"
)

// publishRecord publishes the record of a delivery without a command.
// While the background queue finds the broker down it fails at once
// rather than wait for it.
func (s *Service) publishRecord(ctx context.Context, d inbound.Delivery) error {
	if s.pending.brokerDown() {
		return errBrokerBehind
	}
	ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
	defer cancel()
	return s.intake.Publisher.PublishDelivery(ctx, d, nil)
}

// keepRecord publishes the record of a refused delivery, or queues it for
// the background when the broker does not take it: the answer does not
// depend on the record. A 503's record is queued at once: most 503s mean
// the broker just failed, and the queue tries again without delaying the
// answer. It uses a context of its own, since the record must be kept even
// when the client hung up.
func (s *Service) keepRecord(d inbound.Delivery) {
	if d.HTTPStatus != http.StatusServiceUnavailable {
		ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
		err := s.publishRecord(ctx, d)
		cancel()
		if err == nil {
			return
		}
	}
	s.pending.add(d)
}

// keptHeaders are the headers a record keeps: the content type, the
// client and proxies, and the signature of a platform that signs in a
// header (a signature proves, but cannot give away, the secret); never a
// header that carries the secret itself (Hotmart's hottok).
func keptHeaders(h http.Header, platform string) map[string]string {
	kept := map[string]string{}
	names := []string{"Content-Type", "User-Agent", "X-Forwarded-For"}
	if d, _ := provider.Lookup(platform); d.Webhook.Place == provider.InHeader && d.Webhook.Signed {
		names = append(names, d.Webhook.Name)
	}
	for _, k := range names {
		if v := h.Get(k); v != "" {
			kept[k] = v
		}
	}
	return kept
}

// redact hides the merchant's webhook secret from a body before it is
// stored, for a platform whose secret travels itself rather than keying a
// signature (provider.WebhookAuth.Signed): Guru's account token travels
// in the body, and a delivery that authenticated carries the merchant's
// own; the others are parsed to find the token of the body's field
// (another account's, perhaps) and lose the merchant's too, should it be
// in a body that did not parse. Hotmart's hottok travels in a header,
// which is not kept; it is hidden from the body too, should a platform
// ever put it there (its older postbacks did).
func redact(platform string, body []byte, secret string, authenticated bool) []byte {
	d, _ := provider.Lookup(platform)
	if d.Webhook.Signed {
		return body
	}
	tokens := []string{secret}
	if d.Webhook.Place == provider.InBody && !authenticated {
		var probe map[string]json.RawMessage
		var token string
		if json.Unmarshal(body, &probe) == nil && json.Unmarshal(probe[d.Webhook.Name], &token) == nil {
			tokens = append(tokens, token)
		}
	}
	for _, token := range tokens {
		if len(token) >= 4 {
			body = bytes.ReplaceAll(body, []byte(token), []byte("[REDACTED]"))
		}
	}
	return body
}

// MaxRecordedBody is the most of a body a delivery record keeps. The record
// travels as one message, base64 inside JSON, and the broker refuses
// messages over 1 MB; the platforms' bodies are a few KiB.
const MaxRecordedBody = 512 << 10

// HeaderBodyTruncated, among a record's kept headers, gives the length of
// a body cut to MaxRecordedBody.
const HeaderBodyTruncated = "X-Convida-Body-Truncated"

// MaxRefusedBody is the most of its body the record of a delivery refused
// before it authenticated keeps. Anyone may post to a merchant's webhook
// URL, so such a record must cost little; the digest and length of the
// whole body identify it (a flood of one forged body shows as one digest).
const MaxRefusedBody = 4 << 10

// keepRefused sets the record of a delivery refused before it
// authenticated: the SHA-256 and length of raw, the body received, and at
// most MaxRefusedBody of kept, its redacted form, cut at a UTF-8
// boundary; a cut is noted in the headers, with the length received.
func keepRefused(d *inbound.Delivery, raw, kept []byte) {
	sum := sha256.Sum256(raw)
	d.BodyLength, d.BodySHA256 = len(raw), sum[:]
	d.Body = cutUTF8(kept, MaxRefusedBody)
	if len(d.Body) < len(kept) {
		d.Headers[HeaderBodyTruncated] = strconv.Itoa(len(raw))
	}
}

// cutUTF8 returns at most the first n bytes of b, without splitting a
// UTF-8 sequence at the cut.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := n
	for i > 0 && i > n-(utf8.UTFMax-1) && !utf8.RuneStart(b[i]) {
		i--
	}
	if !utf8.RuneStart(b[i]) {
		i = n // not UTF-8 here: cut where asked
	}
	return b[:i]
}

// keptBody returns the part of body a record keeps, noting a cut in
// headers.
func keptBody(body []byte, headers map[string]string) []byte {
	if len(body) <= MaxRecordedBody {
		return body
	}
	headers[HeaderBodyTruncated] = strconv.Itoa(len(body))
	return body[:MaxRecordedBody]
}
