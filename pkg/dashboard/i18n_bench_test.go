package dashboard

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/referral"
)

// BenchmarkTranslate looks up one text, as each {{t}} of a page does.
func BenchmarkTranslate(b *testing.B) {
	for b.Loop() {
		_ = translate(Portuguese, "members.redeem_subscription_id")
	}
}

// BenchmarkRenderCreator renders the creator page in Portuguese, signed
// in (navigation and all), as a handler does.
func BenchmarkRenderCreator(b *testing.B) {
	d, err := New(Config{Access: Access{Sessions: memstore.New()}})
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 17, 3, 0, 0, time.UTC)
	mid := uuid.New()
	owner := &merchant.DashboardUser{MerchantID: mid, ID: uuid.New(), Email: "owner@loja.example.com", Role: merchant.RoleOwner}
	mem := member.Member{ID: uuid.New(), MerchantID: mid, Name: "Ana Souza", Email: "ana@example.com", Status: member.StatusActive, CreatedAt: at}
	prof := creator.Profile{MerchantID: mid, MemberID: mem.ID, DisplayName: "Ana Creates", Token: "tok-123"}
	sales := make([]sale, 20)
	for i := range sales {
		sales[i] = sale{Referral: referral.Referral{Status: "approved", OrderValue: 9790, CreatedAt: at}, MaskedEmail: "j***@example.com"}
	}
	p := Page{Template: "creator", Title: "creators.creator_title", Nav: "creators", Data: creatorData{Profile: &prof, Member: &mem, Standing: &creator.Standing{
		Tiers: creator.Tiers{{Name: "Bronze", CommissionBP: 1000}, {Name: "Silver", MinSales: 3, CommissionBP: 1500}},
		Tier:  creator.Tier{Name: "Bronze", CommissionBP: 1000}, HasTier: true, Next: creator.Tier{Name: "Silver"}, ToNext: 2, HasNext: true},
		Sales: sales}}
	c := &Ctx{Lang: Portuguese, Loc: defaultZone, User: owner, Merchant: &merchant.Merchant{ID: mid, Name: "Loja"}}
	h := d.sessions.LoadAndSave(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.render(w, r, c, p) }))
	req := httptest.NewRequest("GET", "/dashboard/creators/x", nil)
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkPlural picks a count's form through go-i18n's Localizer, as
// each {{plural}} of a page does.
func BenchmarkPlural(b *testing.B) {
	for b.Loop() {
		_ = plural(Portuguese, "creators.sales_to_go", 2)
	}
}
