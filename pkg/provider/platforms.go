package provider

import "time"

// The platforms' names.
const (
	Guru    = "guru"
	Yampi   = "yampi"
	Hotmart = "hotmart"
	Kiwify  = "kiwify"
	Eduzz   = "eduzz"
)

// all are the descriptors, in the order the API and the dashboard list
// them.
var all = []Descriptor{guru, yampi, hotmart, kiwify, eduzz}

// Digital Manager Guru: webhooks carry the account token in the body; its
// API serves subscription discounts, members' coupons and the sales pull.
var guru = Descriptor{
	Name: Guru, Title: "Guru",
	Settings: []Setting{
		{Name: "account_token", Role: AccountToken, Kind: Secret},
		{Name: "user_token", Role: UserToken, Kind: Secret},
		{Name: "api_url", Role: APIURL, Kind: CalledURL, Default: "https://digitalmanager.guru/api/v2"},
	},
	Needs: map[Capability][]string{
		Webhook: {"account_token"},
		Redeem:  {"user_token"},
		Coupon:  {"user_token"},
		Pull:    {"user_token"},
	},
	Webhook:         WebhookAuth{Setting: "account_token", Place: InBody, Name: "api_token"},
	PullWindow:      180 * 24 * time.Hour, // documented
	Redemption:      RedeemSubscriptionDiscount,
	RedemptionAlias: "guru_subscription",
}

// Yampi: webhooks are signed (X-Yampi-Hmac-SHA256); its API serves store
// coupons, members' coupons and the sales pull.
var yampi = Descriptor{
	Name: Yampi, Title: "Yampi",
	Settings: []Setting{
		{Name: "webhook_secret", Role: WebhookSecret, Kind: Secret},
		{Name: "user_token", Role: UserToken, Kind: Secret},
		{Name: "user_secret_key", Role: UserSecretKey, Kind: Secret},
		{Name: "store_alias", Role: StoreAlias, Kind: Text},
		{Name: "api_url", Role: APIURL, Kind: CalledURL, Default: "https://api.dooki.com.br/v2"},
	},
	Needs: map[Capability][]string{
		Webhook: {"webhook_secret"},
		Redeem:  {"user_token", "user_secret_key", "store_alias"},
		Coupon:  {"user_token", "user_secret_key", "store_alias"},
		Pull:    {"user_token", "user_secret_key", "store_alias"},
	},
	Webhook:         WebhookAuth{Setting: "webhook_secret", Place: InHeader, Name: "X-Yampi-Hmac-SHA256", Signed: true},
	PullWindow:      366 * 24 * time.Hour, // none documented: a bound of our own
	Redemption:      RedeemStoreCredit,
	RedemptionAlias: "yampi_coupon",
}

// Hotmart: webhooks carry the hottok in a header; its API is only read
// (the sales pull, OAuth through its own token endpoint).
var hotmart = Descriptor{
	Name: Hotmart, Title: "Hotmart",
	Settings: []Setting{
		{Name: "hottok", Role: AccountToken, Kind: Secret},
		{Name: "client_id", Role: ClientID, Kind: Text},
		{Name: "client_secret", Role: ClientSecret, Kind: Secret},
		{Name: "basic_token", Role: BasicToken, Kind: Secret},
		{Name: "api_url", Role: APIURL, Kind: CalledURL, Default: "https://developers.hotmart.com/payments/api/v1"},
		{Name: "auth_url", Role: AuthURL, Kind: CalledURL, Default: "https://api-sec-vlc.hotmart.com/security/oauth/token"},
	},
	Needs: map[Capability][]string{
		Webhook: {"hottok"},
		Pull:    {"client_id", "client_secret", "basic_token"},
	},
	Webhook:    WebhookAuth{Setting: "hottok", Place: InHeader, Name: "X-HOTMART-HOTTOK"},
	PullWindow: 31 * 24 * time.Hour, // short: a slow query answers 502
}

// Kiwify: webhooks are signed in the URL's query; members get referral
// links (the checkout link's sck); its API is only read (the sales pull).
var kiwify = Descriptor{
	Name: Kiwify, Title: "Kiwify",
	Settings: []Setting{
		{Name: "webhook_token", Role: WebhookSecret, Kind: Secret},
		{Name: "client_id", Role: ClientID, Kind: Text},
		{Name: "client_secret", Role: ClientSecret, Kind: Secret},
		{Name: "account_id", Role: AccountID, Kind: Text},
		{Name: "api_url", Role: APIURL, Kind: CalledURL, Default: "https://public-api.kiwify.com/v1"},
		{Name: "checkout_url", Role: CheckoutURL, Kind: ShownURL},
	},
	Needs: map[Capability][]string{
		Webhook: {"webhook_token"},
		Pull:    {"client_id", "client_secret", "account_id"},
		Link:    {"checkout_url"},
	},
	Webhook:    WebhookAuth{Setting: "webhook_token", Place: InQuery, Name: "signature", Signed: true},
	PullWindow: 90 * 24 * time.Hour, // documented
	LinkParam:  "sck",
}

// Eduzz: webhooks are signed (x-signature); members get referral links
// (the checkout link's utm_content); no API is called.
var eduzz = Descriptor{
	Name: Eduzz, Title: "Eduzz",
	Settings: []Setting{
		{Name: "webhook_secret", Role: WebhookSecret, Kind: Secret},
		{Name: "checkout_url", Role: CheckoutURL, Kind: ShownURL},
	},
	Needs: map[Capability][]string{
		Webhook: {"webhook_secret"},
		Link:    {"checkout_url"},
	},
	Webhook:   WebhookAuth{Setting: "webhook_secret", Place: InHeader, Name: "x-signature", Signed: true},
	NoPull:    "Convida does not call its sales API yet (its contract was not at hand to build on): only its webhooks credit referrals",
	LinkParam: "utm_content",
}
