package dashboard

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/webhook"
)

// TestServiceSentencesOnPortuguesePages renders the pages that show what
// the service kept in its own words — the integrations page (deliveries'
// errors and ignore reasons, reconciliations' errors), a delivery, a
// member (her coupons' and redemptions' failures), the redemptions and a
// redemption, an endpoint's log and one attempt — with every sentence of
// serviceSentences, and fails when the Portuguese page shows one as
// stored; the English page shows each as stored.
func TestServiceSentencesOnPortuguesePages(t *testing.T) {
	t.Parallel()
	d, err := New(Config{Access: Access{Sessions: memstore.New()}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 17, 3, 0, 0, time.UTC)
	mid := uuid.New()
	owner := &merchant.DashboardUser{MerchantID: mid, ID: uuid.New(), Email: "owner@loja.example.com", Role: merchant.RoleOwner, CreatedAt: at}
	mem := member.Member{ID: uuid.New(), MerchantID: mid, Name: "Ana Souza", Email: "ana@example.com", Status: member.StatusActive, CreatedAt: at}
	ep := endpointView{ID: uuid.New(), URL: "https://hooks.example.com/a", Events: []string{"member.created"}, IsActive: true, CreatedAt: at}
	render := func(lang string, p Page) string {
		c := &Ctx{Lang: lang, Loc: defaultZone, User: owner, Merchant: &merchant.Merchant{ID: mid, Name: "Loja"}}
		w := httptest.NewRecorder()
		d.sessions.LoadAndSave(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d.render(w, r, c, p)
		})).ServeHTTP(w, httptest.NewRequest("GET", "/dashboard/x", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s (%s): %d", p.Template, lang, w.Code)
		}
		return w.Body.String()
	}
	sentences := serviceSentences(t)
	var deliveries []inbound.Delivery
	var runs []reconcile.Run
	var coupons []couponRow
	var redemptions []redemption.Listed
	var attempts []webhook.Attempt
	type shown struct {
		page Page
		text string // a sentence the page shows
	}
	var single []shown
	for _, s := range sentences {
		dl := inbound.Delivery{ID: uuid.New(), Provider: "guru", Outcome: inbound.DeliveryUnprocessable, HTTPStatus: 422, Error: s, ReceivedAt: at}
		red := redemption.Redemption{ID: uuid.New(), MemberID: mem.ID, Type: "store_credit", Status: redemption.StatusFailed, Amount: 500,
			FailureReason: s, CreatedAt: at}
		a := webhook.Attempt{ID: uuid.New(), EventType: "member.created", Status: webhook.StatusFailed, Attempt: 1, Error: s, CreatedAt: at}
		deliveries = append(deliveries, dl)
		runs = append(runs, reconcile.Run{ID: uuid.New(), Provider: "guru", Status: reconcile.StatusFailed, StartedAt: at, Error: s})
		coupons = append(coupons, couponRow{Platform: "guru", CouponState: redemption.CouponState{Status: "failed", Error: s}})
		redemptions = append(redemptions, redemption.Listed{Redemption: red, MemberName: "Ana Souza"})
		attempts = append(attempts, a)
		single = append(single,
			shown{Page{Template: "integration_delivery", Title: "integrations.delivery_title", Nav: "integrations", Data: deliveryData{Delivery: dl}}, s},
			shown{Page{Template: "redemption", Title: "redemption.title", Nav: "redemptions", Data: redemptionData{Redemption: &red, Member: &mem}}, s},
			shown{Page{Template: "webhook_log", Title: "webhooks.log_title", Nav: "webhooks", Data: webhookLogData{Endpoint: ep, Attempt: a, PublicID: "whl_x"}}, s})
	}
	integrations := integrationsDataForRender(at, mid, deliveries[0])
	integrations.Platforms[0].Deliveries, integrations.Platforms[0].Runs = deliveries, runs
	logs := webhookDataForRender(ep, at)
	logs.Attempts = attempts
	pages := append([]shown{
		{Page{Template: "integrations", Title: "title.integrations", Nav: "integrations", Data: integrations}, sentences[0]},
		{Page{Template: "member", Title: "members.member_title", Nav: "members", Data: memberData{Member: &mem, MemberID: "mem_x", Coupons: coupons,
			Redemptions: redemptions}}, sentences[0]},
		{Page{Template: "redemptions", Title: "redemptions.title", Nav: "redemptions", Data: redemptionsData{Redemptions: redemptions}}, sentences[0]},
		{Page{Template: "webhook", Title: "webhooks.endpoint_title", Nav: "webhooks", Data: logs}, sentences[0]},
	}, single...)
	for _, p := range pages {
		pt, en := render(Portuguese, p.page), render(English, p.page)
		for _, s := range sentences {
			if strings.Contains(pt, html.EscapeString(s)) {
				t.Errorf("%s in Portuguese shows %q", p.page.Template, s)
			}
		}
		if !strings.Contains(en, html.EscapeString(p.text)) {
			t.Errorf("%s in English does not show %q", p.page.Template, p.text)
		}
	}
}
