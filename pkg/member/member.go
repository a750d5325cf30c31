// Package member holds members, their referral codes and referral links.
package member

import (
	"crypto/rand"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/merchant"
)

// Statuses of a member (spec 3.1).
const (
	StatusActive   = "active"
	StatusInactive = "inactive"
	StatusBlocked  = "blocked"
)

// ValidStatus reports whether s is a member status.
func ValidStatus(s string) bool {
	return s == StatusActive || s == StatusInactive || s == StatusBlocked
}

// Member is a customer who refers others.
type Member struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Email      string
	Name       string
	ExternalID string
	CouponCode string
	CampaignID uuid.UUID
	Status     string
	Metadata   map[string]any
	Document   string
	Phone      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// ErasedAt is when the member's personal data was erased (Erase);
	// zero for a member never erased.
	ErasedAt time.Time
}

// Validate checks m as it would be stored, the first broken rule winning:
// an email of at most bounds.Email characters that is a bare address
// (ValidEmail), a name that is not blank and of at most bounds.Name
// characters, an external id, a document and a phone of at most bounds.ID
// characters each, a status that is one of the statuses or empty (the
// store then makes it StatusActive), then metadata of at most
// bounds.Metadata bytes once encoded. The error is apperr.Invalid with a
// message that starts with the field's API name.
func (m *Member) Validate() error {
	switch {
	case strings.TrimSpace(m.Email) == "":
		return apperr.Invalidf("email", apperr.RuleRequired, "is required")
	case utf8.RuneCountInString(m.Email) > bounds.Email:
		return bounds.TooLong("email", bounds.Email)
	case !ValidEmail(m.Email):
		return apperr.Invalidf("email", apperr.RuleFormat, "is not a valid email address")
	case strings.TrimSpace(m.Name) == "":
		return apperr.Invalidf("name", apperr.RuleRequired, "is required")
	}
	for _, f := range []struct {
		name, value string
		max         int
	}{{"name", m.Name, bounds.Name}, {"external_id", m.ExternalID, MaxExternalID},
		{"document", m.Document, bounds.ID}, {"phone", m.Phone, bounds.ID}} {
		if err := bounds.Check(f.name, f.value, f.max); err != nil {
			return err
		}
	}
	if m.Status != "" && !ValidStatus(m.Status) {
		return errStatus()
	}
	return checkMetadata(m.Metadata)
}

// checkMetadata bounds metadata as the member.* events carry it.
func checkMetadata(meta map[string]any) error {
	if meta == nil {
		return nil
	}
	return bounds.CheckJSON("metadata", meta, bounds.Metadata)
}

func errStatus() error {
	return apperr.Invalidf("status", apperr.RuleNotAllowed, "must be active, inactive or blocked")
}

// ValidEmail reports whether s is a bare email address of at most 254
// bytes: no display name, no angle brackets, nothing around it.
func ValidEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// MaxExternalID bounds external ids, in characters: they are indexed, and a
// PostgreSQL btree refuses entries over about 2.7 kB.
const MaxExternalID = bounds.ID

// CheckExternalID refuses an external id over MaxExternalID characters with
// an apperr.Invalid naming field, the parameter's name in the interface at
// hand (external_id in the admin API, externalId in the member-facing one).
func CheckExternalID(field, value string) error {
	return bounds.Check(field, value, MaxExternalID)
}

// Stats are a member's referral figures; its earnings are its wallet's
// total_earned (credits neither cancelled nor reversed, decision 18).
type Stats struct {
	TotalReferrals int64
}

// suffixAlphabet has no 0/O/1/I, so codes survive being read aloud.
const suffixAlphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// NewCode returns a referral code <PREFIX>-<NAME_PART>-<SUFFIX> (decision 8):
// NAME_PART is the first name folded to at most 12 ASCII uppercase letters
// (MEMBER when none), SUFFIX 4 random characters of suffixAlphabet. The
// caller retries on a uniqueness conflict.
func NewCode(prefix, name string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(name), " ")
	part := merchant.FoldLetters(first, 12)
	if part == "" {
		part = "MEMBER"
	}
	var raw [4]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic(err)
	}
	suffix := make([]byte, 4)
	for i, b := range raw {
		suffix[i] = suffixAlphabet[int(b)%len(suffixAlphabet)]
	}
	return prefix + "-" + part + "-" + string(suffix)
}

// Link returns storeURL with the code in the query parameter param, other
// query parameters preserved. An unparsable store URL gets the parameter
// appended as text.
func Link(storeURL, param, code string) string {
	if param == "" {
		param = "cupom"
	}
	u, err := url.Parse(storeURL)
	if err != nil {
		sep := "?"
		if strings.Contains(storeURL, "?") {
			sep = "&"
		}
		return storeURL + sep + url.QueryEscape(param) + "=" + url.QueryEscape(code)
	}
	q := u.Query()
	q.Set(param, code)
	u.RawQuery = q.Encode()
	return u.String()
}

// AdminView is the administrative member (spec 2.5): the API's answer and
// the data of the member.* webhook events.
type AdminView struct {
	ID         string         `json:"id"`
	Email      string         `json:"email"`
	Name       string         `json:"name"`
	ExternalID string         `json:"external_id"`
	CouponCode string         `json:"coupon_code"`
	CampaignID string         `json:"campaign_id"`
	Status     string         `json:"status"`
	Wallet     WalletView     `json:"wallet"`
	Stats      StatsView      `json:"stats"`
	Metadata   map[string]any `json:"metadata"`
	CreatedAt  string         `json:"created_at"`
	UpdatedAt  string         `json:"updated_at"`
	// ErasedAt is when the member's personal data was erased; null for a
	// member never erased (docs/privacy.md).
	ErasedAt *string `json:"erased_at"`
}

// WalletView is the wallet part of the admin member.
type WalletView struct {
	Pending   int64  `json:"pending"`
	Available int64  `json:"available"`
	Currency  string `json:"currency"`
}

// StatsView is the stats part of the admin member; total_earnings is the
// wallet's total earned.
type StatsView struct {
	TotalReferrals int64 `json:"total_referrals"`
	TotalEarnings  int64 `json:"total_earnings"`
}

// AdminView renders the member with its wallet figures and referral count.
func (m *Member) AdminView(pending, available, totalEarned, totalReferrals int64) AdminView {
	meta := m.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	return AdminView{
		ID: ids.Format(ids.Member, m.ID), Email: m.Email, Name: m.Name, ExternalID: m.ExternalID,
		CouponCode: m.CouponCode, CampaignID: ids.Format(ids.Campaign, m.CampaignID), Status: m.Status,
		Wallet:   WalletView{Pending: pending, Available: available, Currency: "BRL"},
		Stats:    StatsView{TotalReferrals: totalReferrals, TotalEarnings: totalEarned},
		Metadata: meta, CreatedAt: jsontime.Format(m.CreatedAt), UpdatedAt: jsontime.Format(m.UpdatedAt),
		ErasedAt: jsontime.Ptr(m.ErasedAt),
	}
}
