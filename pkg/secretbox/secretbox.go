// Package secretbox encrypts the secrets the service must read back
// (provider tokens, webhook signing secrets, creator tokens) with
// AES-256-GCM under the SECRETS_KEY, so a database dump does not reveal
// them (decision 2).
//
// A sealed value is
//
//	0x02 ‖ key id (8 bytes) ‖ nonce (12 bytes) ‖ ciphertext and tag
//
// The key id names the key that sealed it, so a Box holding the current
// key and the previous ones (SECRETS_KEY, SECRETS_KEY_PREVIOUS) opens
// with the right one, and a rotation finds what is not yet under the
// current key. The caller's additional data (AAD) binds the value to its
// place — table, column, merchant, row — so a value copied elsewhere
// does not open. Values sealed before the key id existed (nonce ‖
// ciphertext, no additional data) still open, with any of the Box's keys;
// `api secrets rotate` re-seals them in this format.
package secretbox

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
)

// KeySize is the length of a key in bytes.
const KeySize = 32

const (
	version   = 0x02
	idSize    = 8
	headSize  = 1 + idSize
	nonceSize = 12
	tagSize   = 16
)

// ErrWrongKey is the error of a value that none of the Box's keys sealed.
var ErrWrongKey = errors.New("secretbox: SECRETS_KEY cannot open this value (nor SECRETS_KEY_PREVIOUS, when set): it was sealed under another key")

// ErrWrongPlace is the error of a value sealed under one of the Box's keys
// for another place (merchant, table, column or row), or altered.
var ErrWrongPlace = errors.New("secretbox: this value was sealed for another merchant, row or column, or was altered")

// errTooShort is the error of a value too short to be sealed by a Box.
var errTooShort = errors.New("secretbox: the sealed value is truncated")

// key is one AES-256-GCM key and its id.
type key struct {
	id   [idSize]byte
	raw  []byte
	aead cipher.AEAD
}

func newKey(raw []byte, name string) (*key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("%s must be %d bytes (base64 of 32 random bytes: openssl rand -base64 32), got %d", name, KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &key{raw: bytes.Clone(raw), aead: aead}
	// The id is derived, not the key's hash prefix, so that it says
	// nothing usable about the key.
	id, err := hkdf.Key(sha256.New, raw, nil, "convida secretbox key id v2", idSize)
	if err != nil {
		return nil, err
	}
	copy(k.id[:], id)
	return k, nil
}

// Box seals with its current key and opens with the current key or a
// previous one. It is safe for concurrent use.
type Box struct {
	current *key
	all     []*key // current first, then the previous ones
}

// New returns a Box sealing with current and opening also with previous
// (keys being rotated away from); each key is 32 bytes.
func New(current []byte, previous ...[]byte) (*Box, error) {
	cur, err := newKey(current, "SECRETS_KEY")
	if err != nil {
		return nil, err
	}
	b := &Box{current: cur, all: []*key{cur}}
	for _, raw := range previous {
		k, err := newKey(raw, "SECRETS_KEY_PREVIOUS")
		if err != nil {
			return nil, err
		}
		if k.id != cur.id {
			b.all = append(b.all, k)
		}
	}
	return b, nil
}

// FromBase64 returns a Box for base64 (standard, padded) encoded keys, the
// form SECRETS_KEY and SECRETS_KEY_PREVIOUS take: current seals, previous
// ones (an empty one is skipped) only open. Its errors name the variable,
// never the key.
func FromBase64(current string, previous ...string) (*Box, error) {
	cur, err := decodeKey(current, "SECRETS_KEY")
	if err != nil {
		return nil, err
	}
	var prev [][]byte
	for _, p := range previous {
		if p == "" {
			continue
		}
		raw, err := decodeKey(p, "SECRETS_KEY_PREVIOUS")
		if err != nil {
			return nil, err
		}
		prev = append(prev, raw)
	}
	return New(cur, prev...)
}

func decodeKey(s, name string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64 (openssl rand -base64 32 makes one): %w", name, err)
	}
	return raw, nil
}

// NewKey returns a fresh random key, base64 encoded.
func NewKey() string {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// AAD returns the additional data of parts (table, column, merchant, row…):
// each part length-prefixed, so no two lists of parts give the same bytes.
func AAD(parts ...string) []byte {
	var out []byte
	for _, p := range parts {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// Seal encrypts plaintext under the current key, bound to aad: Open must
// be given the same aad. The empty string seals to nil, so "not set"
// stays distinguishable.
func (b *Box) Seal(plaintext string, aad []byte) []byte {
	if plaintext == "" {
		return nil
	}
	out := make([]byte, headSize+nonceSize, headSize+nonceSize+len(plaintext)+tagSize)
	out[0] = version
	copy(out[1:], b.current.id[:])
	if _, err := rand.Read(out[headSize:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return b.current.aead.Seal(out, out[headSize:], []byte(plaintext), withHead(out[:headSize], aad))
}

// Open decrypts what Seal produced with the same aad, with whichever of the
// Box's keys sealed it; nil opens to "". A value of the format before key
// ids opens with any of the keys, whatever aad. The errors are ErrWrongKey
// and ErrWrongPlace; neither names the key or the value.
func (b *Box) Open(sealed, aad []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	if len(sealed) < nonceSize+tagSize {
		return "", errTooShort
	}
	err := ErrWrongKey
	if k := b.keyOf(sealed); k != nil && len(sealed) >= headSize+nonceSize+tagSize {
		nonce := sealed[headSize : headSize+nonceSize]
		plain, openErr := k.aead.Open(nil, nonce, sealed[headSize+nonceSize:], withHead(sealed[:headSize], aad))
		if openErr == nil {
			return string(plain), nil
		}
		err = ErrWrongPlace
	}
	// The format before key ids. A value of it whose random nonce happens
	// to start like a header of ours (odds of 2^-72) also lands here.
	for _, k := range b.all {
		if plain, legacyErr := k.aead.Open(nil, sealed[:nonceSize], sealed[nonceSize:], nil); legacyErr == nil {
			return string(plain), nil
		}
	}
	return "", err
}

// Current reports whether sealed needs nothing from a rotation: it is
// empty, or sealed in the current format under the current key.
func (b *Box) Current(sealed []byte) bool {
	return len(sealed) == 0 || b.keyOf(sealed) == b.current
}

// DeriveKey returns a 32-byte key for one purpose, named by info, derived
// from the current key with HKDF-SHA256: another purpose's key, or the
// sealing key, tells nothing of it. It changes when the current key does.
func (b *Box) DeriveKey(info string) []byte {
	k, err := hkdf.Key(sha256.New, b.current.raw, nil, info, KeySize)
	if err != nil {
		panic(err) // only for a length HKDF cannot give; 32 bytes it can
	}
	return k
}

// keyOf returns the key whose id the header of sealed names, or nil when
// sealed has no header of a known key.
func (b *Box) keyOf(sealed []byte) *key {
	if len(sealed) < headSize || sealed[0] != version {
		return nil
	}
	for _, k := range b.all {
		if bytes.Equal(sealed[1:headSize], k.id[:]) {
			return k
		}
	}
	return nil
}

// withHead is the additional data GCM authenticates: the header, then the
// caller's.
func withHead(head, aad []byte) []byte {
	return append(bytes.Clone(head), aad...)
}

// Mask shows a secret as "****" plus its last 4 characters; "" stays "".
func Mask(secret string) string {
	if secret == "" {
		return ""
	}
	if len(secret) <= 4 {
		return "****"
	}
	return "****" + secret[len(secret)-4:]
}
