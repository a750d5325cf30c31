package inbound

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// KiwifySignatureParam is the query parameter Kiwify appends to the
// registered URL: hex(HMAC-SHA1(raw body, the webhook's token)).
const KiwifySignatureParam = "signature"

// kiwifyTimeLayouts are the layouts of Kiwify's dates, without zone
// (America/Sao_Paulo): "YYYY-MM-DD HH:MM", with seconds tolerated.
var kiwifyTimeLayouts = []string{"2006-01-02 15:04", "2006-01-02 15:04:05"}

// kiwify is the Kiwify adapter.
type kiwify struct{}

var _ Adapter = kiwify{}

// Kiwify returns the adapter for Kiwify order webhooks.
//
// Handle first verifies the signature (QueryCredentialHeader, from the
// query's KiwifySignatureParam) against hex(HMAC-SHA1(raw,
// the merchant's webhook token)) in constant time, before parsing
// anything: a missing or wrong signature, or no configured token (a webhook
// configured without a token proves nothing), is Unauthorized. Then the
// body must be a JSON object (else Unprocessable) and is routed on
// webhook_event_type:
//
//	order_approved, compra_aprovada, subscription_renewed → sale
//	order_refunded, compra_reembolsada, chargeback        → refund
//	anything else                                          → Ignored
//
// and, when webhook_event_type is absent, on order_status (paid → sale;
// refunded, chargedback → refund; else Ignored). A renewal arrives as a new
// order_id, sometimes twice (compra_aprovada and subscription_renewed): one
// CommandID per order_id credits it once. Then the mapping (else
// Unprocessable):
//
//	order id     order_id (required)
//	amount       Commissions.charge_amount (integer centavos, or its decimal text; required)
//	currency     Commissions.currency, "BRL" when absent
//	coupon       the first coupon field present (coupon_code, coupon, discount_code)
//	referral     TrackingParameters.sck, else .src, else .s1 (the member's referral link)
//	customer     Customer.full_name, .email, .CPF (or .cnpj for a company)
//	occurred at  approved_date, else created_at ("YYYY-MM-DD HH:MM", America/Sao_Paulo) in UTC
//	subscription subscription_id
func Kiwify() Adapter { return kiwify{} }

func (kiwify) Provider() string { return provider.Kiwify }

func (kiwify) Handle(raw []byte, header http.Header, secret string) (Outcome, error) {
	if err := checkKiwifySignature(raw, header.Get(QueryCredentialHeader), secret); err != nil {
		return Outcome{}, notAuthenticated(err)
	}
	obj, err := parseObject(raw)
	if err != nil {
		return Outcome{}, err
	}
	event := obj.stringAt("webhook_event_type")
	kind, ignored := kiwifyRoute(event, obj.stringAt("order_status"))
	if kind == "" {
		return ignored, nil
	}
	var body kiwifyBody
	if err := decodeBody(raw, &body); err != nil {
		return Outcome{}, err
	}
	name := slug(event)
	if name == "" {
		name = "order_status." + slug(obj.stringAt("order_status"))
	}
	ev, err := body.event(kind, name)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Event: ev}, nil
}

