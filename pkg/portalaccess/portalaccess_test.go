package portalaccess

import (
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	a, b := NewToken(), NewToken()
	if a.Plain == b.Plain || !WellFormed(a.Plain) || len(a.Hash) != 32 {
		t.Fatalf("tokens %q %q", a.Plain, b.Plain)
	}
	if string(HashToken(a.Plain)) != string(a.Hash) {
		t.Error("the hash of the plain token is not the stored one")
	}
	for _, bad := range []string{"", "short", a.Plain + "x", a.Plain[:42] + "!"} {
		if WellFormed(bad) {
			t.Errorf("WellFormed(%q)", bad)
		}
	}
	if KindSession.TTL() != 120*time.Second || KindEmbed.TTL() != time.Hour || KindSignIn.TTL() != 15*time.Minute {
		t.Error("lifetimes")
	}
	if !KindSession.SingleUse() || !KindSignIn.SingleUse() || KindEmbed.SingleUse() {
		t.Error("single use")
	}
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	if err := Available(&member.Member{Status: member.StatusActive}); err != nil {
		t.Error(err)
	}
	if !apperr.Is(Available(&member.Member{Status: member.StatusBlocked}), apperr.MemberUnavailable) {
		t.Error("a blocked member has a session")
	}
	if !apperr.Is(Available(&member.Member{Status: member.StatusActive, ErasedAt: time.Unix(1, 0)}), apperr.MemberUnavailable) {
		t.Error("an erased member has a session")
	}
}

func TestSettingsNormalize(t *testing.T) {
	t.Parallel()
	s := Settings{BrandColor: "#AABBCC", EmbedOrigins: []string{"https://Shop.example/", "https://shop.example", "https://b.example:8443"}}
	if err := s.Normalize(); err != nil {
		t.Fatal(err)
	}
	if s.BrandColor != "#aabbcc" || len(s.EmbedOrigins) != 2 || s.EmbedOrigins[0] != "https://shop.example" || s.EmbedOrigins[1] != "https://b.example:8443" {
		t.Errorf("normalized %+v", s)
	}
	for _, bad := range []Settings{
		{BrandColor: "red"}, {BrandColor: "#abc"},
		{EmbedOrigins: []string{"http://shop.example"}}, {EmbedOrigins: []string{"https://shop.example/path"}},
		{EmbedOrigins: []string{"*"}}, {EmbedOrigins: []string{"https://a@shop.example"}},
		{EmbedOrigins: make([]string, 11)},
	} {
		if err := bad.Normalize(); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if CheckReturnURL("https://shop.example/account") != nil || CheckReturnURL("javascript:alert(1)") == nil || CheckReturnURL("/relative") == nil {
		t.Error("return_url")
	}
	if CheckLocale("en") != nil || CheckLocale("pt-BR") != nil || CheckLocale("") != nil || CheckLocale("fr") == nil {
		t.Error("locale")
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Maria da Silva": "Maria S.", "Ana": "Ana", "": "", " joão  édson ": "joão É."} {
		if got := MaskName(in); got != want {
			t.Errorf("MaskName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"buyer@example.com": "b***@example.com", "x": "", "": "", "@a.b": ""} {
		if got := MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}
