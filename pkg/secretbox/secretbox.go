// Package secretbox encrypts the secrets the service must read back
// (provider tokens, webhook signing secrets) with AES-256-GCM under the
// SECRETS_KEY, so a database dump does not reveal them (decision 2).
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// Box seals and opens secrets with one key.
type Box struct{ aead cipher.AEAD }

// KeySize is the length of the key in bytes.
const KeySize = 32

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secrets key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// FromBase64 returns a Box for a base64 (standard, padded) encoded key, the
// form SECRETS_KEY takes.
func FromBase64(s string) (*Box, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("SECRETS_KEY is not base64: %w", err)
	}
	return New(key)
}

// NewKey returns a fresh random key, base64 encoded.
func NewKey() string {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.StdEncoding.EncodeToString(key)
}

// Seal encrypts plaintext; the random nonce is prepended to the result.
// The empty string seals to nil, so "not set" stays distinguishable.
func (b *Box) Seal(plaintext string) []byte {
	if plaintext == "" {
		return nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return b.aead.Seal(nonce, nonce, []byte(plaintext), nil)
}

// Open decrypts what Seal produced; nil opens to "".
func (b *Box) Open(sealed []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("secretbox: ciphertext too short")
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", errors.New("secretbox: cannot decrypt (wrong SECRETS_KEY?)")
	}
	return string(plain), nil
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
