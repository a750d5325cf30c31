// Package provider describes the platforms Convida takes sales from: one
// Descriptor per platform says what it is (its name and title, its
// settings and their bounds, the settings each capability needs, its
// public API's default URLs, how its webhook authenticates and what of it
// to redact, its longest pull). It is the only place a platform's name is
// spelled: the merchant's settings, the forms of the API and the
// dashboard, --help, the overview and the ingest's redaction read it.
//
// The package is pure: descriptors are values, fixed at start.
package provider

import (
	"slices"
	"time"

	"github.com/convida/convida/pkg/bounds"
)

// Role is the stored field a setting fills. The store keeps one column per
// role (sealed for the secrets), so two platforms whose settings have the
// same role share it: Hotmart's hottok is the role of Guru's account token.
type Role uint8

// The roles.
const (
	AccountToken Role = iota + 1
	WebhookSecret
	UserToken
	UserSecretKey
	StoreAlias
	ClientID
	ClientSecret
	BasicToken
	AccountID
	APIURL
	AuthURL
	CheckoutURL
)

// Roles are every role, in the store's order.
var Roles = []Role{AccountToken, WebhookSecret, UserToken, UserSecretKey, StoreAlias, ClientID, ClientSecret,
	BasicToken, AccountID, APIURL, AuthURL, CheckoutURL}

// Sealed reports whether the store keeps the role encrypted: the secrets.
func (r Role) Sealed() bool {
	switch r {
	case AccountToken, WebhookSecret, UserToken, UserSecretKey, ClientSecret, BasicToken:
		return true
	}
	return false
}

// Kind says how a setting is checked and shown.
type Kind uint8

// The kinds of setting.
const (
	// Text is shown back as saved: an id, an alias.
	Text Kind = iota
	// Secret is write-only: shown masked, sealed at rest.
	Secret
	// CalledURL is a base Convida calls: https with a public host (the
	// guarded dialer checks it again at every connection), with a default.
	CalledURL
	// ShownURL is a link Convida only ever shows (a member's referral
	// link): an https URL whose host is not checked.
	ShownURL
)

// Setting is one setting of a platform.
type Setting struct {
	Name    string // as the API, the forms and the audit name it
	Role    Role
	Kind    Kind
	Default string // CalledURL: the platform's public API, used when none is set
}

// IsURL reports whether the setting holds a URL.
func (s Setting) IsURL() bool { return s.Kind == CalledURL || s.Kind == ShownURL }

// Bound is the most characters the setting holds: a credential or alias
// longer than any platform issues is a mistake or an attack on storage.
func (s Setting) Bound() int {
	if s.IsURL() {
		return bounds.URL
	}
	return bounds.ID
}

// Capability is what Convida can do with a platform once the settings it
// needs are set.
type Capability uint8

// The capabilities.
const (
	// Webhook: take the platform's sale webhooks.
	Webhook Capability = iota + 1
	// Redeem: carry out a redemption at the platform.
	Redeem
	// Coupon: keep each member's code as a coupon at the platform.
	Coupon
	// Pull: read the platform's sales (reconciliation).
	Pull
	// Link: give each member a referral link at the platform.
	Link
)

// Place is where a webhook's credential travels.
type Place uint8

// The places.
const (
	InBody Place = iota + 1
	InHeader
	InQuery
)

// WebhookAuth is how a platform's webhook authenticates.
type WebhookAuth struct {
	// Setting names the setting holding the merchant's secret.
	Setting string
	// Place and Name: the body field, header or query parameter carrying
	// the token or signature.
	Place Place
	Name  string
	// Signed: the secret keys a signature of the body rather than
	// travelling itself, so a body never holds it.
	Signed bool
}

// Descriptor is one platform.
type Descriptor struct {
	Name  string // as in URLs, settings and records: lower case
	Title string // as people write it
	// Settings in the order forms list them.
	Settings []Setting
	// Needs are the settings each capability needs; a capability absent
	// here is one the platform does not have.
	Needs map[Capability][]string
	// Webhook is how its webhook authenticates.
	Webhook WebhookAuth
	// PullWindow is the longest period one pull covers; zero with no pull.
	PullWindow time.Duration
	// NoPull says why there is no pull, for a refused reconciliation.
	NoPull string
	// Redemption is the redemption type carried out at the platform; ""
	// for none.
	Redemption string
	// RedemptionAlias is the platform's own name of its redemption, which
	// the API accepts as a type too.
	RedemptionAlias string
	// LinkParam is the query parameter of the merchant's checkout link
	// that carries a member's code (Capability Link).
	LinkParam string
}

// Can reports whether the platform has capability c.
func (d Descriptor) Can(c Capability) bool {
	_, ok := d.Needs[c]
	return ok
}

// Setting returns the setting named name.
func (d Descriptor) Setting(name string) (Setting, bool) {
	i := slices.IndexFunc(d.Settings, func(s Setting) bool { return s.Name == name })
	if i < 0 {
		return Setting{}, false
	}
	return d.Settings[i], true
}

// SettingOf returns the setting of role r.
func (d Descriptor) SettingOf(r Role) (Setting, bool) {
	i := slices.IndexFunc(d.Settings, func(s Setting) bool { return s.Role == r })
	if i < 0 {
		return Setting{}, false
	}
	return d.Settings[i], true
}

// Missing names, in the order of d's needs, the settings capability c
// needs that value reports empty; nil when c is not d's.
func (d Descriptor) Missing(c Capability, value func(Setting) string) []string {
	missing := []string{}
	for _, name := range d.Needs[c] {
		s, _ := d.Setting(name)
		if value(s) == "" {
			missing = append(missing, name)
		}
	}
	return missing
}

// Redemption types (a platform's Descriptor.Redemption).
const (
	RedeemSubscriptionDiscount = "subscription_discount"
	RedeemStoreCredit          = "store_credit"
)

// All returns every descriptor.
func All() []Descriptor { return slices.Clone(all) }

// Names are the platforms' names, in All's order.
func Names() []string {
	names := make([]string, len(all))
	for i, d := range all {
		names[i] = d.Name
	}
	return names
}

// Lookup returns the descriptor named name (exact, lower case).
func Lookup(name string) (Descriptor, bool) {
	i := slices.IndexFunc(all, func(d Descriptor) bool { return d.Name == name })
	if i < 0 {
		return Descriptor{}, false
	}
	return all[i], true
}

// Known reports whether name is a platform's.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// With returns the descriptors of the platforms that have capability c.
func With(c Capability) []Descriptor {
	var out []Descriptor
	for _, d := range all {
		if d.Can(c) {
			out = append(out, d)
		}
	}
	return out
}

// ForRedemption returns the platform that carries out redemptions of
// type typ.
func ForRedemption(typ string) (Descriptor, bool) {
	i := slices.IndexFunc(all, func(d Descriptor) bool { return d.Redemption != "" && d.Redemption == typ })
	if i < 0 {
		return Descriptor{}, false
	}
	return all[i], true
}

// SettingNames are the names of every platform's settings, each once.
func SettingNames() []string {
	var names []string
	for _, d := range all {
		for _, s := range d.Settings {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

// TitleOf is the title of the platform named name, or name itself.
func TitleOf(name string) string {
	if d, ok := Lookup(name); ok {
		return d.Title
	}
	return name
}
