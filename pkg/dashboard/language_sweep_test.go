package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// apiEnglish are the API's own English refusals, as its validation sites
// word them (apperr.Invalidf and apperr.Errorf in campaign, member,
// creator, webhook, bounds, report, redemption, ledger, referral,
// postgres and the dashboard's form readers): none may reach a page in
// Portuguese.
var apiEnglish = []string{
	"is required", "must not be empty", "must be at most", "is not a valid email address",
	"must be active, inactive or blocked", "must be percentage or fixed", "must be percentage, fixed or null",
	"a percentage must be a whole percent from 1 to 100", "a fixed reward must be from 1 to", "a fixed discount must be from 1 to",
	"must be from 0 to", "must be from 1 to", "or null for no limit", "or null for no cap", "needs a referee_discount_type",
	"must be an amount in reais", "must be a whole percent", "must be a whole number", "is required, an integer from 0 to",
	"must be a number from 0 to 100 with at most 2 decimals", "must have at most 2 decimals", "at most 50 tiers",
	"is used twice", "must be greater than the previous tier", "letters, digits, '.' or '_'", "must be JSON",
	"bytes once encoded as JSON", "must be a JSON object", "must be an absolute https URL with a host", "must use https",
	"must name at least one event", "unknown event; use one of", "must be an absolute URL with a host", "must be an https URL",
	"must be a URL without credentials", "no such campaign", "no such action", "must be pending, approved, rejected or cancelled",
	"must be true or false", "must be a member id", "must be a date", "a date as YYYY-MM-DD", "pending, completed or failed",
	"between 1 and 366 days", "at most 366 days", "a zone and a start before the end", "one of referrals, referred_revenue",
	"7, 30, 90 or custom", "must be one of", "is required for a subscription discount",
	"the amount exceeds the available balance", "the amount is below the campaign's minimum redemption",
	"the platform refused the redemption", "is not configured for redemptions", "the ledger did not answer in time",
	"this Idempotency-Key was used for another redemption", "only a pending referral can be approved",
	"only a pending or approved referral can be rejected", "the available balance no longer covers the reward",
	"a member with this email already exists", "the member's personal data was erased", "validation_error",
	// The service's sentences its stores keep (phrases.go): a delivery's
	// error or reason, a redemption's failure.
	"is configured for this merchant", "no member has coupon", "is not handled", "does not match the", "answered 422",
	"member erased: nothing attributed", "(gave up after",
}

// keptSentences are sentences of the service that the sweep's merchant's
// deliveries and redemption keep.
var keptSentences = []string{"no guru account token is configured for this merchant", `no member has coupon "LOJ-X-2222"`,
	`guru transaction status "waiting_payment" is not handled`, "api_token does not match the merchant's guru account token",
	"member erased: nothing attributed", `guru POST coupons answered 422: {"message":"taken"} (gave up after 3 attempts)`}

// request is one page of the sweep: a GET, or a POST of a form that the
// dashboard refuses (it shows the form again, or an error page).
type request struct {
	method, path string
	form         url.Values
}

