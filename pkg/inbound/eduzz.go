package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// EduzzSignatureHeader carries hex(HMAC-SHA256(raw body, webhook secret)).
const EduzzSignatureHeader = "X-Signature"

// eduzz is the Eduzz adapter.
type eduzz struct{}

var _ Adapter = eduzz{}

// Eduzz returns the adapter for Eduzz invoice webhooks ({id, event,
// sentDate, data}).
//
// Handle first verifies the header x-signature against HMAC-SHA256(raw,
// the merchant's webhook secret), in lower-case hex (upper case and
// standard base64 are accepted too), with hmac.Equal, before parsing
// anything: a missing or wrong signature, or no configured secret, is
// Unauthorized. Then the body must be a JSON object (else Unprocessable)
// and is routed on event:
//
//	myeduzz.invoice_paid                          → sale
//	myeduzz.invoice_refunded                      → refund
//	myeduzz.invoice_canceled of a paid invoice    → refund
//	myeduzz.invoice_canceled without data.paidAt  → Ignored (never paid: nothing to reverse)
//	anything else                                 → Ignored
//
// and mapped (else Unprocessable):
//
//	order id     data.id (the invoice; string or integer; required)
//	amount       data.price.value (reais, a JSON number read as decimal text; required)
//	currency     data.price.currency, "BRL" when absent
//	coupon       data.utm.content (the member's referral link), else data.utm.campaign
//	customer     data.buyer.name, .email, .document
//	occurred at  data.paidAt, else sentDate (RFC 3339) in UTC; zero when both are absent
func Eduzz() Adapter { return eduzz{} }

func (eduzz) Provider() string { return provider.Eduzz }

func (eduzz) Handle(raw []byte, header http.Header, secret string) (Outcome, error) {
	if err := checkEduzzSignature(raw, header.Get(EduzzSignatureHeader), secret); err != nil {
		return Outcome{}, notAuthenticated(err)
	}
	obj, err := parseObject(raw)
	if err != nil {
		return Outcome{}, err
	}
	event := obj.stringAt("event")
	kind, ignored := eduzzRoute(event, obj.stringAt("data", "paidAt"))
	if kind == "" {
		return ignored, nil
	}
	var body eduzzBody
	if err := decodeBody(raw, &body); err != nil {
		return Outcome{}, err
	}
	ev, err := body.event(kind, slug(event))
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Event: ev}, nil
}

// EduzzSignature returns the lower-case hex HMAC-SHA256 of body keyed with
// secret: the x-signature Eduzz sends.
func EduzzSignature(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func checkEduzzSignature(raw []byte, signature, secret string) error {
	signature = strings.TrimSpace(signature)
	switch {
	case secret == "":
		return apperr.Errorf(apperr.Unauthorized, "no eduzz webhook secret is configured for this merchant")
	case signature == "":
		return apperr.Errorf(apperr.Unauthorized, "%s header is missing", EduzzSignatureHeader)
	}
	want, _ := hex.DecodeString(EduzzSignature(raw, secret))
	// Hex, Eduzz's spelling; base64 of the same MAC is taken too. A
	// decoding that fails proves nothing, whatever it decoded before.
	fromHex, hexErr := hex.DecodeString(signature)
	fromBase64, base64Err := base64.StdEncoding.DecodeString(signature)
	if !(hexErr == nil && hmac.Equal(fromHex, want)) && !(base64Err == nil && hmac.Equal(fromBase64, want)) {
		return apperr.Errorf(apperr.Unauthorized, "%s does not match the body", EduzzSignatureHeader)
	}
	return nil
}

// eduzzRoute maps an event (and, for a cancellation, whether the invoice
// was paid) to a kind, or returns "" and the ignored Outcome.
func eduzzRoute(event, paidAt string) (Kind, Outcome) {
	switch slug(event) {
	case "myeduzz.invoice_paid":
		return KindSale, Outcome{}
	case "myeduzz.invoice_refunded":
		return KindRefund, Outcome{}
	case "myeduzz.invoice_canceled":
		if strings.TrimSpace(paidAt) == "" {
			return "", ignore(provider.Eduzz+" event %q of an invoice never paid changes nothing", event)
		}
		return KindRefund, Outcome{}
	}
	return "", ignore(provider.Eduzz+" event %q is not handled", event)
}

// eduzzBody is the part of an Eduzz invoice webhook that is mapped.
type eduzzBody struct {
	SentDate string `json:"sentDate"`
	Data     struct {
		ID    text `json:"id"`
		Price struct {
			Value    json.Number `json:"value"`
			Currency string      `json:"currency"`
		} `json:"price"`
		Buyer maybe[struct {
			Name     string `json:"name"`
			Email    string `json:"email"`
			Document text   `json:"document"`
		}] `json:"buyer"`
		UTM maybe[struct {
			Content  string `json:"content"`
			Campaign string `json:"campaign"`
		}] `json:"utm"`
		PaidAt string `json:"paidAt"`
	} `json:"data"`
}

func (b *eduzzBody) event(kind Kind, name string) (*OrderEvent, error) {
	d := &b.Data
	amount, err := cents(d.Price.Value, "data.price.value")
	if err != nil {
		return nil, err
	}
	field, value := "data.paidAt", d.PaidAt
	if strings.TrimSpace(value) == "" {
		field, value = "sentDate", b.SentDate
	}
	at, err := parseTime(field, value, time.RFC3339, time.UTC)
	if err != nil {
		return nil, err
	}
	code := d.UTM.V.Content
	if strings.TrimSpace(code) == "" {
		code = d.UTM.V.Campaign
	}
	buyer := d.Buyer.V
	return complete(&OrderEvent{
		Provider:   provider.Eduzz,
		Kind:       kind,
		EventName:  name,
		OrderID:    string(d.ID),
		Amount:     amount,
		Currency:   d.Price.Currency,
		CouponCode: code,
		Customer:   Customer{Name: buyer.Name, Email: buyer.Email, Document: string(buyer.Document)},
		OccurredAt: at,
	}, "data.id")
}
