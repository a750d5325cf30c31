package member

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
)

// ErasedDomain is the domain of every erased member's e-mail. .invalid is
// reserved (RFC 2606): no mail can ever reach it, and no real member can
// have it.
const ErasedDomain = "erased.invalid"

// ErasedEmail is the e-mail an erased member keeps, erased-<mem_…>@erased.invalid:
// the members' e-mails stay unique and never empty, and it names nobody.
func ErasedEmail(id uuid.UUID) string {
	return "erased-" + ids.Format(ids.Member, id) + "@" + ErasedDomain
}

// IsErased reports whether m's personal data was erased.
func (m *Member) IsErased() bool { return !m.ErasedAt.IsZero() }

// Erase returns m with its personal data replaced, as an erasure stores it
// (LGPD art. 18, docs/privacy.md): the e-mail is ErasedEmail, the name,
// external id, document and phone are empty, the metadata is {}, and
// ErasedAt is at. What is not personal stays: the id, the referral code
// (an opaque identifier the platforms' coupons and orders carry; it stops
// attributing, see referral.Attribute), the campaign, the status and the
// dates. Erasing an erased member changes nothing: its ErasedAt stays the
// first erasure's.
func Erase(m *Member, at time.Time) *Member {
	e := *m
	if m.IsErased() {
		return &e
	}
	e.Email, e.Name, e.ExternalID, e.Document, e.Phone = ErasedEmail(m.ID), "", "", "", ""
	e.Metadata = map[string]any{}
	e.ErasedAt = at
	return &e
}

// SetsPersonalData reports whether upd would store personal data again:
// a name, an external id or metadata.
func (upd Update) SetsPersonalData() bool {
	return upd.Name != nil || upd.ExternalID != nil || upd.Metadata != nil
}

// CheckUpdate refuses an update that would give an erased member personal
// data again (apperr.InvalidState); its status and campaign may change.
func CheckUpdate(m *Member, upd Update) error {
	if m.IsErased() && upd.SetsPersonalData() {
		return apperr.Errorf(apperr.InvalidState, "the member's personal data was erased: its name, external_id and metadata cannot be set again")
	}
	return nil
}
