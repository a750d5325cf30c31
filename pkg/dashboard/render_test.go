package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
	"github.com/convida/convida/pkg/webhook"
)

type renderCase struct {
	page Page
	user bool
	want map[string][]string // lang → texts the page shows
}

// TestRenderEveryPage renders every template in both languages with the
// data its handler gives it, and checks what a reader would see of it; a
// template that fails to execute fails here, not in front of a merchant.
func TestRenderEveryPage(t *testing.T) {
	t.Parallel()
	d, err := New(Config{Access: Access{Sessions: memstore.New()}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 17, 3, 0, 0, time.UTC)
	mid := uuid.New()
	owner := &merchant.DashboardUser{MerchantID: mid, ID: uuid.New(), Email: "owner@loja.example.com", Role: merchant.RoleOwner, CreatedAt: at}
	key := merchant.Key{ID: uuid.New(), Prefix: "1a2b3c4d", CreatedAt: at}
	camp := campaign.Campaign{ID: uuid.New(), Name: "Black Friday", IsDefault: true}
	mem := member.Member{ID: uuid.New(), MerchantID: mid, Name: "Ana Souza", Email: "ana@example.com", CouponCode: "DEMO-ANA-X2Y3",
		Status: member.StatusActive, CampaignID: camp.ID, CreatedAt: at}
	listed := member.Listed{Member: mem, Pending: 979, Available: 123456}
	prof := creator.Profile{MerchantID: mid, MemberID: mem.ID, DisplayName: "Ana Creates", Niche: "fitness", InstagramUsername: "ana.creates", Token: "tok-123"}
	delivery := inbound.Delivery{ID: uuid.New(), Provider: "guru", Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, ReceivedAt: at}
	failing := endpointView{ID: uuid.New(), URL: "https://hooks.example.com/a", Events: []string{"member.created"}, IsActive: true,
		FailingSince: at, MaskedSecret: "whsec_****abcd", CreatedAt: at}
	gone := endpointView{ID: uuid.New(), URL: "https://hooks.example.com/b", Events: []string{"wallet.credited"},
		DisabledReason: webhook.DisabledGone, CreatedAt: at}
	pages := []renderCase{
		{Page{Template: "sign_in", Title: "sign_in.title", Data: signInData{Alert: "sign_in.invalid"}}, false,
			map[string][]string{English: {">Email<", ">Password<", "Sign in", `role="alert"`, "Invalid email or password", "Português"},
				Portuguese: {"E-mail", "Senha", "E-mail ou senha inválidos", "English"}}},
		{Page{Template: "api_keys", Title: "api_keys.title", Nav: "api_keys", Data: apiKeysData{Keys: []merchant.Key{key}, NewKey: "the-new-key"}}, true,
			map[string][]string{English: {`data-testid="new-api-key" id="new-api-key">the-new-key<`, "Generate new key", "1a2b3c4d", "Revoke", "11/25/2026 2:03 PM", "Never"},
				Portuguese: {"Gerar nova chave", "Revogar", "25/11/2026 14:03", "Nunca"}}},
		{Page{Template: "portal_settings", Title: "portal.title", Nav: "portal", Data: portalData{Saved: true, Origins: "https://loja.example.com",
			Settings: portalaccess.Settings{Enabled: true, EmbedOrigins: []string{"https://loja.example.com"}, BrandColor: "#0b6e4f"}}}, true,
			map[string][]string{English: {"Member portal", "https://loja.example.com", "#0b6e4f", "Portal settings saved.", " checked"},
				Portuguese: {"Portal do membro", "Sites que podem incorporar o portal"}}},
		{Page{Template: "api_key_revoke", Title: "api_keys.revoke_title", Nav: "api_keys", Data: revokeData{Key: key}}, true,
			map[string][]string{English: {"Yes, revoke", "1a2b3c4d"}, Portuguese: {"Sim, revogar"}}},
		{Page{Template: "users", Title: "users.title", Nav: "users", Data: usersData{Users: []merchant.DashboardUser{*owner}}}, true,
			map[string][]string{English: {"owner@loja.example.com", "Invite user", ">Email<", ">Role<", ">Owner<", ">Viewer<", "Send invite"},
				Portuguese: {"Convidar usuário", "Enviar convite", "Proprietário"}}},
		{Page{Template: "password", Title: "password.title", Nav: "password", Data: passwordData{}}, true,
			map[string][]string{English: {"Current password", "New password", "Change password"}, Portuguese: {"Senha atual", "Alterar senha"}}},
		{Page{Template: "accept_invite", Title: "invite.title", Data: inviteData{Token: "tok", Email: "new@loja.example.com"}}, false,
			map[string][]string{English: {"Accept invitation", "new@loja.example.com", "/dashboard/invite/tok"}, Portuguese: {"Aceitar convite"}}},
		// Integrations and webhooks.
		{Page{Template: "integrations", Title: "title.integrations", Nav: "integrations", Data: integrationsDataForRender(at, mid, delivery)}, true,
			map[string][]string{English: {">Account token<", ">User token<", ">API URL<", ">Webhook secret<", ">User secret key<", ">Store alias<", ">Save<",
				`data-testid="webhook-url-guru" id="webhook-url-guru">https://ingest.example.com/api/webhooks/guru/` + mid.String() + "<",
				"Configured on 11/25/2026 2:03 PM", "Not set.", `type="password"`, "Accepted", "/dashboard/integrations/deliveries/" + delivery.ID.String(),
				`role="alert"`, "The API URL must be an http or https URL.", "still need: User token.", "still need: User token, User secret key, Store alias.",
				"Changing it clears the saved user token unless you enter it again."},
				Portuguese: {"Token da conta", "Salvar", "Configurado em 25/11/2026 14:03", "Aceita", "Últimas entregas", "ainda precisam de: Token de usuário."}}},
		{Page{Template: "integration_delivery", Title: "integrations.delivery_title", Nav: "integrations",
			Data: deliveryData{Delivery: delivery, Body: "{\n  \"api_token\": \"[redacted]\"\n}"}}, true,
			map[string][]string{English: {"Inbound delivery", "[redacted]", "Accepted", "200"}, Portuguese: {"Entrega recebida", "Aceita"}}},
		{Page{Template: "webhooks", Title: "title.webhooks", Nav: "webhooks", Data: webhooksData{Endpoints: []endpointView{failing, gone},
			Events: eventChoices([]string{"member.created"}), URL: "http://x", Alert: "webhooks.bad_url"}}, true,
			map[string][]string{English: {"https://hooks.example.com/a", "/dashboard/webhooks/" + failing.ID.String(), "failing since 11/25/2026 2:03 PM",
				"Disabled: the endpoint answered 410 Gone", `value="member.created" checked`, `value="wallet.debited">`, "Create endpoint", `role="alert"`},
				Portuguese: {"falhando desde 25/11/2026 14:03", "Desativado: o endpoint respondeu 410 Gone", "Criar endpoint"}}},
		{Page{Template: "webhook", Title: "webhooks.endpoint_title", Nav: "webhooks", Data: webhookDataForRender(failing, at)}, true,
			map[string][]string{English: {`data-testid="webhook-secret" id="webhook-secret">whsec_the-new-secret<`, "whsec_****abcd", "Send test event",
				"Rotate secret", ">Disable<", ">Delete<", "Save changes", "Delivery log", "Succeeded", "webhook.test", "11/25/2026 2:03 PM"},
				Portuguese: {"Enviar evento de teste", "Trocar segredo", "Registro de entregas"}}},
		{Page{Template: "webhook_delete", Title: "webhooks.delete_title", Nav: "webhooks", Data: webhookData{Endpoint: failing}}, true,
			map[string][]string{English: {"Yes, delete", "https://hooks.example.com/a"}, Portuguese: {"Sim, excluir"}}},
		{Page{Template: "webhook_log", Title: "webhooks.log_title", Nav: "webhooks", Data: webhookLogData{Endpoint: failing,
			Attempt: webhook.Attempt{ID: uuid.New(), EventType: "member.created", Status: webhook.StatusFailed, Attempt: 2, ResponseStatus: 500,
				ResponseBody: "boom", DurationMS: 12, CreatedAt: at}, PublicID: "whl_x", Request: `{"id": "evt_1"}`}}, true,
			map[string][]string{English: {"Retry", ">Failed<", "500", "boom", "evt_1", "whl_x"}, Portuguese: {"Reenviar", "Com falha"}}},
		// Referrals and campaigns.
		{Page{Template: "referrals", Title: "referrals.review_queue", Nav: "referrals", Data: referralsDataForRender(at)}, true,
			map[string][]string{English: {"<h1>Review queue</h1>", ">All referrals<", ">Review queue<", "10,000+", "Ana Souza", "ord-42",
				"x@mailinator.com", "R$97.90", "R$9.79", ">Pending<", "disposable e-mail", ">Member<", ">From<", ">To<", "Export CSV"},
				Portuguese: {"Fila de revisão", "R$ 97,90", "R$ 9,79", "e-mail descartável", "Pendente", "Exportar CSV"}}},
		{Page{Template: "referral", Title: "referral.title", Nav: "referrals", Data: referralData{Referral: referralForRender(at),
			Alert: "referral.invalid_state", Detail: "only a pending referral can be approved"}}, true,
			map[string][]string{English: {"ord-42", "Ana Souza", "x@mailinator.com", "R$97.90", "R$9.79", "R$1.20", "12/02/2026 2:03 PM",
				"disposable e-mail", "checked", ">Approve<", ">Reject<", `role="alert"`, "no longer allows"},
				Portuguese: {"Aprovar", "Rejeitar", "Fim da garantia", "02/12/2026 14:03", "R$ 1,20"}}},
		{Page{Template: "referral_reject", Title: "referral.reject_title", Nav: "referrals", Data: rejectData{Referral: referralForRender(at),
			Reasons: referral.RejectionReasons, Reason: "fraud", Alert: "referral.bad_reason"}}, true,
			map[string][]string{English: {">Reason<", `value="fraud" selected`, `value="test_order"`, ">Notes<", ">Confirm<", `role="alert"`},
				Portuguese: {"Motivo", "Confirmar", "Fraude"}}},
		{Page{Template: "campaigns", Title: "campaigns.title", Nav: "campaigns", Data: campaignsDataForRender(at)}, true,
			map[string][]string{English: {"New campaign", "Amigos", ">Default<", "R$15.00", "12%", "R$1,234.56", ">Inactive<"},
				Portuguese: {"Nova campanha", "Padrão", "R$ 15,00", "R$ 1.234,56"}}},
		{Page{Template: "campaign_new", Title: "campaigns.new", Nav: "campaigns", Data: campaignData{Form: campaignForm{RewardType: "fixed",
			RewardValue: "15,0x"}, Alert: "campaigns.invalid", Detail: "reward_value: must be an amount in reais, like 15,00"}}, true,
			map[string][]string{English: {">Name<", ">Reward type<", ">Percentage<", `value="fixed" selected>Fixed amount<`, ">Reward value<",
				">Warranty days<", "Create campaign", `role="alert"`, `value="15,0x"`},
				Portuguese: {"Tipo de recompensa", "Valor fixo", "Criar campanha"}}},
		{Page{Template: "campaign", Title: "campaigns.edit", Nav: "campaigns", Data: campaignDataForRender(at)}, true,
			map[string][]string{English: {"Amigos", "Make default", `name="reward_type" disabled`, "cannot be changed", `value="15.00"`,
				">Max referrals per hour<", `value="5"`, ">Max reward per month (R$)<", `value="500.00"`, `name="block_disposable_emails" checked`,
				`value="percentage" selected>Percentage<`, `value="10"`, "Commission tiers", `value="Silver"`, `value="15.5"`,
				`aria-label="Tier name 3"`, `role="alert"`, "Save tiers"},
				Portuguese: {"Tornar padrão", "Faixas de comissão", "Máximo de indicações por hora"}}},
		// Members and Creators.
		{Page{Template: "members", Title: "members.title", Nav: "members", Data: membersData{Members: []member.Listed{listed},
			Tabs: []Tab{{Label: "members.tab_all", Count: report.TabCap}}, Campaigns: []campaign.Campaign{camp}, Query: "ana"}}, true,
			map[string][]string{English: {`<a href="/dashboard/members/` + mem.ID.String() + `">Ana Souza</a>`, "New member", "R$1,234.56", "DEMO-ANA-X2Y3", "10,000+", "Black Friday", "Export CSV"},
				Portuguese: {"Novo membro", "R$ 1.234,56", "Ativo", "Todos", "10.000+"}}},
		{Page{Template: "member", Title: "members.member_title", Nav: "members", Data: memberData{Member: &mem, MemberID: "mem_x",
			Wallet:       ledger.Wallet{Pending: 979, Available: 123456, TotalEarned: 200000, TotalRedeemed: 500, Cancelled: 1},
			Transactions: []ledger.Transaction{{Type: "credit", Status: "pending", Amount: 979, CreatedAt: at}},
			Entries:      []ledger.Entry{{Type: "credit", Amount: 979, PendingDelta: 979, PendingAfter: 979, CreatedAt: at}}, EntriesTotal: 1,
			Referrals:   []referral.Listed{{Referral: referral.Referral{Status: "pending", OrderValue: 9790, RewardAmount: 979, RefereeEmail: "joao@example.com", CreatedAt: at}}},
			Redemptions: []redemption.Listed{{Redemption: redemption.Redemption{Type: "store_credit", Status: "completed", Amount: 500, CreatedAt: at}}},
			Creator:     &prof, Coupons: []couponRow{{Platform: "guru", CouponState: redemption.CouponState{Status: "failed", Error: "401 from Guru"}}},
			Alert: "members.redeem_insufficient", Type: "store_credit"}}, true,
			map[string][]string{English: {"<h1>Ana Souza</h1>", `data-testid="wallet-pending">R$9.79<`, `data-testid="wallet-available">R$1,234.56<`,
				`data-testid="wallet-total-earned">R$2,000.00<`, `data-testid="wallet-total-redeemed">R$5.00<`, `data-testid="wallet-cancelled">R$0.01<`,
				"Provision coupon", "401 from Guru", "Ana Creates", "Redeem", "Store credit", "Subscription ID", `role="alert"`, "Block", "joao@example.com",
				">Erase personal data<"},
				Portuguese: {`data-testid="wallet-pending">R$ 9,79<`, `data-testid="wallet-available">R$ 1.234,56<`, "Resgatar", "Criar cupom", "Bloquear", "Falhou"}}},
		{Page{Template: "member", Title: "members.member_title", Nav: "members", Data: memberData{Member: member.Erase(&mem, at), MemberID: "mem_x"}}, true,
			map[string][]string{English: {"<h1>(erased)</h1>", `data-testid="member-erased">Personal data erased on 11/25/2026 2:03 PM`, "Block"},
				Portuguese: {"<h1>(apagado)</h1>", "Dados pessoais apagados em 25/11/2026 14:03"}}},
		{Page{Template: "member_erase", Title: "members.erase_title", Nav: "members", Data: &mem}, true,
			map[string][]string{English: {"<h1>Erase personal data: Ana Souza</h1>", "e-mail, name, external id, document, phone and metadata are replaced",
				"stay as they are", "This cannot be undone.", ">Yes, erase<", ">Cancel<", `method="post" action="/dashboard/members/` + mem.ID.String() + `/erase"`},
				Portuguese: {"Apagar dados pessoais: Ana Souza", "Isto não pode ser desfeito.", ">Sim, apagar<", ">Cancelar<"}}},
		{Page{Template: "member_ledger", Title: "members.ledger", Nav: "members", Data: memberLedgerData{Member: &mem,
			Entries: []ledger.Entry{{Type: "release", PendingDelta: -979, AvailableDelta: 979, AvailableAfter: 979, CreatedAt: at}}}}, true,
			map[string][]string{English: {"Ledger entries: Ana Souza", "Release", "-R$9.79", "Back to Ana Souza"}, Portuguese: {"Liberação", "-R$ 9,79"}}},
		{Page{Template: "member_form", Title: "members.new_title", Nav: "members", Data: memberFormData{Campaigns: []campaign.Campaign{camp}, Alert: "members.exists"}}, true,
			map[string][]string{English: {"New member", ">Name<", ">Email<", ">CPF/CNPJ<", ">Campaign<", "Black Friday", "Create member", `role="alert"`},
				Portuguese: {"Novo membro", "Criar membro"}}},
		{Page{Template: "creators", Title: "creators.title", Nav: "creators", Data: creatorsData{Creators: []creatorRow{{
			Listed: creator.Listed{Profile: prof, MemberName: "Ana Souza", MonthSales: 3}, Tier: creator.Tier{Name: "Silver", CommissionBP: 1500}, HasTier: true}}}}, true,
			map[string][]string{English: {"Ana Creates", "Ana Souza", "@ana.creates", "Silver (15%)", "New creator", "Sales this month"},
				Portuguese: {"Criadores", "Vendas no mês"}}},
		{Page{Template: "creator", Title: "creators.creator_title", Nav: "creators", Data: creatorData{Profile: &prof, Member: &mem, Standing: &creator.Standing{
			Tiers: creator.Tiers{{Name: "Bronze", CommissionBP: 1000}, {Name: "Silver", MinSales: 3, CommissionBP: 1500}}, Tier: creator.Tier{Name: "Bronze", CommissionBP: 1000},
			HasTier: true, Next: creator.Tier{Name: "Silver"}, ToNext: 2, HasNext: true, Figures: creator.Figures{MonthSales: 1}},
			Sales: []sale{{Referral: referral.Referral{Status: "approved", OrderValue: 9790, CreatedAt: at}, MaskedEmail: "j***@example.com"}}}}, true,
			map[string][]string{English: {`data-testid="creator-token">tok-123<`, "Copy", "Rotate token", "Bronze (10%)", "j***@example.com", "R$97.90", "Edit tiers on the campaign", "2 sales to go"},
				Portuguese: {"Trocar token", "R$ 97,90", "Copiar", "2 vendas para chegar"}}},
		{Page{Template: "creator_form", Title: "creators.new_title", Nav: "creators", Data: creatorFormData{Alert: "creators.no_member"}}, true,
			map[string][]string{English: {"Member email", "Display name", ">Niche<", ">Instagram<", "Save creator", "No member has this email."},
				Portuguese: {"E-mail do membro", "Salvar criador"}}},
		{Page{Template: "creator_rotate", Title: "creators.rotate_title", Nav: "creators", Data: rotateData{Profile: &prof, Member: &mem}}, true,
			map[string][]string{English: {"Yes, rotate", "Ana Creates"}, Portuguese: {"Sim, trocar"}}},
		{Page{Template: "error", Title: "error.not_found.title", Status: http.StatusNotFound, Data: errorData{Message: "error.not_found"}}, true,
			map[string][]string{English: {"Not found", `role="alert"`}, Portuguese: {"Não encontrado"}}},
	}
	pages = append(pages, overviewAndRedemptionPages(t, at)...)
	pages = append(pages, accessPages(at, owner)...)
	pages = append(pages, activityPages(at)...)
	covered := map[string]bool{}
	for _, p := range pages {
		covered[p.page.Template] = true
		for lang, texts := range p.want {
			c := &Ctx{Lang: lang, Loc: defaultZone}
			if p.user {
				c.User, c.Merchant = owner, &merchant.Merchant{ID: mid, Name: "Loja"}
			}
			w := httptest.NewRecorder()
			d.sessions.LoadAndSave(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				d.render(w, r, c, p.page)
			})).ServeHTTP(w, httptest.NewRequest("GET", "/dashboard/x", nil))
			body := w.Body.String()
			want := p.page.Status
			if want == 0 {
				want = http.StatusOK
			}
			if w.Code != want {
				t.Errorf("%s (%s): status %d, want %d: %s", p.page.Template, lang, w.Code, want, body)
			}
			for _, s := range texts {
				if !strings.Contains(body, s) {
					t.Errorf("%s (%s): %q missing from the page", p.page.Template, lang, s)
				}
			}
			if p.user && !strings.Contains(body, "<nav") {
				t.Errorf("%s (%s): no navigation", p.page.Template, lang)
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
				t.Errorf("%s (%s): inline script or style, which the CSP forbids", p.page.Template, lang)
			}
		}
	}
	for name := range d.views.Pages {
		if !covered[name] {
			t.Errorf("templates/%s.html has no render test here", name)
		}
	}
}
