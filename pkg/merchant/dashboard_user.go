package merchant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
)

// The roles of a dashboard user: an owner changes things, a viewer only
// looks.
const (
	RoleOwner  = "owner"
	RoleViewer = "viewer"
)

// ValidRole reports whether role is one of the roles above.
func ValidRole(role string) bool { return role == RoleOwner || role == RoleViewer }

// ErrLastOwner refuses to remove or demote a merchant's last owner: a
// merchant without an owner could never invite anyone again.
var ErrLastOwner = apperr.Errorf(apperr.Conflict, "a merchant keeps at least one owner")

// DashboardUser is a person who signs in to a merchant's dashboard. The
// password is kept only as a bcrypt hash.
type DashboardUser struct {
	MerchantID   uuid.UUID
	ID           uuid.UUID
	Email        string
	PasswordHash string
	Role         string
	// SessionVersion is stored in each session at sign-in and checked on
	// every request: a password change bumps it, ending the user's other
	// sessions.
	SessionVersion int64
	CreatedAt      time.Time
}

// Invite is a pending invitation to a merchant's dashboard; its token is
// kept only as a SHA-256 hash.
type Invite struct {
	MerchantID uuid.UUID
	ID         uuid.UUID
	Email      string
	Role       string
	ExpiresAt  time.Time
	AcceptedAt time.Time
	CreatedAt  time.Time
}

// NewInviteToken returns a random one-time token and the hash to store.
func NewInviteToken() (plain string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	plain = base64.RawURLEncoding.EncodeToString(b)
	return plain, HashInviteToken(plain)
}

// HashInviteToken is the stored form of an invitation token.
func HashInviteToken(plain string) []byte {
	sum := sha256.Sum256([]byte(plain))
	return sum[:]
}