// KiwifySignature returns the hex HMAC-SHA1 of body keyed with token: the
// signature Kiwify appends to the webhook URL.
func KiwifySignature(body []byte, token string) string {
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func checkKiwifySignature(raw []byte, signature, token string) error {
	signature = strings.ToLower(strings.TrimSpace(signature))
	switch {
	case token == "":
		return apperr.Errorf(apperr.Unauthorized, "no kiwify webhook token is configured for this merchant")
	case signature == "":
		return apperr.Errorf(apperr.Unauthorized, "the %s query parameter is missing", KiwifySignatureParam)
	}
	got, err := hex.DecodeString(signature)
	want, _ := hex.DecodeString(KiwifySignature(raw, token))
	if err != nil || !hmac.Equal(got, want) {
		return apperr.Errorf(apperr.Unauthorized, "the %s query parameter does not match the body", KiwifySignatureParam)
	}
	return nil
}

// kiwifyRoute maps an event type, or without one an order status, to a
// kind, or returns "" and the ignored Outcome.
func kiwifyRoute(event, status string) (Kind, Outcome) {
	if strings.TrimSpace(event) == "" {
		switch slug(status) {
		case "paid":
			return KindSale, Outcome{}
		case "refunded", "chargedback":
			return KindRefund, Outcome{}
		}
		return "", ignore(provider.Kiwify+" order_status %q is not handled", status)
	}
	switch slug(event) {
	case "order_approved", "compra_aprovada", "subscription_renewed":
		return KindSale, Outcome{}
	case "order_refunded", "compra_reembolsada", "chargeback":
		return KindRefund, Outcome{}
	}
	return "", ignore(provider.Kiwify+" webhook_event_type %q is not handled", event)
}

// kiwifyBody is the part of a Kiwify order webhook that is mapped.
type kiwifyBody struct {
	OrderID        text   `json:"order_id"`
	SubscriptionID text   `json:"subscription_id"`
	ApprovedDate   string `json:"approved_date"`
	CreatedAt      string `json:"created_at"`
	CouponCode     string `json:"coupon_code"`
	Coupon         string `json:"coupon"`
	DiscountCode   string `json:"discount_code"`
	Customer       maybe[struct {
		FullName string `json:"full_name"`
		Email    string `json:"email"`
		CPF      text   `json:"CPF"`
		CNPJ     text   `json:"cnpj"`
	}] `json:"Customer"`
	Commissions maybe[struct {
		ChargeAmount text   `json:"charge_amount"`
		Currency     string `json:"currency"`
	}] `json:"Commissions"`
	Tracking maybe[struct {
		Sck string `json:"sck"`
		Src string `json:"src"`
		S1  string `json:"s1"`
	}] `json:"TrackingParameters"`
}

func (b *kiwifyBody) event(kind Kind, name string) (*OrderEvent, error) {
	amount, err := centavos(string(b.Commissions.V.ChargeAmount), "Commissions.charge_amount")
	if err != nil {
		return nil, err
	}
	field, value := "approved_date", b.ApprovedDate
	if strings.TrimSpace(value) == "" {
		field, value = "created_at", b.CreatedAt
	}
	at, err := parseKiwifyTime(field, value)
	if err != nil {
		return nil, err
	}
	c := b.Customer.V
	doc := string(c.CPF)
	if strings.TrimSpace(doc) == "" {
		doc = string(c.CNPJ) // a company buyer
	}
	return complete(&OrderEvent{
		Provider:       provider.Kiwify,
		Kind:           kind,
		EventName:      name,
		OrderID:        string(b.OrderID),
		Amount:         amount,
		Currency:       b.Commissions.V.Currency,
		CouponCode:     firstOf(b.CouponCode, b.Coupon, b.DiscountCode),
		ReferralCode:   firstOf(b.Tracking.V.Sck, b.Tracking.V.Src, b.Tracking.V.S1),
		Customer:       Customer{Name: c.FullName, Email: c.Email, Document: doc},
		SubscriptionID: string(b.SubscriptionID),
		OccurredAt:     at,
	}, "order_id")
}

// firstOf is the first of values that is not blank: a coupon, should
// Kiwify ever send one, from any field it may come in; the member's code
// from any tracking parameter a referral link may carry it in.
func firstOf(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// centavos reads an amount in integer cents, sent as a JSON integer or its
// decimal text; missing, negative, fractional or too large is
// Unprocessable, naming field.
func centavos(s, field string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, apperr.Errorf(apperr.Unprocessable, "%s is required", field)
	}
	if !isDigits([]byte(s)) {
		return 0, apperr.Errorf(apperr.Unprocessable, "%s must be a non-negative integer number of centavos", field)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, apperr.Errorf(apperr.Unprocessable, "%s is too large", field)
	}
	return n, nil
}

// parseKiwifyTime reads one of Kiwify's dates in São Paulo time.
func parseKiwifyTime(field, value string) (time.Time, error) {
	var err error
	for _, layout := range kiwifyTimeLayouts {
		var t time.Time
		if t, err = parseTime(field, value, layout, saoPaulo()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}
