// Package merchant holds tenants, their API keys and integration settings.
// A merchant is the tenant: every row and query is scoped by its id.
package merchant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/convida/convida/pkg/apperr"
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

// Validate reports the first rule m breaks, as an apperr.Invalid error
// whose message names the field: a name and a store URL are required, the
// store URL is http(s) with a host (it is the base of referral links), and
// a code prefix, when set, is 2 to 8 letters A-Z (empty takes
// DefaultCodePrefix of the name when stored), and the dashboard e-mail,
// when set, is one the dashboard's sign-in takes (ValidLogin): the
// password printed for it must sign in.
func (m *Merchant) Validate() error {
	if strings.TrimSpace(m.Name) == "" || strings.TrimSpace(m.StoreURL) == "" {
		return apperr.Errorf(apperr.Invalid, "name and store URL are required")
	}
	if storeHost(m.StoreURL) == "" {
		return apperr.Errorf(apperr.Invalid, "store URL must be an http(s) URL with a host")
	}
	if p := m.CodePrefix; p != "" && (len(p) < 2 || len(p) > 8 || FoldLetters(p, 8) != p) {
		return apperr.Errorf(apperr.Invalid, "code prefix must be 2 to 8 letters A-Z")
	}
	if e := m.DashboardEmail; e != "" && !ValidLogin(e) {
		return apperr.Errorf(apperr.Invalid, "the dashboard e-mail %q could not sign in: give a plain address with a host name, "+
			"such as owner@loja.example.com (--email)", e)
	}
	return nil
}

// Normalize trims the name and store URL, upper-cases the code prefix, and
// gives an empty dashboard e-mail its default: owner@<store host>.
func (m *Merchant) Normalize() {
	m.Name, m.StoreURL = strings.TrimSpace(m.Name), strings.TrimSpace(m.StoreURL)
	m.CodePrefix = strings.ToUpper(strings.TrimSpace(m.CodePrefix))
	m.DashboardEmail = strings.TrimSpace(m.DashboardEmail)
	if host := storeHost(m.StoreURL); m.DashboardEmail == "" && host != "" {
		m.DashboardEmail = "owner@" + host
	}
}

// storeHost is the host name of an http(s) URL, "" for anything else.
func storeHost(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	return u.Hostname()
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
