package ingest

import (
	"bytes"
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/provider"
)

func TestCutUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short enough", "abc", 4, "abc"},
		{"ASCII", "abcdef", 4, "abcd"},
		{"before a two-byte rune", "abcé", 4, "abc"},
		{"after a two-byte rune", "abéd", 4, "abé"},
		{"inside a four-byte rune", "a😀b", 3, "a"},
		{"not UTF-8 is cut where asked", "a\x80\x80\x80\x80b", 4, "a\x80\x80\x80"},
	}
	for _, tt := range tests {
		if got := string(cutUTF8([]byte(tt.in), tt.n)); got != tt.want {
			t.Errorf("%s: cutUTF8(%q, %d) = %q, want %q", tt.name, tt.in, tt.n, got, tt.want)
		}
	}
}

// A refused delivery's record keeps the digest and length of the body
// received and at most MaxRefusedBody of its redacted form, whole runes.
func TestKeepRefused(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"api_token":"` + strings.Repeat("t", 40) + `","pad":"` + strings.Repeat("ã", 900_000) + `"}`)
	kept := redact(provider.Guru, raw, "", false)
	d := &inbound.Delivery{Headers: map[string]string{}}
	keepRefused(d, raw, kept)
	sum := sha256.Sum256(raw)
	if d.BodyLength != len(raw) || !bytes.Equal(d.BodySHA256, sum[:]) {
		t.Errorf("length %d digest %x, want %d %x", d.BodyLength, d.BodySHA256, len(raw), sum)
	}
	if len(d.Body) > MaxRefusedBody || len(d.Body) < MaxRefusedBody-utf8.UTFMax || !utf8.Valid(d.Body) {
		t.Errorf("kept %d bytes (valid UTF-8 %v), want whole runes up to %d", len(d.Body), utf8.Valid(d.Body), MaxRefusedBody)
	}
	if bytes.Contains(d.Body, []byte(strings.Repeat("t", 40))) || !bytes.HasPrefix(d.Body, []byte(`{"api_token":"[REDACTED]"`)) {
		t.Errorf("kept body starts %q, want the token redacted", d.Body[:40])
	}
	if d.Headers[HeaderBodyTruncated] != strconv.Itoa(len(raw)) {
		t.Errorf("%s = %q, want %d", HeaderBodyTruncated, d.Headers[HeaderBodyTruncated], len(raw))
	}
	small := &inbound.Delivery{Headers: map[string]string{}}
	keepRefused(small, []byte(`{}`), []byte(`{}`))
	if string(small.Body) != `{}` || small.BodyLength != 2 || small.Headers[HeaderBodyTruncated] != "" {
		t.Errorf("a small body: %+v", small)
	}
}
