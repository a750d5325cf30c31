package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// YampiSignatureHeader carries base64(HMAC-SHA256(raw body, webhook secret)).
const YampiSignatureHeader = "X-Yampi-Hmac-SHA256"

// yampiTimeLayout is the layout of the envelope's "time", in America/Sao_Paulo.
const yampiTimeLayout = "2006-01-02 15:04:05"

// saoPaulo loads Yampi's zone once. time/tzdata is embedded, so the fallback
// (Brazil has kept UTC-3 all year since 2019) only guards a broken build.
var saoPaulo = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return time.FixedZone("-03", -3*60*60)
	}
	return loc
})

// yampi is the Yampi adapter.
type yampi struct{}

var _ Adapter = yampi{}

// Yampi returns the adapter for Yampi order webhooks.
//
// Handle first verifies the header X-Yampi-Hmac-SHA256 (read with
// http.Header.Get) against base64(HMAC-SHA256(raw, the merchant's webhook secret)),
// before parsing anything: a missing or wrong signature, or no configured
// secret, is Unauthorized. Then the body must be a JSON object (else
// Unprocessable) and is routed:
//
//	event "order.paid"                                → sale
//	event "order.status.updated", resource.status.data.alias
//	  "paid", "approved"                              → sale, same DedupeKey as order.paid
//	  "cancelled", "refunded", "refused", "chargeback…" → refund
//	anything else                                     → Ignored
//
// and mapped (else Unprocessable):
//
//	order id     resource.id (integer or string; required)
//	amount       resource.value_total (reais; required)
//	coupon       resource.promocode.data.code (data may be an object, [], null or absent)
//	customer     resource.customer.data.name, .email, .cpf (or .cnpj for a company)
//	occurred at  time ("YYYY-MM-DD HH:MM:SS", America/Sao_Paulo) in UTC; zero when absent
//	currency     BRL
//
// Other paid-looking aliases (invoiced, handling_products, on_carriage,
// delivered) are Ignored: the sale was already counted by order.paid or by
// the paid status, and the dedupe key would drop it anyway.
func Yampi() Adapter { return yampi{} }

func (yampi) Provider() string { return provider.Yampi }

func (yampi) Handle(raw []byte, header http.Header, secret string) (Outcome, error) {
	if err := checkYampiSignature(raw, header.Get(YampiSignatureHeader), secret); err != nil {
		return Outcome{}, notAuthenticated(err)
	}
	// One pass: a body that decodes whole is routed and read from that one
	// decoding. Any other body is routed from the fields that route it
	// first, so that an ignored event is ignored whatever its shape.
	var body yampiBody
	decoded := isObject(raw) && decode(raw, &body) == nil
	event, alias := body.Event, body.Resource.Status.V.Data.V.Alias
	if !decoded {
		obj, err := parseObject(raw)
		if err != nil {
			return Outcome{}, err
		}
		event, alias = obj.stringAt("event"), obj.stringAt("resource", "status", "data", "alias")
	}
	kind, ignored := yampiRoute(event, alias)
	if kind == "" {
		return ignored, nil
	}
	if !decoded {
		body = yampiBody{} // what the failed decoding left
		if err := decodeBody(raw, &body); err != nil {
			return Outcome{}, err
		}
	}
	ev, err := body.event(kind, slug(event))
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Event: ev}, nil
}

// yampiSignature returns HMAC-SHA256(body, secret), the MAC that the header
// X-Yampi-Hmac-SHA256 carries in standard padded base64.
func yampiSignature(body []byte, secret string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return mac.Sum(nil)
}

func checkYampiSignature(raw []byte, signature, secret string) error {
	switch {
	case secret == "":
		return apperr.Errorf(apperr.Unauthorized, "no yampi webhook secret is configured for this merchant")
	case strings.TrimSpace(signature) == "":
		return apperr.Errorf(apperr.Unauthorized, "%s header is missing", YampiSignatureHeader)
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(signature))
	if err != nil || !hmac.Equal(got, yampiSignature(raw, secret)) {
		return apperr.Errorf(apperr.Unauthorized, "%s does not match the body", YampiSignatureHeader)
	}
	return nil
}

// yampiRoute maps an event and its status alias to a kind, or returns ""
// and the ignored Outcome.
func yampiRoute(event, alias string) (Kind, Outcome) {
	switch e, a := slug(event), slug(alias); {
	case e == "order.paid":
		return KindSale, Outcome{}
	case e != "order.status.updated":
		return "", ignore(provider.Yampi+" event %q is not handled", event)
	case a == "paid" || a == "approved":
		return KindSale, Outcome{}
	case a == "cancelled" || a == "refunded" || a == "refused" || strings.HasPrefix(a, "chargeback"):
		return KindRefund, Outcome{}
	}
	return "", ignore(provider.Yampi+" order.status.updated with status alias %q is not handled", alias)
}

// yampiBody is the part of a Yampi order webhook that is mapped.
type yampiBody struct {
	Event    string `json:"event"`
	Time     string `json:"time"`
	Resource struct {
		Status maybe[struct {
			Data maybe[struct {
				Alias string `json:"alias"`
			}] `json:"data"`
		}] `json:"status"`
		ID         text        `json:"id"`
		ValueTotal json.Number `json:"value_total"`
		Customer   maybe[struct {
			Data maybe[struct {
				Name  string `json:"name"`
				Email string `json:"email"`
				CPF   text   `json:"cpf"`
				CNPJ  text   `json:"cnpj"`
			}] `json:"data"`
		}] `json:"customer"`
		Promocode maybe[struct {
			Data maybe[struct {
				Code string `json:"code"`
			}] `json:"data"`
		}] `json:"promocode"`
	} `json:"resource"`
}

func (b *yampiBody) event(kind Kind, name string) (*OrderEvent, error) {
	r := &b.Resource
	amount, err := cents(r.ValueTotal, "resource.value_total")
	if err != nil {
		return nil, err
	}
	at, err := parseTime("time", b.Time, yampiTimeLayout, saoPaulo())
	if err != nil {
		return nil, err
	}
	c := r.Customer.V.Data.V
	doc := string(c.CPF)
	if strings.TrimSpace(doc) == "" {
		doc = string(c.CNPJ) // a company buyer
	}
	return complete(&OrderEvent{
		Provider:   provider.Yampi,
		Kind:       kind,
		EventName:  name,
		OrderID:    string(r.ID),
		Amount:     amount,
		Currency:   "BRL",
		CouponCode: r.Promocode.V.Data.V.Code,
		Customer:   Customer{Name: c.Name, Email: c.Email, Document: doc},
		OccurredAt: at,
	}, "resource.id")
}
