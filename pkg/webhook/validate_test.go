package webhook_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/webhook"
)

func TestEndpointValidate(t *testing.T) {
	t.Parallel()
	ok := []string{"referral.approved"}
	long := "https://example.com/" + strings.Repeat("é", webhook.MaxURLLength-len("https://example.com/"))
	tests := []struct {
		name       string
		url        string
		events     []string
		wantErr    string // the message; "" for valid
		wantURL    string
		wantEvents []string
	}{
		{"an https endpoint", "https://example.com/hook", ok, "", "https://example.com/hook", ok},
		{"the URL is trimmed", "  https://example.com/hook \n", ok, "", "https://example.com/hook", ok},
		{"only the scheme is lower-cased", "HTTPS://Example.com/Hook?A=B", ok, "", "https://Example.com/Hook?A=B", ok},
		{"a port and a path", "https://example.com:8443/a/b", ok, "", "https://example.com:8443/a/b", ok},
		{"2048 characters, not bytes", long, ok, "", long, ok},
		{"duplicate events are dropped, first order kept",
			"https://example.com", []string{"wallet.debited", "member.created", "wallet.debited"}, "",
			"https://example.com", []string{"wallet.debited", "member.created"}},
		{"the URL is required", "", ok, "url: is required", "", nil},
		{"a blank URL is none", "   ", ok, "url: is required", "", nil},
		{"too long", long + "x", ok, "url: must be at most 2048 characters", "", nil},
		{"http is refused", "http://example.com/hook", ok, "url: must use https (got http)", "", nil},
		{"ftp is refused", "ftp://example.com/hook", ok, "url: must use https (got ftp)", "", nil},
		{"a relative URL", "/hook", ok, "url: must be an absolute https URL with a host", "", nil},
		{"no host", "https:///hook", ok, "url: must be an absolute https URL with a host", "", nil},
		{"opaque", "https:example.com", ok, "url: must be an absolute https URL with a host", "", nil},
		{"unparsable", "https://exa mple.com/%zz", ok, "url: must be an absolute https URL with a host", "", nil},
		{"the URL before the events", "http://example.com", nil, "url: must use https (got http)", "", nil},
		{"no events", "https://example.com", nil, "events: must name at least one event", "", nil},
		{"an empty list", "https://example.com", []string{}, "events: must name at least one event", "", nil},
		{"an unknown event by its index as given",
			"https://example.com", []string{"member.created", "member.created", "order.paid"},
			"events[2]: unknown event; use one of " + strings.Join(allEvents(), ", "), "", nil},
		{"the test event is not subscribable", "https://example.com", []string{"webhook.test"},
			"events[0]: unknown event; use one of " + strings.Join(allEvents(), ", "), "", nil},
		{"loopback", "https://127.0.0.1/x", ok, "url: the address is not public", "", nil},
		{"localhost", "https://localhost/x", ok, "url: the address is not public", "", nil},
		{"localhost with a port", "https://LOCALHOST.:8443/x", ok, "url: the address is not public", "", nil},
		{"a private network", "https://10.1.2.3/x", ok, "url: the address is not public", "", nil},
		{"the metadata service", "https://169.254.169.254/latest", ok, "url: the address is not public", "", nil},
		{"IPv6 loopback", "https://[::1]:9/x", ok, "url: the address is not public", "", nil},
		{"IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/x", ok, "url: the address is not public", "", nil},
		{"a single-label name", "https://metadata/computeMetadata", ok, "url: the address is not public", "", nil},
		{"a numeric host", "https://2130706433/x", ok, "url: the address is not public", "", nil},
		{"a public address literal", "https://203.0.114.7/x", ok, "", "https://203.0.114.7/x", ok},
	}
	for _, tt := range tests {
		e := webhook.Endpoint{URL: tt.url, Events: tt.events}
		err := e.Validate(false)
		if tt.wantErr != "" {
			if !apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != tt.wantErr {
				t.Errorf("%s: Validate() = %v, want invalid %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || e.URL != tt.wantURL || !slices.Equal(e.Events, tt.wantEvents) {
			t.Errorf("%s: Validate() = %v with %q %v; want %q %v", tt.name, err, e.URL, e.Events, tt.wantURL, tt.wantEvents)
		}
	}
}

func TestPatchValidate(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		patch   webhook.Patch
		wantErr string
		wantURL string // "" when the patch leaves the URL alone
	}{
		{"an empty patch", webhook.Patch{}, "", ""},
		{"is_active alone", webhook.Patch{IsActive: new(bool)}, "", ""},
		{"a URL is cleaned", webhook.Patch{URL: str(" HTTPS://example.com ")}, "", "https://example.com"},
		{"an empty URL is refused", webhook.Patch{URL: str("")}, "url: is required", ""},
		{"an http URL is refused", webhook.Patch{URL: str("http://example.com")}, "url: must use https (got http)", ""},
		{"a loopback URL is refused", webhook.Patch{URL: str("https://127.0.0.1/x")}, "url: the address is not public", ""},
		{"an empty event list is refused", webhook.Patch{Events: []string{}}, "events: must name at least one event", ""},
		{"an unknown event", webhook.Patch{Events: []string{"nope"}},
			"events[0]: unknown event; use one of " + strings.Join(allEvents(), ", "), ""},
	}
	for _, tt := range tests {
		p := tt.patch
		err := p.Validate(false)
		switch {
		case tt.wantErr != "" && (!apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != tt.wantErr):
			t.Errorf("%s: Validate() = %v, want invalid %q", tt.name, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want valid", tt.name, err)
		case tt.wantErr == "" && tt.wantURL != "" && (p.URL == nil || *p.URL != tt.wantURL):
			t.Errorf("%s: URL = %v, want %q", tt.name, p.URL, tt.wantURL)
		}
	}
	dup := webhook.Patch{Events: []string{"member.updated", "member.updated"}}
	if err := dup.Validate(false); err != nil || !slices.Equal(dup.Events, []string{"member.updated"}) {
		t.Errorf("duplicate events: %v, %v; want [member.updated]", err, dup.Events)
	}
}

// allEvents is the subscribable list as the error message spells it.
func allEvents() []string {
	return []string{"member.created", "member.updated", "referral.created", "referral.approved", "referral.rejected",
		"referral.cancelled", "redemption.completed", "wallet.credited", "wallet.debited", "creator.tier_changed", "member.erased"}
}

// TestValidateAllowsPrivateNetworksWhenAsked: with
// WEBHOOK_ALLOW_PRIVATE_NETWORKS (allowPrivate) the local receivers of
// development and tests are accepted, and the refusal of a non-public
// address otherwise names the field, its rule and ErrNotPublic.
func TestValidateAllowsPrivateNetworksWhenAsked(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"https://127.0.0.1:8443/x", "https://localhost/x", "https://[::1]/x"} {
		e := webhook.Endpoint{URL: u, Events: []string{"member.created"}}
		if err := e.Validate(true); err != nil {
			t.Errorf("Validate(true) of %s = %v, want valid", u, err)
		}
		p := webhook.Patch{URL: &u}
		if err := p.Validate(true); err != nil {
			t.Errorf("Patch.Validate(true) of %s = %v, want valid", u, err)
		}
		err := (&webhook.Endpoint{URL: u, Events: []string{"member.created"}}).Validate(false)
		v, ok := apperr.ViolationOf(err)
		if !ok || v.Field != "url" || v.Rule != apperr.RuleNotPublic || !errors.Is(err, netguard.ErrNotPublic) {
			t.Errorf("Validate(false) of %s = %v (%+v), want url refused as not_public", u, err, v)
		}
	}
}
