// Package creator holds creators (decisions 21–22): a member's creator
// profile and its secret token, a campaign's commission tiers, and the
// tier a creator's sale earns.
package creator

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
)

// Profile is a member's creator profile.
type Profile struct {
	MerchantID        uuid.UUID
	MemberID          uuid.UUID
	DisplayName       string
	Niche             string
	InstagramUsername string
	Token             string // the credential of the public operations
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// NewToken returns a fresh creator token: 32 random bytes, URL-safe
// base64 without padding (43 characters).
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on a supported platform
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is the lookup key a token is stored under.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Tier is one commission tier of a campaign.
type Tier struct {
	Name     string
	MinSales int
	// CommissionBP is the commission in basis points of the order value
	// (1500 = 15 %).
	CommissionBP int
}

// Percent returns the commission as a percent (15 for 1500 bp).
func (t Tier) Percent() float64 { return float64(t.CommissionBP) / 100 }

// Rate returns the commission as a fraction (0.15 for 1500 bp), as the
// creator operations show it.
func (t Tier) Rate() float64 { return float64(t.CommissionBP) / 10000 }

// Commission returns the commission in cents of an order of orderValue
// cents, rounded down to the cent.
func (t Tier) Commission(orderValue int64) int64 {
	return orderValue * int64(t.CommissionBP) / 10000
}

// MaxTiers bounds a campaign's tier list.
const MaxTiers = 50

// MaxTierName bounds a tier's name, in characters.
const MaxTierName = 100

// MaxMinSales bounds a tier's MinSales (PostgreSQL integer).
const MaxMinSales = 1_000_000_000

// Tiers are a campaign's commission tiers in increasing MinSales.
type Tiers []Tier

// Validate checks the list as a PUT gives it: at most MaxTiers; each with
// a name that is not blank, of at most MaxTierName characters, unique among them
// (case-insensitive); MinSales ≥ 0 and strictly increasing; a commission
// from 0 to 100 %. The error is apperr.Invalid naming the tier's index.
func (ts Tiers) Validate() error {
	if len(ts) > MaxTiers {
		return apperr.Invalidf("tiers", apperr.RuleTooLong, "at most %d tiers", MaxTiers).WithLimit(MaxTiers)
	}
	seen := map[string]bool{}
	for i, t := range ts {
		name := strings.ToLower(strings.TrimSpace(t.Name))
		switch {
		case name == "":
			return apperr.Invalidf(tierField(i, "name"), apperr.RuleRequired, "is required")
		case utf8.RuneCountInString(t.Name) > MaxTierName:
			return apperr.Invalidf(tierField(i, "name"), apperr.RuleTooLong, "must be at most %d characters", MaxTierName).WithLimit(MaxTierName)
		case seen[name]:
			return apperr.Invalidf(tierField(i, "name"), apperr.RuleDuplicate, "%q is used twice", t.Name)
		case t.MinSales < 0 || t.MinSales > MaxMinSales:
			return apperr.Invalidf(tierField(i, "min_sales"), apperr.RuleOutOfRange, "must be from 0 to %d", MaxMinSales).WithLimit(MaxMinSales)
		case i > 0 && t.MinSales <= ts[i-1].MinSales:
			return apperr.Invalidf(tierField(i, "min_sales"), apperr.RuleNotAscending, "must be greater than the previous tier's")
		case t.CommissionBP < 0 || t.CommissionBP > 10000:
			return apperr.Invalidf(tierField(i, "commission_percent"), apperr.RuleOutOfRange, "must be from 0 to 100").WithLimit(100)
		}
		seen[name] = true
	}
	return nil
}

// For returns the tier of a creator with sales non-rejected, non-cancelled
// referrals in the month (decision 21): the highest whose MinSales is at
// most sales. ok is false when no tier applies (no tiers, or sales below
// the first), and the campaign's own reward applies.
func (ts Tiers) For(sales int) (t Tier, ok bool) {
	for _, tier := range ts {
		if tier.MinSales <= sales {
			t, ok = tier, true
		}
	}
	return t, ok
}

// Next returns the tier after the one sales reach and the sales still
// needed to reach it; ok is false at the top tier.
func (ts Tiers) Next(sales int) (t Tier, needed int, ok bool) {
	for _, tier := range ts {
		if tier.MinSales > sales {
			return tier, tier.MinSales - sales, true
		}
	}
	return Tier{}, 0, false
}

// MonthStart returns the start of the calendar month (UTC) of t, from
// which a creator's sales are counted.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// MaskEmail masks a buyer's e-mail as the sales operation shows it: the
// first character of the local part, "***", and the domain
// ("j***@example.com"); "" stays "", and a value without "@" is "***".
func MaskEmail(email string) string {
	email = strings.TrimSpace(email)
	if email == "" {
		return ""
	}
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return "***"
	}
	r := []rune(email[:at])
	return string(r[0]) + "***" + email[at:]
}

// tierField names the field of the i-th tier as the API does:
// "tiers[2].name".
func tierField(i int, name string) string { return fmt.Sprintf("tiers[%d].%s", i, name) }
