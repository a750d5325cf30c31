package secretbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// A value sealed by the secretbox before key ids (nonce ‖ ciphertext, no
// additional data), under legacyKey, opening to legacyPlain: produced by
// that version's Seal.
const (
	legacyKey    = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	legacySealed = "j44CEbV/ANqTuzRE5C+yklR6KUNPZk0jleKdGVR9eEa3iRWo4JUlR2SixGztnykB6BmylFHxCVqc"
	legacyPlain  = "guru-account-token-0123456789"
)

func mustBox(t *testing.T, current string, previous ...string) *Box {
	t.Helper()
	b, err := FromBase64(current, previous...)
	if err != nil {
		t.Fatalf("FromBase64: %v", err)
	}
	return b
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var placeA = AAD("integration_settings", "account_token_enc", "merchant-a", "guru")

func TestSealOpen(t *testing.T) {
	t.Parallel()
	box := mustBox(t, NewKey())
	sealed := box.Seal(legacyPlain, placeA)
	if bytes.Contains(sealed, []byte("guru-account-token")) {
		t.Fatal("sealed bytes contain the plaintext")
	}
	if got, err := box.Open(sealed, placeA); err != nil || got != legacyPlain {
		t.Fatalf("Open = %q, %v; want the plaintext", got, err)
	}
	if again := box.Seal(legacyPlain, placeA); bytes.Equal(again, sealed) {
		t.Error("two seals of one plaintext are equal: the nonce is not fresh")
	}
	if box.Seal("", placeA) != nil {
		t.Error(`Seal("") should be nil`)
	}
	if got, err := box.Open(nil, placeA); got != "" || err != nil {
		t.Errorf("Open(nil) = %q, %v; want \"\", nil", got, err)
	}
	if got := Mask("whsec_abcdefgh"); got != "****efgh" {
		t.Errorf("Mask = %q", got)
	}
}

// TestFormat pins the layout: version 2, the key's id, a nonce, then the
// ciphertext and its tag.
func TestFormat(t *testing.T) {
	t.Parallel()
	box := mustBox(t, legacyKey)
	sealed := box.Seal("x", placeA)
	if len(sealed) != 1+8+12+1+16 || sealed[0] != 0x02 {
		t.Fatalf("sealed = %x (%d bytes), want 0x02, an 8-byte id, a 12-byte nonce, 1 byte and a 16-byte tag", sealed, len(sealed))
	}
	other := box.Seal("y", AAD("webhook_endpoints", "secret_sealed"))
	if !bytes.Equal(sealed[1:9], other[1:9]) {
		t.Errorf("key ids of one key differ: %x, %x", sealed[1:9], other[1:9])
	}
	sum := sha256.Sum256(mustDecode(t, legacyKey))
	if bytes.Equal(sealed[1:9], sum[:8]) || bytes.Contains(sealed, mustDecode(t, legacyKey)[:8]) {
		t.Error("the key id is a prefix of the key or of its SHA-256")
	}
	if id2 := mustBox(t, NewKey()).Seal("x", placeA)[1:9]; bytes.Equal(id2, sealed[1:9]) {
		t.Errorf("two keys share the id %x", id2)
	}
}

func TestAADBindsTheValue(t *testing.T) {
	t.Parallel()
	box := mustBox(t, NewKey())
	sealed := box.Seal("whsec_x", placeA)
	for name, aad := range map[string][]byte{
		"another merchant": AAD("integration_settings", "account_token_enc", "merchant-b", "guru"),
		"another column":   AAD("integration_settings", "webhook_secret_enc", "merchant-a", "guru"),
		"another row":      AAD("integration_settings", "account_token_enc", "merchant-a", "yampi"),
		"another table":    AAD("webhook_endpoints", "account_token_enc", "merchant-a", "guru"),
		"none":             nil,
	} {
		if got, err := box.Open(sealed, aad); !errors.Is(err, ErrWrongPlace) {
			t.Errorf("%s: Open = %q, %v; want ErrWrongPlace", name, got, err)
		}
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	if _, err := box.Open(altered, placeA); !errors.Is(err, ErrWrongPlace) {
		t.Errorf("altered: %v, want ErrWrongPlace", err)
	}
	// Length prefixes: moving a byte from one part to the next is another
	// place.
	if bytes.Equal(AAD("ab", "c"), AAD("a", "bc")) || bytes.Equal(AAD("a", ""), AAD("a")) {
		t.Error("AAD of different parts is equal")
	}
}

func TestLegacyFormatOpens(t *testing.T) {
	t.Parallel()
	sealed := mustDecode(t, legacySealed)
	for name, box := range map[string]*Box{
		"as SECRETS_KEY":          mustBox(t, legacyKey),
		"as SECRETS_KEY_PREVIOUS": mustBox(t, NewKey(), legacyKey),
	} {
		// Whatever the place: the old format bound nothing.
		for _, aad := range [][]byte{nil, placeA} {
			if got, err := box.Open(sealed, aad); err != nil || got != legacyPlain {
				t.Errorf("%s: Open = %q, %v; want %q", name, got, err, legacyPlain)
			}
		}
		if box.Current(sealed) {
			t.Errorf("%s: a value of the old format is Current; a rotation would skip it", name)
		}
	}
	if _, err := mustBox(t, NewKey()).Open(sealed, nil); !errors.Is(err, ErrWrongKey) {
		t.Errorf("old format under another key: %v, want ErrWrongKey", err)
	}
}

func TestPreviousKeyOpens(t *testing.T) {
	t.Parallel()
	a, b := NewKey(), NewKey()
	old := mustBox(t, a).Seal("tok", placeA)
	rotating := mustBox(t, b, a)
	if got, err := rotating.Open(old, placeA); err != nil || got != "tok" {
		t.Fatalf("previous key: Open = %q, %v", got, err)
	}
	if _, err := rotating.Open(old, AAD("elsewhere")); !errors.Is(err, ErrWrongPlace) {
		t.Errorf("previous key, another place: %v, want ErrWrongPlace", err)
	}
	if rotating.Current(old) {
		t.Error("a value under the previous key is Current")
	}
	resealed := rotating.Seal("tok", placeA)
	if !rotating.Current(resealed) || !rotating.Current(nil) {
		t.Error("a value sealed now (or nil) is not Current")
	}
	if got, err := mustBox(t, b).Open(resealed, placeA); err != nil || got != "tok" {
		t.Errorf("new key alone: Open = %q, %v", got, err)
	}
	if _, err := mustBox(t, b).Open(old, placeA); !errors.Is(err, ErrWrongKey) {
		t.Errorf("old value without SECRETS_KEY_PREVIOUS: %v, want ErrWrongKey", err)
	}
	if _, err := mustBox(t, a).Open(resealed, placeA); !errors.Is(err, ErrWrongKey) {
		t.Errorf("new value with the old key: %v, want ErrWrongKey", err)
	}
}

// TestErrorsNameNoSecret: the errors say which setting cannot open the
// value, never the key or the value.
func TestErrorsNameNoSecret(t *testing.T) {
	t.Parallel()
	key := NewKey()
	sealed := mustBox(t, NewKey()).Seal("the-plaintext", placeA)
	_, err := mustBox(t, key).Open(sealed, placeA)
	if !errors.Is(err, ErrWrongKey) || !strings.Contains(err.Error(), "SECRETS_KEY cannot open this value") {
		t.Fatalf("wrong key: %v", err)
	}
	for _, secret := range []string{key, "the-plaintext", base64.StdEncoding.EncodeToString(sealed)} {
		if strings.Contains(err.Error(), secret) || strings.Contains(ErrWrongPlace.Error(), secret) {
			t.Errorf("an error names %q", secret)
		}
	}
	if _, err := mustBox(t, key).Open([]byte("short"), nil); err == nil || errors.Is(err, ErrWrongKey) {
		t.Errorf("a truncated value: %v, want its own error", err)
	}
}

func TestFromBase64Errors(t *testing.T) {
	t.Parallel()
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, c := range []struct {
		current, previous, want string
	}{
		{"not base64!", "", "SECRETS_KEY is not base64"},
		{short, "", "SECRETS_KEY must be 32 bytes"},
		{NewKey(), "not base64!", "SECRETS_KEY_PREVIOUS is not base64"},
		{NewKey(), short, "SECRETS_KEY_PREVIOUS must be 32 bytes"},
	} {
		_, err := FromBase64(c.current, c.previous)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("FromBase64(%q, %q) = %v, want %q…", c.current, c.previous, err, c.want)
		}
	}
	if _, err := FromBase64(NewKey(), ""); err != nil {
		t.Errorf("an empty SECRETS_KEY_PREVIOUS: %v, want none", err)
	}
}

func TestDeriveKey(t *testing.T) {
	t.Parallel()
	a := mustBox(t, legacyKey)
	k1, k2 := a.DeriveKey("purpose one"), a.DeriveKey("purpose two")
	if len(k1) != 32 || bytes.Equal(k1, k2) || bytes.Equal(k1, mustDecode(t, legacyKey)) {
		t.Fatalf("DeriveKey = %x, %x: want 32 bytes, one per purpose, not the key", k1, k2)
	}
	if !bytes.Equal(k1, mustBox(t, legacyKey, NewKey()).DeriveKey("purpose one")) {
		t.Error("DeriveKey of one key and purpose differs between boxes")
	}
	if bytes.Equal(k1, mustBox(t, NewKey(), legacyKey).DeriveKey("purpose one")) {
		t.Error("DeriveKey derives from a previous key, not the current one")
	}
}
