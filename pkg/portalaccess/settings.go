package portalaccess

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/l10n"
)

// MaxEmbedOrigins bounds the origins allowed to embed the portal.
const MaxEmbedOrigins = 10

// maxURL bounds a return_url and an origin.
const maxURL = 2048

// Settings are a merchant's portal settings.
type Settings struct {
	MerchantID   uuid.UUID
	Enabled      bool
	EmbedOrigins []string // https origins ("https://loja.example"), in order
	BrandColor   string   // "#rrggbb" or ""
	UpdatedAt    time.Time
}

// Defaults are the settings of a merchant who never set any.
func Defaults(merchantID uuid.UUID) Settings {
	return Settings{MerchantID: merchantID, Enabled: true, EmbedOrigins: []string{}}
}

// SettingsStore keeps the settings (postgres.PortalSettings).
type SettingsStore interface {
	// PortalSettings returns the merchant's settings, Defaults when none.
	PortalSettings(ctx context.Context, merchantID uuid.UUID) (Settings, error)
	// SavePortalSettings replaces them and writes the audit event
	// portal_settings.updated by the actor of ctx.
	SavePortalSettings(ctx context.Context, s Settings) (Settings, error)
}

var brandColor = regexp.MustCompile(`^#[0-9a-f]{6}$`)

// Normalize checks s and writes it the one way it is stored: origins
// without a trailing slash, lower case, no duplicates; the colour lower
// case. A refusal is apperr.Invalid naming the field (embed_origins,
// brand_color).
func (s *Settings) Normalize() error {
	s.BrandColor = strings.ToLower(strings.TrimSpace(s.BrandColor))
	if s.BrandColor != "" && !brandColor.MatchString(s.BrandColor) {
		return apperr.Invalidf("brand_color", apperr.RuleFormat, "must be a colour as #rrggbb")
	}
	if len(s.EmbedOrigins) > MaxEmbedOrigins {
		return apperr.Errorf(apperr.Invalid, "embed_origins: at most %d origins", MaxEmbedOrigins)
	}
	seen := map[string]bool{}
	origins := make([]string, 0, len(s.EmbedOrigins))
	for i, o := range s.EmbedOrigins {
		field := fmt.Sprintf("embed_origins[%d]", i)
		if utf8.RuneCountInString(o) > maxURL {
			return bounds.TooLong(field, maxURL)
		}
		n, ok := Origin(o)
		if !ok {
			return apperr.Invalidf(field, apperr.RuleFormat,
				"must be an https origin such as https://shop.example (scheme and host, no path)")
		}
		if !seen[n] {
			seen[n] = true
			origins = append(origins, n)
		}
	}
	s.EmbedOrigins = origins
	return nil
}

// Origin returns o as an https origin is written ("https://host[:port]"),
// and whether it is one: no path, query, fragment or credentials.
func Origin(o string) (string, bool) {
	o = strings.TrimSuffix(strings.TrimSpace(o), "/")
	if len(o) > maxURL {
		return "", false
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" ||
		u.Fragment != "" || u.Opaque != "" || strings.ContainsAny(u.Host, " *") {
		return "", false
	}
	return "https://" + strings.ToLower(u.Host), true
}

// CheckReturnURL checks a session's return_url: an absolute http(s) URL
// of at most 2048 characters, or "".
func CheckReturnURL(raw string) error {
	if raw == "" {
		return nil
	}
	if utf8.RuneCountInString(raw) > maxURL {
		return bounds.TooLong("return_url", maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return apperr.Invalidf("return_url", apperr.RuleFormat, "must be an absolute http or https URL")
	}
	return nil
}

// CheckLocale checks a session's locale: "pt-BR", "en" or "".
func CheckLocale(locale string) error {
	if locale != "" && !l10n.Valid(locale) {
		return apperr.Invalidf("locale", apperr.RuleFormat, "must be pt-BR or en")
	}
	return nil
}
