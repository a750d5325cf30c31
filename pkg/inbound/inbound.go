// Package inbound turns the sale webhooks of the billing and store platforms
// into one canonical OrderEvent. Each platform is one Adapter that
// authenticates the exact request bytes, parses them and maps them; adding a
// platform is adding an Adapter, nothing else.
//
// The package is pure: it does no I/O, keeps no mutable state (only the
// America/Sao_Paulo zone, loaded once) and is safe for concurrent use. Deduplication, persistence and the HTTP answer belong to the
// caller, which maps the apperr codes returned here (Unauthorized → 401,
// Unprocessable → 422) and answers 200 for an ignored Outcome.
package inbound

import (
	"errors"
	"net/http"
	"time"
	_ "time/tzdata" // America/Sao_Paulo must load on hosts without zoneinfo.

	"github.com/convida/convida/pkg/apperr"
)

// Kind says what an order event does to a referral.
type Kind string

// The kinds of order event.
const (
	KindSale   Kind = "sale"
	KindRefund Kind = "refund"
)

// Customer is the buyer of an order, as the platform sent it, trimmed and
// cut to the bounds of the API's own fields (pkg/bounds): a name to 200
// characters, an e-mail to 254, a document to 255.
type Customer struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Document string `json:"document"` // CPF or CNPJ digits as sent
}

// OrderEvent is the canonical order event every provider maps to.
// CouponID, CouponCode and ReferralCode are what may name the sale's
// member, tried in that order (intake.Intake.Attribute).
type OrderEvent struct {
	Provider       string    `json:"provider"`        // the platform's name (provider.Descriptor.Name)
	Kind           Kind      `json:"kind"`            // sale | refund
	EventName      string    `json:"event_name"`      // the platform's event, e.g. "transaction.approved", "order.paid", "PURCHASE_APPROVED", "order_approved"
	OrderID        string    `json:"order_id"`        // never empty, at most 255 characters (a longer one is refused)
	Amount         int64     `json:"amount"`          // cents, >= 0
	Currency       string    `json:"currency"`        // upper case, "BRL" unless the platform says otherwise
	CouponCode     string    `json:"coupon_code"`     // trimmed, case kept, cut to 255 characters; "" when none
	ReferralCode   string    `json:"referral_code"`   // the member's code in the referral link the buyer came by (Kiwify's sck, src, s1); as CouponCode
	CouponID       string    `json:"coupon_id"`       // the platform's id of the coupon used (Yampi's promocode_id, pulls only); trimmed, cut to 255; "" when none
	Customer       Customer  `json:"customer"`        //
	SubscriptionID string    `json:"subscription_id"` // guru only, cut to 255 characters; "" when none
	OccurredAt     time.Time `json:"occurred_at"`     // UTC; zero when the platform sent no time (the caller uses the receipt time)
	DedupeKey      string    `json:"dedupe_key"`      // CommandID(provider, order id, kind)
}

// CommandID is the id of the ledger command of an order event, and its
// DedupeKey: "{provider}:{order id}:{kind}". It depends only on the
// platform, the platform's order id (Guru's transaction id, Yampi's order
// id, Hotmart's transaction HP…, Kiwify's order_id) and whether the event
// is a sale or a refund: never on the event's name, its delivery or its
// time. So every event that credits one order (Hotmart's
// PURCHASE_APPROVED then PURCHASE_COMPLETE, Kiwify's compra_aprovada and
// subscription_renewed of one order_id, a redelivery) has one command id,
// and so will the same sale found by a pull of the platform's API, which
// must build its id here: whichever arrives second is a duplicate the
// ledger applies once. A refund, chargeback or cancellation of one order
// is one refund the same way.
func CommandID(provider, orderID string, kind Kind) string {
	return provider + ":" + orderID + ":" + string(kind)
}

// Outcome is the result of a delivery that authenticated and parsed.
type Outcome struct {
	Event   *OrderEvent // nil when Ignored
	Ignored bool        // a valid delivery this service does not act on (e.g. guru status "waiting_payment"); answered 200
	Reason  string      // why it was ignored, for the delivery log; "" otherwise
}

// Adapter is one provider.
type Adapter interface {
	// Provider returns the platform's name (provider.Descriptor.Name).
	Provider() string
	// Handle authenticates raw (the exact request body bytes) with header
	// and secret (the merchant's setting that the platform's
	// provider.WebhookAuth names, decrypted; "" when not configured, and
	// every delivery is then Unauthorized), then parses and maps it. It is deterministic and safe to repeat: the
	// same delivery always gives the same Outcome, whose DedupeKey lets the
	// caller drop duplicates.
	//
	// Errors are *apperr.Error with code apperr.Unauthorized (bad or missing
	// token or signature, or the merchant has no secret for this provider)
	// or apperr.Unprocessable (body not a JSON object, required field
	// missing, a field of the wrong type, bad money, unparseable time).
	// An error returned before the delivery authenticated wraps
	// ErrNotAuthenticated. Handle never panics on any input.
	Handle(raw []byte, header http.Header, secret string) (Outcome, error)
}

// ErrNotAuthenticated is wrapped (errors.Is) by every error an Adapter
// returns before the delivery authenticated: a wrong or missing token or
// signature, a provider the merchant has no credentials for, and a Guru
// body that is not a JSON object (Guru's token is in the body). Such a
// delivery may come from anyone: the caller keeps little of it and counts
// it against the client that sent it.
var ErrNotAuthenticated = errors.New("the delivery did not authenticate")

// notAuthenticated marks an error of Handle as returned before the
// delivery authenticated.
func notAuthenticated(err error) error {
	e, ok := err.(*apperr.Error)
	if !ok {
		return errors.Join(ErrNotAuthenticated, err)
	}
	marked := *e
	marked.Err = errors.Join(ErrNotAuthenticated, e.Err)
	return &marked
}

// QueryCredentialHeader is where the ingest hands an adapter the
// credential of a platform that sends it in the URL's query
// (provider.InQuery, Kiwify's signature): an Adapter sees the body and the
// headers only. The ingest always sets it from the URL (or deletes it), so
// a client cannot put a credential there other than through the query.
const QueryCredentialHeader = "X-Convida-Query-Credential"

// adapters are the platforms' adapters by name.
var adapters = func() map[string]Adapter {
	m := map[string]Adapter{}
	for _, a := range []Adapter{Guru(), Yampi(), Hotmart(), Kiwify(), Eduzz()} {
		m[a.Provider()] = a
	}
	return m
}()

// Lookup returns the adapter of the platform named name (exact lower
// case, as in the ingest URL), or false for any other name.
func Lookup(name string) (Adapter, bool) {
	a, ok := adapters[name]
	return a, ok
}
