package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// RotationOverlap is how long a rotated-out secret keeps signing
// (webhooks.md), so receivers can switch without dropping deliveries.
const RotationOverlap = 24 * time.Hour

// secretBytes is the entropy of a new secret: 256 bits, the HMAC-SHA256
// block's worth of key.
const secretBytes = 32

// NewSecret returns a new signing secret: SecretPrefix followed by the
// standard, padded base64 of 32 random bytes. It panics only if the
// operating system's random source fails (crypto/rand.Read never returns an
// error since Go 1.24).
func NewSecret() string {
	var b [secretBytes]byte
	_, _ = rand.Read(b[:])
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// errBadSecret never quotes the secret, so that it cannot end up in a log.
var errBadSecret = errors.New("webhook secret is not whsec_ followed by base64")

// secretKey returns the Standard Webhooks key of secret: the base64-decoded
// part after SecretPrefix. Any length is accepted, as the specification
// does (its own test vector uses a 24-byte key); only new secrets are 32.
func secretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok || rest == "" {
		return nil, errBadSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errBadSecret
	}
	return key, nil
}
