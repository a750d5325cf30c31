package merchant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
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
// password is kept only as a bcrypt hash. An e-mail may be a user of
// several merchants: each is its own DashboardUser, with its own password
// and role, unique within its merchant only.
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

// signInEmail is HTML's valid e-mail address, what the sign-in form's
// <input type=email> submits: no display name, no quotes, ASCII, a
// domain of host names (no IP literal, no underscore).
var signInEmail = regexp.MustCompile("^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?" +
	"(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")

// ValidLogin reports whether email can sign in to the dashboard: at most
// 254 bytes, and an address its sign-in form takes (signInEmail). A user
// made with any other e-mail could never type it there.
func ValidLogin(email string) bool {
	return len(email) <= 254 && signInEmail.MatchString(email)
}

// EmailDigest is how an e-mail tried at sign-in is recorded: the SHA-256,
// in lower-case hex, of the e-mail trimmed and lower-cased (the way the
// sign-in compares it), never the e-mail itself.
func EmailDigest(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(sum[:])
}

// SignInLimits bound password guessing (docs/dashboard.md, "Password
// throttle"). A failure is an attempt whose password was wrong, or whose
// check is still under way.
//
//   - An address with PerAddress failures within AddressWindow (any
//     e-mail) is refused.
//   - An e-mail with PerEmail failures within EmailWindow (any address) is
//     refused from an address that failed on it within Tainted; from any
//     other address its password is still checked, so guessing it from
//     many addresses stays bounded (one guess per address per Tainted)
//     while nobody can lock its user out.
type SignInLimits struct {
	PerAddress    int
	AddressWindow time.Duration
	PerEmail      int
	EmailWindow   time.Duration
	Tainted       time.Duration
}
