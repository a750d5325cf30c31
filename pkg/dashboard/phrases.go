package dashboard

import (
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/convida/convida/pkg/provider"
)

// The service's own sentences that its stores keep in English and pages
// show — a platform delivery's error or ignore reason, a coupon's or a
// redemption's failure, a reconciliation's error, a webhook attempt's
// error — are worded in the page's language by the phrasebook: each
// phrase matches one shape of sentence and names its text in the
// catalogue ("say.<key>"), which takes the parts the shape captured ({1},
// {2}, …). English shows the sentence as stored. A sentence no phrase
// knows (a Go error's text, a platform's own words) is shown as stored,
// marked lang="en".

// phrase is one shape of sentence. kinds has one letter per capture
// group, saying how that part is worded: 'l' as it is (an order id, a
// field of a body, a platform's answer), 'p' a platform (its name), 'f'
// a setting ("account token": its label on the integrations page), 's' a
// sentence of the phrasebook itself (without which the phrase does not
// match).
type phrase struct {
	key   string
	re    *regexp.Regexp
	kinds string
}

func phraseOf(key, pattern, kinds string) phrase {
	return phrase{key: key, re: regexp.MustCompile("^(?:" + pattern + ")$"), kinds: kinds}
}

// phrases are tried in order: a narrower shape before a wider one.
var phrases = []phrase{
	// The ingest's answers (pkg/ingest) and the ledger's note.
	phraseOf("already_received", `already received`, ""),
	phraseOf("no_coupon", `no member has coupon \(none\)`, ""),
	phraseOf("unknown_coupon", `no member has coupon "(.*)"`, "l"),
	phraseOf("member_erased", `member erased: nothing attributed`, ""),
	phraseOf("not_authenticated", `the webhook could not be authenticated`, ""),
	phraseOf("body_too_large", `request body over 1 MiB`, ""),
	phraseOf("body_unreadable", `cannot read request body`, ""),
	phraseOf("unavailable", `temporarily unavailable, retry later`, ""),
	phraseOf("auth_blocked", `too many failed authentications from this address for this merchant, retry later`, ""),

	// The platforms' webhooks (pkg/inbound): authentication.
	phraseOf("credential_not_configured", `no (\w+) (.+) is configured for this merchant`, "pf"),
	phraseOf("header_missing", `(\S+) header is missing`, "l"),
	phraseOf("query_missing", `the (\S+) query parameter is missing`, "l"),
	phraseOf("query_mismatch", `the (\S+) query parameter does not match the body`, "l"),
	phraseOf("credential_mismatch", `(\S+) does not match the merchant's (\w+) (.+)`, "lpf"),
	phraseOf("signature_mismatch", `(\S+) does not match the body`, "l"),
	// Their bodies.
	phraseOf("not_an_object", `body is not a JSON object`, ""),
	phraseOf("bad_shape", `body does not have the expected shape`, ""),
	phraseOf("wrong_type", `field (\S+) has the wrong type \((\w+)\)`, "ll"),
	phraseOf("order_id_too_long", `(\S+): must be at most (\d+) characters \(it is the order's identity\)`, "ll"),
	phraseOf("not_millis", `(\S+) is not a time in milliseconds since the epoch`, "l"),
	phraseOf("not_time", `(\S+) is not a time in the format (.+)`, "ll"),
	phraseOf("not_centavos", `(\S+) must be a non-negative integer number of centavos`, "l"),
	phraseOf("not_cents", `(\S+) is not a whole number of cents`, "l"),
	phraseOf("not_date", `(\S+) is not a date: (.*)`, "ll"),
	phraseOf("amount_exponent", `(\S+): amount (".*") uses exponent notation`, "ll"),
	phraseOf("amount_not_decimal", `(\S+): amount (".*") is not a decimal number of reais`, "ll"),
	phraseOf("too_large", `(\S+) is too large`, "l"),
	phraseOf("required", `(\S+) is required`, "l"),
	phraseOf("missing", `(\S+) is missing`, "l"),
	phraseOf("amount_negative", `the amount is negative`, ""),
	phraseOf("no_pull_maps", `no pull maps sales of "(.*)"`, "l"),
	// What they send that changes nothing.
	phraseOf("refund_pending", `(\w+) event "(.*)" changes nothing until it is refunded or charged back`, "pl"),
	phraseOf("never_paid", `(\w+) event "(.*)" of an invoice never paid changes nothing`, "pl"),
	phraseOf("status_alias_ignored", `(\w+) order\.status\.updated with status alias "(.*)" is not handled`, "pl"),
	phraseOf("transaction_status_ignored", `(\w+) transaction status "(.*)" is not handled`, "pl"),
	phraseOf("event_ignored", `(\w+) event "(.*)" is not handled`, "pl"),
	phraseOf("value_ignored", `(\w+) (\S+) "(.*)" is not handled`, "pll"),

	// The platforms' APIs (pkg/platform), as coupons, redemptions and
	// reconciliations record them.
	phraseOf("gave_up", `(.+) \(gave up after (\d+) attempts\)`, "sl"),
	phraseOf("redirect", `(.+) \(redirects are not followed\)`, "s"),
	phraseOf("answered_unexpected", `(\w+) (.+?) answered (\d{3}) with an unexpected body: (.*)`, "plll"),
	phraseOf("answered_too_much", `(\w+) (.+?) answered more than (\d+) bytes`, "pll"),
	phraseOf("answered_without_coupon", `(\w+) (.+?) answered (\d{3}) without the coupon's id: (.*)`, "plll"),
	phraseOf("no_access_token", `(\w+) token endpoint answered without an access_token`, "p"),
	phraseOf("answered_saying", `(\w+) (.+?) answered (\d{3}): (.*)`, "plll"),
	phraseOf("answered", `(\w+) (.+?) answered (\d{3})`, "pll"),
	phraseOf("no_answer", `(\w+) (.+?): no answer within (\S+)`, "pll"),
	phraseOf("too_many_pages", `(\w+) (.+?): more than (\d+) pages`, "pll"),
	phraseOf("exchange_failed", `(\w+) ([A-Z]+ [^:]+): (.+)`, "pls"),
	phraseOf("bad_request_url", `cannot build the request URL`, ""),
	phraseOf("setting_not_url", `the (\w+) (.+) is not an http\(s\) URL without query`, "pf"),
	phraseOf("setting_not_set_here", `the (\w+) (.+) is not set in the merchant's settings`, "pf"),
	phraseOf("setting_not_set", `the (\w+) (.+) is not set`, "pf"),
	phraseOf("integration_not_configured", `the (\w+) integration is not configured`, "p"),
	phraseOf("platform_not_configured", `(\w+) integration is not configured`, "p"),
	phraseOf("no_credentials_to_pull", `the (\w+) integration has no API credentials to pull its sales with`, "p"),
	phraseOf("no_referee_discount", `the member's campaign has no referee discount \(referee_discount_type is null\)`, ""),
	phraseOf("not_provisioned", `not provisioned: POST /api/v1/members/\{id\}/provision-coupon`, ""),
	phraseOf("no_coupon_to_switch_off", `no coupon to switch off`, ""),
	phraseOf("no_referral_code", `the member has no referral code`, ""),
	phraseOf("bad_referee_discount", `the referee discount is not a valid percentage or fixed amount`, ""),
	phraseOf("no_subscription", `the redemption has no (\w+) subscription id`, "p"),
	phraseOf("run_abandoned", `abandoned: the process running it stopped`, ""),
	phraseOf("run_ended", `the run was ended meanwhile \(its heartbeat had stopped for too long\)`, ""),

	// A connection that failed (pkg/netguard, pkg/webhook).
	phraseOf("refused", `refused: (.+)`, "s"),
	phraseOf("no_public_address", `the host has no public address`, ""),
	phraseOf("not_public", `the address is not public`, ""),
	phraseOf("https_only", `only https URLs are allowed`, ""),
	phraseOf("no_complete_answer", `timeout: no complete answer in time`, ""),
	phraseOf("no_complete_answer_within", `timeout: no complete answer within (\S+)`, "l"),
	phraseOf("no_connection_in_time", `timeout: could not connect in time`, ""),
	phraseOf("no_connection_within", `timeout: could not connect to (\S+) within (\S+)`, "ll"),
	phraseOf("connection_refused", `connection refused`, ""),
	phraseOf("connection_refused_by", `connection refused by (\S+)`, "l"),
	phraseOf("connection_reset", `connection reset`, ""),
	phraseOf("connection_reset_by", `connection reset by (\S+)`, "l"),
	phraseOf("certificate_host", `TLS: the certificate is not valid for the host`, ""),
	phraseOf("certificate_for", `TLS: certificate is not valid for (\S+)`, "l"),
	phraseOf("certificate_untrusted", `TLS: the certificate is not trusted`, ""),
	phraseOf("connection_failed", `the connection failed`, ""),
	phraseOf("redirect_status", `redirects are not followed: (\d{3})`, "l"),
	phraseOf("status", `status (\d{3}) (.*)`, "ll"),
	phraseOf("gone", `endpoint answered 410 Gone`, ""),
}

