package dashboard

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/webhook"
)

// serviceSentences are sentences the service keeps and the pages show:
// those the adapters write, taken from the adapters themselves, and the
// others as their producers format them.
func serviceSentences(t *testing.T) []string {
	t.Helper()
	var out []string
	handle := func(platform string, body string, header http.Header, secret string) {
		t.Helper()
		a, ok := inbound.Lookup(platform)
		if !ok {
			t.Fatalf("no adapter %s", platform)
		}
		o, err := a.Handle([]byte(body), header, secret)
		switch {
		case err != nil:
			out = append(out, apperr.MessageOf(err))
		case o.Ignored:
			out = append(out, o.Reason)
		default:
			t.Fatalf("%s %s: neither refused nor ignored", platform, body)
		}
	}
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	handle("guru", `{}`, nil, "")
	handle("guru", `{}`, nil, "tok")
	handle("guru", `{"api_token":"other"}`, nil, "tok")
	handle("guru", `{"api_token":"tok","webhook_type":"subscription"}`, nil, "tok")
	handle("guru", `{"api_token":"tok","webhook_type":"transaction","status":"waiting_payment"}`, nil, "tok")
	handle("hotmart", `{}`, nil, "")
	handle("hotmart", `{}`, nil, "tok")
	handle("hotmart", `{}`, h(inbound.HotmartTokenHeader, "other"), "tok")
	handle("kiwify", `{}`, nil, "")
	handle("kiwify", `{}`, nil, "tok")
	handle("kiwify", `{}`, h(inbound.QueryCredentialHeader, "0000"), "tok")
	handle("yampi", `{}`, nil, "")
	handle("yampi", `{}`, nil, "tok")
	handle("yampi", `{}`, h(inbound.YampiSignatureHeader, "AAAA"), "tok")
	handle("eduzz", `{}`, nil, "")
	handle("eduzz", `{}`, nil, "tok")
	handle("eduzz", `{}`, h(inbound.EduzzSignatureHeader, "00"), "tok")
	ctx := context.Background()
	for _, err := range []error{netguard.ErrNotPublic, netguard.ErrNotHTTPS, context.DeadlineExceeded, syscall.ECONNREFUSED,
		syscall.ECONNRESET, fmt.Errorf("dial: %w", syscall.EHOSTUNREACH)} {
		out = append(out, netguard.Describe(ctx, err), "guru GET subscription: "+netguard.Describe(ctx, err))
	}
	return append(out,
		"already received", `no member has coupon "LOJ-ANA-7KQ2"`, "no member has coupon (none)", referral.ErasedNote,
		ingest.UnauthenticatedMessage, "request body over 1 MiB", "cannot read request body", "temporarily unavailable, retry later",
		"too many failed authentications from this address for this merchant, retry later",
		"body is not a JSON object", "body does not have the expected shape", "field payment.total has the wrong type (string)",
		"id is required", "id: must be at most 255 characters (it is the order's identity)",
		"data.purchase.approved_date is not a time in milliseconds since the epoch", "confirmed_at is not a time in the format 2006-01-02 15:04:05",
		"payment.total: amount \"1e3\" uses exponent notation", "payment.total: amount \"abc\" is not a decimal number of reais",
		"Commissions.charge_amount must be a non-negative integer number of centavos", "Commissions.charge_amount is too large",
		"the amount is negative", `no pull maps sales of "eduzz"`,
		`hotmart event "PURCHASE_BILLET_PRINTED" changes nothing until it is refunded or charged back`,
		`yampi order.status.updated with status alias "waiting" is not handled`, `kiwify order_status "waiting_payment" is not handled`,
		`kiwify webhook_event_type "pix_created" is not handled`, `yampi event "cart.reminder" is not handled`,
		`eduzz event "myeduzz.invoice_canceled" of an invoice never paid changes nothing`, `eduzz event "myeduzz.contract_created" is not handled`,
		// pkg/platform, as coupons, redemptions and reconciliations record them.
		`guru POST coupons answered 422: {"message":"code already taken"}`, "yampi GET promocodes answered 500",
		"guru GET subscription: no answer within 10s (gave up after 3 attempts)", "kiwify GET sales answered 302 (redirects are not followed)",
		"yampi POST promocodes answered 200 without the coupon's id: {}", "hotmart token endpoint answered without an access_token",
		"hotmart GET sales history answered 200 with an unexpected body: <html>", "guru GET transactions answered more than 8388608 bytes",
		"yampi GET orders: more than 1000 pages", "the guru user token is not set", "the yampi store alias is not set in the merchant's settings",
		"the hotmart auth url is not an http(s) URL without query", "the kiwify integration is not configured", "guru integration is not configured",
		"the hotmart integration has no API credentials to pull its sales with", redemption.NoRefereeDiscount, redemption.NotAsked.Error,
		"no coupon to switch off", "the member has no referral code", "the referee discount is not a valid percentage or fixed amount",
		"the redemption has no guru subscription id", "guru POST coupons: cannot build the request URL",
		reconcile.StaleError, reconcile.ErrNotRunning.Error(),
		// pkg/webhook's attempts.
		webhook.NoPublicAddress, "refused: only https URLs are allowed", "timeout: no complete answer within 10s",
		"connection refused by hooks.example.com", "connection reset by hooks.example.com", "TLS: certificate is not valid for hooks.example.com",
		"timeout: could not connect to hooks.example.com within 5s", "redirects are not followed: 302", "status 500 Internal Server Error",
		webhook.DisabledGone,
	)
}

// TestEveryServiceSentenceInPortuguese: every sentence the service keeps
// and a page shows has its phrase, which words it in Portuguese with its
// parts, and in English exactly as stored (the catalogue's English is the
// shape the phrase reads, so the two cannot drift apart).
func TestEveryServiceSentenceInPortuguese(t *testing.T) {
	t.Parallel()
	same := func(_ byte, s string) (string, bool) { return html.EscapeString(s), true }
	for _, s := range serviceSentences(t) {
		if got, ok := sayWith(English, s, same); !ok || got != html.EscapeString(s) {
			t.Errorf("%q: no phrase, or its English text reads %q", s, got)
			continue
		}
		pt := string(say(Portuguese, s))
		if strings.Contains(pt, `lang="en"`) || strings.Contains(pt, "{") && !strings.Contains(s, "{") || pt == html.EscapeString(s) {
			t.Errorf("%q in Portuguese: %s", s, pt)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"api_token does not match the merchant's guru account token", "api_token não confere com o campo “Token da conta” da Guru desta loja"},
		{"guru GET subscription: no answer within 10s (gave up after 3 attempts)", "Guru GET subscription: sem resposta em 10s (desistiu depois de 3 tentativas)"},
		{`no member has coupon "<b>"`, "nenhum membro tem o cupom “&lt;b&gt;”"},
		{"a Go error: EOF", `<span lang="en">a Go error: EOF</span>`},
	} {
		if got := string(say(Portuguese, tc.in)); got != tc.want {
			t.Errorf("say(pt-BR, %q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := string(say(English, "api_token <is> missing")); got != `api_token &lt;is&gt; missing` {
		t.Errorf("say(en, …) = %q, want the sentence as stored", got)
	}
}
