package webhook_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
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
	}
	for _, tt := range tests {
		e := webhook.Endpoint{URL: tt.url, Events: tt.events}
		err := e.Validate()
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
		{"an empty event list is refused", webhook.Patch{Events: []string{}}, "events: must name at least one event", ""},
		{"an unknown event", webhook.Patch{Events: []string{"nope"}},
			"events[0]: unknown event; use one of " + strings.Join(allEvents(), ", "), ""},
	}
	for _, tt := range tests {
		p := tt.patch
		err := p.Validate()
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
	if err := dup.Validate(); err != nil || !slices.Equal(dup.Events, []string{"member.updated"}) {
		t.Errorf("duplicate events: %v, %v; want [member.updated]", err, dup.Events)
	}
}

// allEvents is the subscribable list as the error message spells it.
func allEvents() []string {
	return []string{"member.created", "member.updated", "referral.created", "referral.approved", "referral.rejected",
		"referral.cancelled", "redemption.completed", "wallet.credited", "wallet.debited", "creator.tier_changed", "member.erased"}
}
