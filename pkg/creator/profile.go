package creator

import (
	"strings"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
)

// Limits of a profile's fields, in characters.
const (
	MaxDisplayName = 100
	MaxNiche       = 100
	// MaxInstagramUsername is Instagram's own limit.
	MaxInstagramUsername = 30
)

// Validate checks a profile as the admin API gives it (trimmed, the
// Instagram username without its "@"): a display name of 1 to
// MaxDisplayName characters, a niche of at most MaxNiche, and an Instagram
// username of at most MaxInstagramUsername letters, digits, "." and "_"
// (empty for none). The error is apperr.Invalid naming the field.
func (p *Profile) Validate() error {
	switch n := utf8.RuneCountInString(p.DisplayName); {
	case n == 0:
		return apperr.Invalidf("display_name", apperr.RuleRequired, "is required")
	case n > MaxDisplayName:
		return apperr.Invalidf("display_name", apperr.RuleTooLong, "must be at most %d characters", MaxDisplayName).WithLimit(MaxDisplayName)
	}
	if utf8.RuneCountInString(p.Niche) > MaxNiche {
		return apperr.Invalidf("niche", apperr.RuleTooLong, "must be at most %d characters", MaxNiche).WithLimit(MaxNiche)
	}
	if len(p.InstagramUsername) > MaxInstagramUsername || strings.IndexFunc(p.InstagramUsername, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '_')
	}) >= 0 {
		return apperr.Invalidf("instagram_username", apperr.RuleFormat, "must be at most %d letters, digits, '.' or '_'", MaxInstagramUsername).WithLimit(MaxInstagramUsername)
	}
	return nil
}

// Clean returns p as a profile is kept: its fields trimmed, the Instagram
// username without its leading "@".
func (p Profile) Clean() Profile {
	p.DisplayName, p.Niche = strings.TrimSpace(p.DisplayName), strings.TrimSpace(p.Niche)
	p.InstagramUsername = strings.TrimPrefix(strings.TrimSpace(p.InstagramUsername), "@")
	return p
}
