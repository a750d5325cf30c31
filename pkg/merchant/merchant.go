// Package merchant holds tenants, their API keys and integration settings.
// A merchant is the tenant: every row and query is scoped by its id.
package merchant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"
)

// Merchant is a tenant of the service.
type Merchant struct {
	ID                 uuid.UUID
	Name               string
	StoreURL           string
	CodePrefix         string // 2–8 uppercase letters, first part of referral codes
	ReferralParam      string // query parameter carrying the code in referral links
	DashboardEmail     string
	RateLimitPerSecond int // 0 = the service default
	RateLimitBurst     int
	CreatedAt          time.Time
}

// Key is an API key as stored: never the key itself, only its hash.
type Key struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
}

// NewKey returns a fresh API key (a UUIDv4 string, as the spec says), its
// SHA-256 hash for storage and its display prefix (first 8 characters).
func NewKey() (plain string, hash []byte, prefix string) {
	plain = uuid.NewString()
	return plain, HashKey(plain), plain[:8]
}

// HashKey returns the SHA-256 of a presented key. Keys are random UUIDs
// with 122 bits of entropy, so a fast unsalted hash is safe and lets the
// lookup be an index probe on the hash.
func HashKey(plain string) []byte {
	sum := sha256.Sum256([]byte(strings.TrimSpace(plain)))
	return sum[:]
}

// NewPassword returns a random dashboard password (URL-safe, 16 bytes).
func NewPassword() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DefaultCodePrefix derives a referral-code prefix from a merchant name:
// its letters folded to ASCII uppercase, at most 3, padded to 2 with "X".
func DefaultCodePrefix(name string) string {
	letters := FoldLetters(name, 3)
	for len(letters) < 2 {
		letters += "X"
	}
	return letters
}

// FoldLetters returns the ASCII uppercase letters of s after removing
// accents (João → JOAO), at most max of them.
func FoldLetters(s string, max int) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if b.Len() >= max {
			break
		}
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		r = unicode.ToUpper(r)
		if r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
