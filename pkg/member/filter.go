package member

import (
	"strings"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
)

// Filter selects a page of a merchant's members, newest first. A zero field
// matches every member.
type Filter struct {
	Status     string    // one of the statuses; "" for any
	CampaignID uuid.UUID // uuid.Nil for any
	Search     string    // case-insensitive substring of the name or the email; "" for any
	// Prefix is a case-insensitive prefix of the name, the email or the
	// referral code; "" for any. Unlike Search it is served by indexes,
	// so the dashboard's search box stays fast on any number of members.
	Prefix string
	Offset int
	Limit  int
}

// Update is a partial change of a member: a nil field is left as it is. The
// email is immutable, so it has no field.
type Update struct {
	Name       *string
	ExternalID *string
	CampaignID *uuid.UUID
	Status     *string
	Metadata   map[string]any // replaces the metadata when non-nil
}

// Validate checks the fields upd sets, in the order name, external id,
// status, metadata, by the rules of Member.Validate; a name set must not be
// blank. The error is apperr.Invalid naming the field.
func (upd Update) Validate() error {
	if upd.Name != nil {
		if strings.TrimSpace(*upd.Name) == "" {
			return apperr.Invalidf("name", apperr.RuleRequired, "must not be empty")
		}
		if err := bounds.Check("name", *upd.Name, bounds.Name); err != nil {
			return err
		}
	}
	if upd.ExternalID != nil {
		if err := CheckExternalID("external_id", *upd.ExternalID); err != nil {
			return err
		}
	}
	if upd.Status != nil && !ValidStatus(*upd.Status) {
		return errStatus()
	}
	return checkMetadata(upd.Metadata)
}

// Listed is a member as the admin list shows it, read with its wallet
// figures and referral stats in the same query.
type Listed struct {
	Member
	// The wallet snapshot; zero before the member's first ledger command.
	Pending, Available, TotalEarned int64
	Stats                           Stats
}
