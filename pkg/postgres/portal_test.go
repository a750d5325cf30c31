package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// TestPortalTokensAndSignInLimits: a session or sign-in token opens once
// and not after it expires, an embed token any number of times within its
// hour; only hashes are stored; the sign-in requests are counted per
// e-mail and per client address within their window.
func TestPortalTokensAndSignInLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	box := testenv.MustBox(t)
	mer := testenv.MustMerchant(t, pool, box, merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com", CodePrefix: "LOJ"})
	camp := testenv.MustCampaign(t, pool, mer.ID, testenv.FixedCampaign(500, 7))
	m := &member.Member{MerchantID: mer.ID, Email: "ana@example.com", Name: "Ana Souza", CampaignID: camp.ID}
	if err := postgres.NewMemberStore(pool).CreateMember(ctx, m, "LOJ"); err != nil {
		t.Fatal(err)
	}
	tokens := postgres.NewPortalTokens(pool)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, kind := range []portalaccess.Kind{portalaccess.KindSession, portalaccess.KindSignIn, portalaccess.KindEmbed} {
		tok, g, err := portalaccess.Mint(ctx, tokens, kind, m, "", "en", now)
		if err != nil {
			t.Fatal(err)
		}
		if g.ExpiresAt != now.Add(kind.TTL()) {
			t.Errorf("%s expires %v", kind, g.ExpiresAt)
		}
		got, err := tokens.UseToken(ctx, kind, tok.Hash, now.Add(time.Second))
		if err != nil || got.MemberID != m.ID || got.Locale != "en" {
			t.Fatalf("%s: first use = %+v, %v", kind, got, err)
		}
		_, err = tokens.UseToken(ctx, kind, tok.Hash, now.Add(2*time.Second))
		if kind.SingleUse() != apperr.Is(err, apperr.NotFound) {
			t.Errorf("%s: second use: %v", kind, err)
		}
		if _, err := tokens.UseToken(ctx, kind, tok.Hash, now.Add(kind.TTL())); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("%s: use when expired: %v", kind, err)
		}
		other := portalaccess.KindSession
		if kind == other {
			other = portalaccess.KindEmbed
		}
		if _, err := tokens.UseToken(ctx, other, tok.Hash, now); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("a %s token opened as %s: %v", kind, other, err)
		}
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM portal_tokens WHERE encode(token_hash, 'escape') LIKE '%'||$1||'%'`, tok.Plain).Scan(&n)
		if n != 0 || strings.Contains(string(tok.Hash), tok.Plain) {
			t.Errorf("%s token stored in clear", kind)
		}
	}

	signIns := postgres.NewPortalSignIns(pool)
	claim := func(email, client string, at time.Time) bool {
		ok, err := signIns.ClaimPortalSignIn(ctx, strings.Repeat(email, 64)[:64], client, at, 15*time.Minute, 3, 5)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i, want := range []bool{true, true, true, false} {
		if got := claim("a", "10.0.0.1", now.Add(time.Duration(i)*time.Second)); got != want {
			t.Errorf("e-mail request %d = %v, want %v", i+1, got, want)
		}
	}
	if !claim("a", "10.0.0.1", now.Add(16*time.Minute)) {
		t.Error("the e-mail's window did not pass")
	}
	// The client has one request within the window; its limit is 5.
	for i, want := range []bool{true, true, true, true, false} {
		if got := claim(string(rune('b'+i)), "10.0.0.1", now.Add(16*time.Minute+time.Duration(i)*time.Second)); got != want {
			t.Errorf("client request %d = %v, want %v", i+1, got, want)
		}
	}
}
