package member

import (
	"context"

	"github.com/google/uuid"
)

// The contracts of members' storage (postgres.MemberStore) that the API
// and the dashboard share; each edge adds what only it reads. An absent
// member, another merchant's included, is apperr.NotFound.

// Finder finds a merchant's members.
type Finder interface {
	FindMemberByID(ctx context.Context, merchantID, id uuid.UUID) (*Member, error)
	// FindMemberByEmailOrExternalID finds the member with the email, or
	// else the external id ("" matches nothing).
	FindMemberByEmailOrExternalID(ctx context.Context, merchantID uuid.UUID, email, externalID string) (*Member, error)
}

// Store creates and finds members.
type Store interface {
	Finder
	// CreateMember stores m with a fresh coupon code of codePrefix (drawn
	// again on a collision), its member.created event and its coupons'
	// request, in one transaction. A taken email is apperr.EmailExists.
	CreateMember(ctx context.Context, m *Member, codePrefix string) error
}

// Updater changes members.
type Updater interface {
	// UpdateMember applies upd and returns the member as stored.
	UpdateMember(ctx context.Context, merchantID, id uuid.UUID, upd Update) (*Member, error)
}

// Eraser erases members' personal data (docs/privacy.md).
type Eraser interface {
	// EraseMember erases the member's personal data and returns the
	// member as erased, and whether this call erased it: erasing an
	// erased member changes nothing.
	EraseMember(ctx context.Context, merchantID, id uuid.UUID) (*Member, bool, error)
}
