// Package portalaccess holds the rules of the member's portal that do not
// depend on HTTP: the tokens that let a member in (minted by the
// merchant's backend, for an embed, or e-mailed), how long each lives,
// who may have one, the merchant's portal settings, and how a buyer is
// shown to the member who referred her (masked).
package portalaccess

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
)

// Kind is what a token opens.
type Kind string

// The kinds of token and how long each is valid.
const (
	// KindSession is the link a merchant's backend mints
	// (POST /members/{id}/portal-sessions): one use, within SessionTTL.
	KindSession Kind = "session"
	// KindEmbed opens the embedded portal (POST /members/{id}/embed-tokens):
	// any number of times within EmbedTTL (a reload of the iframe).
	KindEmbed Kind = "embed"
	// KindSignIn is the e-mailed sign-in link: one use, within SignInTTL.
	KindSignIn Kind = "sign_in"

	SessionTTL = 120 * time.Second
	EmbedTTL   = time.Hour
	SignInTTL  = 15 * time.Minute

	// SessionIdle and SessionLifetime end a portal session after so long
	// without a request, and so long after it began.
	SessionIdle     = 30 * time.Minute
	SessionLifetime = 12 * time.Hour
)

// TTL is how long a token of kind is valid.
func (k Kind) TTL() time.Duration {
	switch k {
	case KindEmbed:
		return EmbedTTL
	case KindSignIn:
		return SignInTTL
	}
	return SessionTTL
}

// SingleUse reports whether a token of kind opens the portal once only.
func (k Kind) SingleUse() bool { return k != KindEmbed }

// Grant is what a token opens: a member's portal, in a language, with a
// way back to the merchant's site.
type Grant struct {
	Kind       Kind
	MerchantID uuid.UUID
	MemberID   uuid.UUID
	ReturnURL  string // "" when none
	Locale     string // "" lets the member's browser choose
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// Token is a new token: Plain goes to the member (in a URL), Hash is all
// that is stored.
type Token struct {
	Plain string
	Hash  []byte
}

// NewToken returns a random 256-bit token, base64url without padding.
func NewToken() Token {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	plain := base64.RawURLEncoding.EncodeToString(b[:])
	return Token{Plain: plain, Hash: HashToken(plain)}
}

// HashToken is what a presented token is looked up by.
func HashToken(plain string) []byte {
	sum := sha256.Sum256([]byte(plain))
	return sum[:]
}

// WellFormed reports whether plain could be a token NewToken made: what a
// URL presents is checked before any query.
func WellFormed(plain string) bool {
	if len(plain) != 43 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(plain)
	return err == nil && len(b) == 32
}

// Tokens keeps the tokens (postgres.PortalTokens).
type Tokens interface {
	// CreateToken stores g under hash.
	CreateToken(ctx context.Context, g Grant, hash []byte) error
	// UseToken returns the grant of the token of kind hash names, valid at
	// now, and marks a single-use one used in the same statement; a token
	// unknown, expired or already used is apperr.NotFound (the portal answers 410).
	UseToken(ctx context.Context, kind Kind, hash []byte, now time.Time) (*Grant, error)
}

// Available refuses a member who may not have a portal session: a blocked
// or erased one (apperr.MemberUnavailable).
func Available(m *member.Member) error {
	if m.Status == member.StatusBlocked || !m.ErasedAt.IsZero() {
		return apperr.Errorf(apperr.MemberUnavailable, "the member is blocked or erased: no portal session")
	}
	return nil
}

// Mint makes a token of kind for m, valid from now, and stores it.
func Mint(ctx context.Context, tokens Tokens, kind Kind, m *member.Member, returnURL, locale string, now time.Time) (Token, Grant, error) {
	if err := Available(m); err != nil {
		return Token{}, Grant{}, err
	}
	t := NewToken()
	g := Grant{Kind: kind, MerchantID: m.MerchantID, MemberID: m.ID, ReturnURL: returnURL, Locale: locale,
		CreatedAt: now, ExpiresAt: now.Add(kind.TTL())}
	if err := tokens.CreateToken(ctx, g, t.Hash); err != nil {
		return Token{}, Grant{}, err
	}
	return t, g, nil
}
