package inbound

import (
	"net/http"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// HotmartTokenHeader carries the account's hottok on every Hotmart webhook.
const HotmartTokenHeader = "X-HOTMART-HOTTOK"

// hotmart is the Hotmart adapter.
type hotmart struct{}

var _ Adapter = hotmart{}

// Hotmart returns the adapter for Hotmart purchase webhooks, version 2.0.0
// ({id, creation_date, event, version, data}).
//
// Hotmart signs nothing: the header X-HOTMART-HOTTOK carries the account's
// static hottok, compared in constant time with the merchant's hottok
// before the body is read (missing, wrong or not configured: Unauthorized,
// wrapping ErrNotAuthenticated). Then the body must be a JSON object (else
// Unprocessable) and is routed on event:
//
//	PURCHASE_APPROVED                                   → sale
//	PURCHASE_COMPLETE (the warranty elapsed)            → sale, the same CommandID: no new credit
//	PURCHASE_REFUNDED, PURCHASE_CHARGEBACK, PURCHASE_CANCELED → refund
//	PURCHASE_PROTEST (a dispute opened) and any other   → Ignored
//
// A PURCHASE_COMPLETE is the approval's sale again: after the approval it
// is a duplicate, and it credits only a sale whose approval never arrived
// (as a pull of the same sale would). Then the mapping (else Unprocessable):
//
//	order id     data.purchase.transaction (HP…; required)
//	amount       data.purchase.price.value (reais, a JSON number read as decimal text; required)
//	currency     data.purchase.price.currency_value, "BRL" when absent
//	coupon       data.purchase.offer.coupon_code
//	customer     data.buyer.name, .email, .document
//	occurred at  data.purchase.approved_date, else .order_date (ms since the epoch); zero when both are absent
//
// An order bump is its own transaction, credited as its own sale.
func Hotmart() Adapter { return hotmart{} }

func (hotmart) Provider() string { return provider.Hotmart }

func (hotmart) Handle(raw []byte, header http.Header, secret string) (Outcome, error) {
	if err := checkHottok(header.Get(HotmartTokenHeader), secret); err != nil {
		return Outcome{}, notAuthenticated(err)
	}
	obj, err := parseObject(raw)
	if err != nil {
		return Outcome{}, err
	}
	event := obj.stringAt("event")
	kind, ignored := hotmartRoute(event)
	if kind == "" {
		return ignored, nil
	}
	var body hotmartBody
	if err := decodeBody(raw, &body); err != nil {
		return Outcome{}, err
	}
	ev, err := body.event(kind, strings.ToUpper(strings.TrimSpace(event)))
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Event: ev}, nil
}

func checkHottok(got, stored string) error {
	got = strings.TrimSpace(got)
	switch {
	case stored == "":
		return apperr.Errorf(apperr.Unauthorized, "no hotmart hottok is configured for this merchant")
	case got == "":
		return apperr.Errorf(apperr.Unauthorized, "%s header is missing", HotmartTokenHeader)
	case !sameSecret(got, stored):
		return apperr.Errorf(apperr.Unauthorized, "%s does not match the merchant's hotmart hottok", HotmartTokenHeader)
	}
	return nil
}

// hotmartRoute maps an event to a kind, or returns "" and the ignored
// Outcome.
func hotmartRoute(event string) (Kind, Outcome) {
	switch strings.ToUpper(strings.TrimSpace(event)) {
	case "PURCHASE_APPROVED", "PURCHASE_COMPLETE":
		return KindSale, Outcome{}
	case "PURCHASE_REFUNDED", "PURCHASE_CHARGEBACK", "PURCHASE_CANCELED":
		return KindRefund, Outcome{}
	case "PURCHASE_PROTEST":
		return "", ignore(provider.Hotmart+" event %q changes nothing until it is refunded or charged back", event)
	}
	return "", ignore(provider.Hotmart+" event %q is not handled", event)
}

// hotmartBody is the part of a Hotmart 2.0.0 webhook that is mapped.
type hotmartBody struct {
	Data struct {
		Buyer maybe[struct {
			Name     string `json:"name"`
			Email    string `json:"email"`
			Document text   `json:"document"`
		}] `json:"buyer"`
		Purchase struct {
			Transaction text `json:"transaction"`
			Price       struct {
				Value    json.Number `json:"value"`
				Currency string      `json:"currency_value"`
			} `json:"price"`
			Offer maybe[struct {
				CouponCode string `json:"coupon_code"`
			}] `json:"offer"`
			ApprovedDate *json.Number `json:"approved_date"`
			OrderDate    *json.Number `json:"order_date"`
		} `json:"purchase"`
	} `json:"data"`
}

func (b *hotmartBody) event(kind Kind, name string) (*OrderEvent, error) {
	p := &b.Data.Purchase
	amount, err := cents(p.Price.Value, "data.purchase.price.value")
	if err != nil {
		return nil, err
	}
	field, ms := "data.purchase.approved_date", p.ApprovedDate
	if ms == nil {
		field, ms = "data.purchase.order_date", p.OrderDate
	}
	at, err := unixMilli(field, ms)
	if err != nil {
		return nil, err
	}
	buyer := b.Data.Buyer.V
	return complete(&OrderEvent{
		Provider:   provider.Hotmart,
		Kind:       kind,
		EventName:  name,
		OrderID:    string(p.Transaction),
		Amount:     amount,
		Currency:   p.Price.Currency,
		CouponCode: p.Offer.V.CouponCode,
		Customer:   Customer{Name: buyer.Name, Email: buyer.Email, Document: string(buyer.Document)},
		OccurredAt: at,
	}, "data.purchase.transaction")
}

// unixMilli reads a time sent as milliseconds since the epoch. nil (absent
// or null) is the zero time; a value that is not a non-negative integer,
// or beyond year 9999, is Unprocessable.
func unixMilli(field string, n *json.Number) (time.Time, error) {
	if n == nil {
		return time.Time{}, nil
	}
	ms, err := n.Int64()
	if err != nil || ms < 0 || ms > 253402300799999 {
		return time.Time{}, apperr.Errorf(apperr.Unprocessable, "%s is not a time in milliseconds since the epoch", field)
	}
	return time.UnixMilli(ms).UTC(), nil
}
