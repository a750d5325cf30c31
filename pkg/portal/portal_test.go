package portal

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/l10n"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/portalaccess"
)

// TestPortalCatalogueComplete: every text is in both languages.
func TestPortalCatalogueComplete(t *testing.T) {
	t.Parallel()
	en, pt := texts.Texts(l10n.English), texts.Texts(l10n.Portuguese)
	for k := range en {
		if _, ok := pt[k]; !ok {
			t.Errorf("%q has no Portuguese text", k)
		}
	}
	for k := range pt {
		if _, ok := en[k]; !ok {
			t.Errorf("%q has no English text", k)
		}
	}
}

// TestPortalRenderEveryPage renders every template in both languages,
// with a member (the tabs) and embedded (the allowed origins), and fails on
// a text the catalogue lacks.
func TestPortalRenderEveryPage(t *testing.T) {
	t.Parallel()
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 17, 3, 0, 0, time.UTC)
	m := &member.Member{ID: uuid.New(), CouponCode: "LOJ-ANA-1234", Name: "Ana"}
	mer := &merchant.Merchant{ID: uuid.New(), Name: "Loja Exemplo", StoreURL: "https://loja.example.com"}
	pages := map[string]any{
		"share":           shareData{Code: m.CouponCode, Link: "https://loja.example.com/?cupom=LOJ-ANA-1234", WhatsApp: "https://wa.me/?text=x", Links: []platformLink{{"Kiwify", "https://pay.kiwify.com.br/x"}}},
		"wallet":          walletData{Wallet: ledger.Wallet{Available: 979, Pending: 500}, Transactions: []walletRow{{At: at, Amount: 500, Status: "status.pending", Reason: "reason.pending", OrderID: "o-1", ReleaseAt: at}}},
		"referrals":       referralsData{Rows: []referralRow{{At: at, Buyer: "Bia L.", Email: "b***@example.com", Amount: 10000, Reward: 500, Status: "referral_status.pending"}}, Next: "/portal/referrals?page=2"},
		"redeem":          redeemData{Available: 979, Min: 500, Destinations: []destination{{Type: "store_credit", Label: "redeem.type.store_credit", Platform: "Yampi"}, {Type: "subscription_discount", Label: "redeem.type.subscription_discount", Platform: "Guru", Subscription: true}}, Alert: "redeem.below_min"},
		"redeemed":        redeemData{Done: true, Redeemed: 979, Coupon: "CONVIDA-XYZ"},
		"sign_in":         signInData{MerchantID: mer.ID.String(), Available: true},
		"sign_in_confirm": signInData{Token: strings.Repeat("a", 43)},
		"message":         messageData{Message: "link.gone"},
	}
	if len(pages) != len(p.views.Pages) {
		t.Errorf("%d templates, %d rendered here", len(p.views.Pages), len(pages))
	}
	for name, data := range pages {
		for _, lang := range []string{l10n.English, l10n.Portuguese} {
			for _, embed := range []bool{false, true} {
				c := &Ctx{Member: m, Merchant: mer, Lang: lang, Loc: defaultZone, Base: Prefix, Embedded: embed,
					Settings: portalaccess.Settings{Enabled: true, EmbedOrigins: []string{"https://loja.example.com"}, BrandColor: "#0b6e4f"}}
				w := httptest.NewRecorder()
				p.render(w, httptest.NewRequest("GET", "/portal", nil), c, Page{Template: name, Title: "share.title", Nav: "share", Data: data})
				body := w.Body.String()
				if w.Code != 200 || !strings.Contains(body, "Loja Exemplo") {
					t.Errorf("%s %s: %d", name, lang, w.Code)
				}
				for _, bad := range []string{"reason.", "status.", "redeem.", "share.", "nav.", "ZgotmplZ"} {
					if strings.Contains(body, ">"+bad) || strings.Contains(body, bad+"</") {
						t.Errorf("%s %s: an untranslated key %q:\n%s", name, lang, bad, body)
					}
				}
				if embed && !strings.Contains(body, `data-origins="https://loja.example.com"`) {
					t.Errorf("%s embedded: no allowed origins", name)
				}
			}
		}
	}
}
