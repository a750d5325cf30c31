package inbound

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// guru is the Digital Manager Guru adapter.
type guru struct{}

var _ Adapter = guru{}

// Guru returns the adapter for Digital Manager Guru transaction webhooks.
//
// Guru sends no signature: the body field api_token must equal the
// merchant's account token. Handle checks, in order: the body is a JSON
// object (else Unprocessable); api_token matches
// the merchant's account token (else Unauthorized, also when no token is
// configured) — both errors wrap ErrNotAuthenticated; webhook_type is
// "transaction" and status is "approved" (a sale, transaction.approved) or
// "refunded"/"chargeback" (a refund, transaction.refunded), else the delivery
// is Ignored without looking further; then the mapping (else Unprocessable):
//
//	order id      id (required; string, or integer kept as text)
//	amount        payment.total (reais; required)
//	currency      payment.currency, "BRL" when absent
//	coupon        payment.coupon.coupon_code (coupon may be null, absent or [])
//	customer      contact.name, contact.email, contact.doc
//	subscription  subscription.id (may be absent)
//	occurred at   dates.confirmed_at, else dates.ordered_at (RFC 3339); zero when both are absent
//
// The header is not used. A refund's OccurredAt is still the confirmation
// time, as the spec's table says, not dates.canceled_at.
func Guru() Adapter { return guru{} }

func (guru) Provider() string { return provider.Guru }

func (guru) Handle(raw []byte, _ http.Header, secret string) (Outcome, error) {
	// One pass: a body that decodes whole is authenticated, routed and read
	// from that one decoding. Any other body is authenticated and routed
	// from its top-level fields first, so that an outsider learns nothing
	// of what is wrong with its shape.
	var whole struct {
		guruHead
		guruBody
	}
	decoded := isObject(raw) && decode(raw, &whole) == nil
	if !decoded {
		obj, err := parseObject(raw)
		if err != nil {
			return Outcome{}, notAuthenticated(err)
		}
		whole.guruHead = guruHead{APIToken: obj.stringAt("api_token"), WebhookType: obj.stringAt("webhook_type"),
			Status: obj.stringAt("status")}
	}
	if err := checkGuruToken(whole.APIToken, secret); err != nil {
		return Outcome{}, notAuthenticated(err)
	}
	kind, name, ignored := guruRoute(whole.WebhookType, whole.Status)
	if kind == "" {
		return ignored, nil
	}
	if !decoded {
		whole.guruBody = guruBody{} // what the failed decoding left
		if err := decodeBody(raw, &whole.guruBody); err != nil {
			return Outcome{}, err
		}
	}
	ev, err := whole.event(kind, name)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Event: ev}, nil
}

// guruHead are the fields a Guru delivery is authenticated and routed by.
type guruHead struct {
	APIToken    string `json:"api_token"`
	WebhookType string `json:"webhook_type"`
	Status      string `json:"status"`
}

// checkGuruToken checks api_token against the stored token (sameSecret).
func checkGuruToken(got, stored string) error {
	switch {
	case stored == "":
		return apperr.Errorf(apperr.Unauthorized, "no guru account token is configured for this merchant")
	case got == "":
		return apperr.Errorf(apperr.Unauthorized, "api_token is missing")
	}
	if !sameSecret(got, stored) {
		return apperr.Errorf(apperr.Unauthorized, "api_token does not match the merchant's guru account token")
	}
	return nil
}

// guruRoute maps a webhook type and transaction status to a kind and the
// spec event name, or returns "" and the ignored Outcome.
func guruRoute(webhookType, status string) (Kind, string, Outcome) {
	switch s := slug(status); {
	case slug(webhookType) != "transaction":
		return "", "", ignore(provider.Guru+" webhook_type %q is not handled", webhookType)
	case s == "approved":
		return KindSale, "transaction.approved", Outcome{}
	case s == "refunded" || s == "chargeback":
		return KindRefund, "transaction.refunded", Outcome{}
	}
	return "", "", ignore(provider.Guru+" transaction status %q is not handled", status)
}

// guruBody is the part of a Guru transaction webhook that is mapped.
type guruBody struct {
	ID      text `json:"id"`
	Contact maybe[struct {
		Name  string `json:"name"`
		Email string `json:"email"`
		Doc   text   `json:"doc"`
	}] `json:"contact"`
	Payment struct {
		Total    json.Number `json:"total"`
		Currency string      `json:"currency"`
		Coupon   maybe[struct {
			Code string `json:"coupon_code"`
		}] `json:"coupon"`
	} `json:"payment"`
	Subscription maybe[struct {
		ID text `json:"id"`
	}] `json:"subscription"`
	Dates maybe[struct {
		ConfirmedAt string `json:"confirmed_at"`
		OrderedAt   string `json:"ordered_at"`
	}] `json:"dates"`
}

func (b *guruBody) event(kind Kind, name string) (*OrderEvent, error) {
	amount, err := cents(b.Payment.Total, "payment.total")
	if err != nil {
		return nil, err
	}
	at, err := b.occurredAt()
	if err != nil {
		return nil, err
	}
	c := b.Contact.V
	return complete(&OrderEvent{
		Provider:       provider.Guru,
		Kind:           kind,
		EventName:      name,
		OrderID:        string(b.ID),
		Amount:         amount,
		Currency:       b.Payment.Currency,
		CouponCode:     b.Payment.Coupon.V.Code,
		Customer:       Customer{Name: c.Name, Email: c.Email, Document: string(c.Doc)},
		SubscriptionID: string(b.Subscription.V.ID),
		OccurredAt:     at,
	}, "id")
}

func (b *guruBody) occurredAt() (time.Time, error) {
	field, value := "dates.confirmed_at", b.Dates.V.ConfirmedAt
	if strings.TrimSpace(value) == "" {
		field, value = "dates.ordered_at", b.Dates.V.OrderedAt
	}
	return parseTime(field, value, time.RFC3339, time.UTC)
}

// sameSecret compares a presented secret with the stored one by their
// SHA-256 digests, in constant time, so that the time taken reveals
// neither the content nor the length of the stored secret.
func sameSecret(got, stored string) bool {
	g, s := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(stored))
	return subtle.ConstantTimeCompare(g[:], s[:]) == 1
}
