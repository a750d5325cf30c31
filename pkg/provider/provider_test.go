package provider_test

import (
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/convida/convida/pkg/provider"
)

// TestDescriptorsAreConsistent holds every descriptor to the rules the
// rest of the service relies on without checking: a need names a
// setting, a webhook's credential is a secret, a pull has a window, a link
// has its parameter. A descriptor added with a typo fails here, before any
// form or adapter is built from it.
func TestDescriptorsAreConsistent(t *testing.T) {
	t.Parallel()
	lower := regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	names := map[string]bool{}
	for _, d := range provider.All() {
		t.Run(d.Name, func(t *testing.T) {
			if !lower.MatchString(d.Name) || names[d.Name] {
				t.Errorf("name %q is not a unique lower-case word", d.Name)
			}
			names[d.Name] = true
			if d.Title == "" {
				t.Error("no title")
			}
			roles := map[provider.Role]bool{}
			for _, s := range d.Settings {
				if roles[s.Role] {
					t.Errorf("two settings share the role of %s: the store keeps one column per role", s.Name)
				}
				roles[s.Role] = true
				if s.Kind == provider.Secret && !s.Role.Sealed() {
					t.Errorf("secret %s is stored in clear (role not sealed)", s.Name)
				}
				if s.Kind == provider.CalledURL {
					if u, err := url.Parse(s.Default); err != nil || u.Scheme != "https" || u.Host == "" {
						t.Errorf("called URL %s has no https default: %q", s.Name, s.Default)
					}
				}
			}
			for c, needs := range d.Needs {
				for _, n := range needs {
					if _, ok := d.Setting(n); !ok {
						t.Errorf("capability %d needs %q, which is no setting", c, n)
					}
				}
			}
			hook, ok := d.Setting(d.Webhook.Setting)
			if !ok || hook.Kind != provider.Secret || d.Webhook.Name == "" || d.Webhook.Place == 0 {
				t.Errorf("webhook authentication %+v does not name a secret setting and where it travels", d.Webhook)
			}
			if !slices.Equal(d.Needs[provider.Webhook], []string{d.Webhook.Setting}) {
				t.Errorf("the webhook needs %v, its authentication reads %q", d.Needs[provider.Webhook], d.Webhook.Setting)
			}
			if d.Can(provider.Pull) != (d.PullWindow > 0) || d.Can(provider.Pull) == (d.NoPull != "") {
				t.Errorf("pull: capability %v, window %v, reason for none %q", d.Can(provider.Pull), d.PullWindow, d.NoPull)
			}
			if d.Can(provider.Link) != (d.LinkParam != "") {
				t.Errorf("link: capability %v, parameter %q", d.Can(provider.Link), d.LinkParam)
			}
			if d.Can(provider.Redeem) != (d.Redemption != "") {
				t.Errorf("redeem: capability %v, redemption type %q", d.Can(provider.Redeem), d.Redemption)
			}
			if d.Redemption != "" {
				if got, ok := provider.ForRedemption(d.Redemption); !ok || got.Name != d.Name {
					t.Errorf("redemption %s is carried out by %q", d.Redemption, got.Name)
				}
			}
		})
	}
}

func TestLookupAndNames(t *testing.T) {
	t.Parallel()
	names := provider.Names()
	if len(names) != len(provider.All()) || len(names) == 0 {
		t.Fatalf("names %v", names)
	}
	for _, n := range names {
		if d, ok := provider.Lookup(n); !ok || d.Name != n || !provider.Known(n) {
			t.Errorf("%s is not found by its name", n)
		}
	}
	for _, n := range []string{"", "GURU", "Guru", "unknown"} {
		if provider.Known(n) {
			t.Errorf("%q is known", n)
		}
	}
	if provider.TitleOf(provider.Hotmart) != "Hotmart" || provider.TitleOf("acme") != "acme" {
		t.Errorf("titles: %q %q", provider.TitleOf(provider.Hotmart), provider.TitleOf("acme"))
	}
	seen := map[string]bool{}
	for _, n := range provider.SettingNames() {
		if seen[n] {
			t.Errorf("setting name %s listed twice", n)
		}
		seen[n] = true
	}
}

func TestMissingNamesTheEmptySettingsInOrder(t *testing.T) {
	t.Parallel()
	yampi, _ := provider.Lookup(provider.Yampi)
	set := map[string]string{"user_secret_key": "k"}
	got := yampi.Missing(provider.Redeem, func(s provider.Setting) string { return set[s.Name] })
	if !slices.Equal(got, []string{"user_token", "store_alias"}) {
		t.Errorf("missing %v", got)
	}
	hotmart, _ := provider.Lookup(provider.Hotmart)
	if got := hotmart.Missing(provider.Redeem, func(provider.Setting) string { return "" }); len(got) != 0 {
		t.Errorf("a capability the platform lacks needs %v", got)
	}
	if len(provider.With(provider.Pull)) == 0 || slices.ContainsFunc(provider.With(provider.Link), func(d provider.Descriptor) bool { return d.LinkParam == "" }) {
		t.Error("With returns platforms without the capability")
	}
}