// TestEveryPageInPortuguese signs in as a merchant with history (members,
// referrals, redemptions, creators, deliveries, webhooks), opens every
// page in Portuguese and submits every form with each invalid input its
// rules refuse, and fails when a page shows one of the API's English
// refusals; in English the refusals are shown in English.
func TestEveryPageInPortuguese(t *testing.T) {
	e := newEnv(t)
	seeded := testenv.MustSeedScale(t, e.deps.Pool, testenv.Scale{Members: 1300, Referrals: 2600, Days: 40, Now: e.clock.Now(), Box: e.deps.Box})
	merchantID := seeded.Merchant.ID
	one := func(query string) string {
		t.Helper()
		var id uuid.UUID
		if err := e.deps.Pool.QueryRow(context.Background(), query, merchantID).Scan(&id); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return id.String()
	}
	mem, camp := seeded.Members[1].String(), seeded.Campaign.ID.String()
	ref := one(`SELECT id FROM referrals WHERE merchant_id = $1 AND status = 'pending' LIMIT 1`)
	creator := one(`SELECT member_id FROM creator_profiles WHERE merchant_id = $1 LIMIT 1`)
	red := one(`SELECT id FROM redemptions WHERE merchant_id = $1 LIMIT 1`)
	hook := one(`SELECT id FROM webhook_endpoints WHERE merchant_id = $1 LIMIT 1`)
	delivery := one(`SELECT id FROM inbound_deliveries WHERE merchant_id = $1 LIMIT 1`)
	// The newest deliveries and a failed redemption, in the service's words.
	var kept []inbound.Delivery
	for i, s := range keptSentences {
		kept = append(kept, inbound.Delivery{ID: uuid.New(), MerchantID: merchantID, Provider: "guru", Outcome: inbound.DeliveryUnprocessable,
			HTTPStatus: 422, Error: s, ReceivedAt: e.clock.Now().Add(time.Duration(i) * time.Second)})
	}
	if err := postgres.NewDeliveryStore(e.deps.Pool).RecordDeliveries(context.Background(), kept); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE inbound_deliveries SET error = $3 WHERE merchant_id = $1 AND id = $2`,
		`UPDATE redemptions SET status = 'failed', failure_reason = $3 WHERE merchant_id = $1 AND id = $2`} {
		id := delivery
		if strings.HasPrefix(q, "UPDATE redemptions") {
			id = red
		}
		if _, err := e.deps.Pool.Exec(context.Background(), q, merchantID, uuid.MustParse(id), keptSentences[len(keptSentences)-1]); err != nil {
			t.Fatal(err)
		}
	}

	c := e.client()
	e.signIn(c, testenv.DashboardEmail, "pw")
	long := strings.Repeat("x", 3000)
	get := func(path string) request { return request{http.MethodGet, path, nil} }
	post := func(path string, kv ...string) request {
		f := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return request{http.MethodPost, path, f}
	}
	campaignForm := func(kv ...string) request {
		base := []string{"name", "Nova", "reward_type", "percentage", "reward_value", "10", "warranty_days", "7", "min_redemption", "0"}
		return post("/dashboard/campaigns", append(base, kv...)...)
	}
	editCampaign := func(kv ...string) request {
		base := []string{"name", "Escala", "reward_value", "10", "warranty_days", "7", "min_redemption", "0"}
		return post("/dashboard/campaigns/"+camp, append(base, kv...)...)
	}
	tiers := "/dashboard/campaigns/" + camp + "/tiers"
	pages := []request{
		get("/dashboard"), get("/dashboard?range=7&metric=referred_revenue"), get("/dashboard?range=90&metric=redeemed"),
		get("/dashboard/members"), get("/dashboard/members?status=blocked"), get("/dashboard/members/new"),
		get("/dashboard/members/" + mem), get("/dashboard/members/" + mem + "/edit"), get("/dashboard/members/" + mem + "/ledger"),
		get("/dashboard/members/" + mem + "/erase"),
		get("/dashboard/referrals"), get("/dashboard/referrals?review_required=true"), get("/dashboard/referrals/" + ref),
		get("/dashboard/referrals/" + ref + "/reject"),
		get("/dashboard/campaigns"), get("/dashboard/campaigns/new"), get("/dashboard/campaigns/" + camp),
		get("/dashboard/creators"), get("/dashboard/creators/new"), get("/dashboard/creators/" + creator),
		get("/dashboard/creators/" + creator + "/edit"), get("/dashboard/creators/" + creator + "/rotate"),
		get("/dashboard/redemptions"), get("/dashboard/redemptions/" + red),
		get("/dashboard/integrations"), get("/dashboard/integrations/deliveries/" + delivery),
		get("/dashboard/webhooks"), get("/dashboard/webhooks/" + hook), get("/dashboard/webhooks/" + hook + "/delete"),
		get("/dashboard/settings/api-keys"), get("/dashboard/settings/users"), get("/dashboard/settings/activity"),
		get("/dashboard/settings/password"),

		// The filters' refusals (a 400 page).
		get("/dashboard?range=5"), get("/dashboard?metric=sales"), get("/dashboard?range=custom&from=x&to=2026-11-20"),
		get("/dashboard?range=custom&from=2020-01-01&to=2026-11-20"),
		get("/dashboard/members?status=gone"), get("/dashboard/members?q=" + strings.Repeat("a", 300)),
		get("/dashboard/members?campaign=nope"),
		get("/dashboard/referrals?status=gone"), get("/dashboard/referrals?review_required=maybe"),
		get("/dashboard/referrals?member=nope"), get("/dashboard/referrals?from=yesterday"),
		get("/dashboard/redemptions?status=gone"), get("/dashboard/redemptions?from=x"), get("/dashboard/redemptions?to=x"),
		get("/dashboard/settings/activity?action=nope"),

		// Members.
		post("/dashboard/members", "name", "Ana", "email", ""), post("/dashboard/members", "name", "Ana", "email", "not an email"),
		post("/dashboard/members", "name", " ", "email", "ana@example.com"),
		post("/dashboard/members", "name", long, "email", "ana@example.com"),
		post("/dashboard/members", "name", "Ana", "email", strings.Repeat("a", 250)+"@example.com"),
		post("/dashboard/members", "name", "Ana", "email", "ana@example.com", "external_id", long),
		post("/dashboard/members", "name", "Ana", "email", "ana@example.com", "document", long),
		post("/dashboard/members/"+mem, "name", ""), post("/dashboard/members/"+mem, "name", long),
		post("/dashboard/members/"+mem, "name", "Ana", "external_id", long),
		post("/dashboard/members/"+mem+"/redeem", "amount", "abc", "type", "store_credit"),
		post("/dashboard/members/"+mem+"/redeem", "amount", "100000,00", "type", "store_credit"),
		post("/dashboard/members/"+mem+"/redeem", "amount", "1,00", "type", "subscription_discount"),
		post("/dashboard/members/"+mem+"/redeem", "amount", "1,00", "type", "nope"),

		// Campaigns and tiers.
		campaignForm("name", ""), campaignForm("name", long), campaignForm("reward_type", "both"),
		campaignForm("reward_value", "abc"), campaignForm("reward_value", "0"), campaignForm("reward_value", "101"),
		campaignForm("reward_type", "fixed", "reward_value", "abc"), campaignForm("reward_type", "fixed", "reward_value", "99999999,00"),
		campaignForm("warranty_days", "x"), campaignForm("warranty_days", "100000"), campaignForm("min_redemption", "x"),
		campaignForm("min_redemption", "99999999999,00"),
		editCampaign("name", ""), editCampaign("reward_value", "x"), editCampaign("warranty_days", "-1"),
		editCampaign("max_referrals_per_hour", "x"), editCampaign("max_referrals_per_hour", "0"),
		editCampaign("max_creator_referrals_per_hour", "x"), editCampaign("max_creator_referrals_per_hour", "0"),
		editCampaign("max_reward_per_month", "x"), editCampaign("max_reward_per_month", "99999999999,00"),
		editCampaign("referee_discount_type", "both", "referee_discount_value", "1"),
		editCampaign("referee_discount_type", "percentage", "referee_discount_value", "500"),
		editCampaign("referee_discount_type", "percentage", "referee_discount_value", "x"),
		editCampaign("referee_discount_type", "fixed", "referee_discount_value", "99999999,00"),
		editCampaign("referee_discount_type", "fixed", "referee_discount_value", "x"),
		post(tiers, "name_0", "Bronze", "min_sales_0", "x", "percent_0", "10"),
		post(tiers, "name_0", "Bronze", "min_sales_0", "0", "percent_0", "abc"),
		post(tiers, "name_0", "Bronze", "min_sales_0", "0", "percent_0", "150"),
		post(tiers, "name_0", "Bronze", "min_sales_0", "0", "percent_0", "10,555"),
		post(tiers, "name_0", "", "min_sales_0", "0", "percent_0", "10"),
		post(tiers, "name_0", long, "min_sales_0", "0", "percent_0", "10"),
		post(tiers, "name_0", "Bronze", "min_sales_0", "0", "percent_0", "10", "name_1", "Bronze", "min_sales_1", "5", "percent_1", "12"),
		post(tiers, "name_0", "Bronze", "min_sales_0", "5", "percent_0", "10", "name_1", "Prata", "min_sales_1", "5", "percent_1", "12"),

		// Creators.
		post("/dashboard/creators", "member_email", "nobody@example.com", "display_name", "Ana"),
		post("/dashboard/creators/"+creator, "display_name", ""), post("/dashboard/creators/"+creator, "display_name", long),
		post("/dashboard/creators/"+creator, "display_name", "Ana", "niche", long),
		post("/dashboard/creators/"+creator, "display_name", "Ana", "instagram", "not valid!"),

		// Referrals: a reason not among the reasons, notes too long.
		post("/dashboard/referrals/"+ref+"/reject", "reason", "because"),
		post("/dashboard/referrals/"+ref+"/reject", "reason", "other", "notes", long),
		post("/dashboard/referrals/"+ref+"/approve", "notes", long),

		// Webhooks and integrations.
		post("/dashboard/webhooks", "url", "", "events", "referral.created"),
		post("/dashboard/webhooks", "url", "http://hooks.example.com/x", "events", "referral.created"),
		post("/dashboard/webhooks", "url", "https://"+long, "events", "referral.created"),
		post("/dashboard/webhooks", "url", "not a url", "events", "referral.created"),
		post("/dashboard/webhooks", "url", "https://127.0.0.1/x", "events", "referral.created"),
		post("/dashboard/webhooks", "url", "https://hooks.example.com/x"),
		post("/dashboard/webhooks", "url", "https://hooks.example.com/x", "events", "nope.happened"),
		post("/dashboard/webhooks/"+hook, "url", "http://hooks.example.com/x", "events", "referral.created"),
		post("/dashboard/integrations/guru", "api_url", "http://api.example.com"),
		post("/dashboard/integrations/guru", "api_url", "https://127.0.0.1/api"),
		post("/dashboard/integrations/guru", "account_token", long),
		post("/dashboard/integrations/kiwify", "checkout_url", "http://pay.example.com/x"),
	}

	sweep := func(lang string) map[string]string {
		t.Helper()
		e.do(c, http.MethodPost, "/dashboard/language", url.Values{"lang": {lang}, "next": {"/dashboard"}})
		bodies := map[string]string{}
		for _, p := range pages {
			r := e.do(c, p.method, p.path, p.form)
			name := p.method + " " + p.path + " " + p.form.Encode()
			if r.StatusCode >= 500 || (p.method == http.MethodGet && r.StatusCode != http.StatusOK && r.StatusCode != http.StatusBadRequest) {
				t.Errorf("%s %s: %d", lang, name, r.StatusCode)
			}
			bodies[name] = html.UnescapeString(r.body)
		}
		return bodies
	}
	for name, body := range sweep("pt-BR") {
		if !strings.Contains(body, `<html lang="pt-BR">`) {
			t.Errorf("%s: not in Portuguese", name)
			continue
		}
		for _, s := range apiEnglish {
			if strings.Contains(body, s) {
				t.Errorf("pt-BR %s shows the API's English %q", name, s)
			}
		}
	}
	// The refusals, read as a person would, in both languages.
	for _, tc := range []struct {
		req    request
		pt, en string
	}{
		{post("/dashboard/members", "name", "Ana", "email", "not an email"),
			"E-mail: informe um endereço de e-mail válido.", "Email: enter a valid e-mail address."},
		{campaignForm("reward_type", "fixed", "reward_value", "99999999,00"),
			"Valor da recompensa: uma recompensa fixa é de no máximo R$ 10.000.000,00.", "Reward value: a fixed reward is at most R$10,000,000.00."},
		{post(tiers, "name_0", "Bronze", "min_sales_0", "0", "percent_0", "10", "name_1", "Bronze", "min_sales_1", "5", "percent_1", "12"),
			"Nome da faixa (linha 2): o mesmo nome aparece duas vezes.", "Tier name (row 2): the same name is used twice."},
		{get("/dashboard/referrals?from=yesterday"), "De: uma data no formato dd/mm/aaaa.", "From: a date as mm/dd/yyyy."},
		// Date fields show and take the day in the page's language.
		{get("/dashboard/referrals?from=2026-11-27"), `id="filter-from" name="from" type="text" inputmode="numeric" autocomplete="off" placeholder="dd/mm/aaaa" value="27/11/2026"`,
			`id="filter-from" name="from" type="text" inputmode="numeric" autocomplete="off" placeholder="mm/dd/yyyy" value="11/27/2026"`},
		{get("/dashboard/referrals?from=27/11/2026"), `value="27/11/2026"`, "From: a date as mm/dd/yyyy."},
		{get("/dashboard/redemptions?to=11/27/2026"), "Até: uma data no formato dd/mm/aaaa.", `value="11/27/2026"`},
		{get("/dashboard/members?q=" + strings.Repeat("a", 300)), "Busca: no máximo 255 caracteres.", "Search: at most 255 characters."},
		{get("/dashboard/members"), "Todos <span class=\"count\">1.300</span>", "All <span class=\"count\">1,300</span>"},
		// The service's own sentences, as its stores keep them.
		{get("/dashboard/integrations"), "o campo “Token da conta” da Guru não está configurado para esta loja",
			"no guru account token is configured for this merchant"},
		{get("/dashboard/integrations"), "Guru: o status de transação “waiting_payment” não é tratado",
			`guru transaction status "waiting_payment" is not handled`},
		{get("/dashboard/redemptions/" + red), `Guru respondeu 422 a POST coupons: {"message":"taken"} (desistiu depois de 3 tentativas)`,
			`guru POST coupons answered 422: {"message":"taken"} (gave up after 3 attempts)`},
		{get("/dashboard/integrations/deliveries/" + delivery), "Guru respondeu 422 a POST coupons",
			`guru POST coupons answered 422: {"message":"taken"} (gave up after 3 attempts)`},
	} {
		for _, l := range []struct{ lang, want string }{{"pt-BR", tc.pt}, {"en", tc.en}} {
			e.do(c, http.MethodPost, "/dashboard/language", url.Values{"lang": {l.lang}, "next": {"/dashboard"}})
			r := e.do(c, tc.req.method, tc.req.path, tc.req.form)
			if body := html.UnescapeString(r.body); !strings.Contains(body, l.want) {
				t.Errorf("%s %s %s: no %q in %s", l.lang, tc.req.method, tc.req.path, l.want, body)
			}
		}
	}
}