// say is text worded in lang (the phrasebook), escaped for a page; in
// another language than English, a sentence no phrase knows is marked
// lang="en".
func say(lang, text string) template.HTML {
	if lang == English {
		return template.HTML(html.EscapeString(text))
	}
	if s, ok := sayWith(lang, text, partIn(lang)); ok {
		return template.HTML(s)
	}
	return template.HTML(`<span lang="en">` + html.EscapeString(text) + `</span>`)
}

// sayWith words text with the first phrase that matches it, its parts
// worded by part (which may refuse one, and the phrase with it), escaped;
// false when no phrase matches.
func sayWith(lang, text string, part func(kind byte, s string) (string, bool)) (string, bool) {
	for _, p := range phrases {
		m := p.re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		pairs := make([]string, 0, 2*len(p.kinds))
		ok := true
		for i := range p.kinds {
			s, worded := part(p.kinds[i], m[i+1])
			ok = ok && worded
			pairs = append(pairs, "{"+string(rune('1'+i))+"}", s)
		}
		if ok {
			return strings.NewReplacer(pairs...).Replace(html.EscapeString(translate(lang, "say."+p.key))), true
		}
	}
	return "", false
}

// partIn words a part of a phrase in lang, escaped.
func partIn(lang string) func(kind byte, s string) (string, bool) {
	var part func(kind byte, s string) (string, bool)
	part = func(kind byte, s string) (string, bool) {
		switch kind {
		case 'p':
			return html.EscapeString(provider.TitleOf(s)), true
		case 'f':
			if key := "integrations." + strings.ReplaceAll(s, " ", "_"); hasText(key) {
				return html.EscapeString(translate(lang, key)), true
			}
		case 's':
			return sayWith(lang, s, part)
		}
		return html.EscapeString(s), true
	}
	return part
}
