package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/respond"
)

// InboundDeliveries reads the records of the platforms' webhooks
// (postgres.DeliveryStore).
type InboundDeliveries interface {
	PageDeliveries(ctx context.Context, merchantID uuid.UUID, provider string, offset, limit int) ([]inbound.Delivery, int, error)
}

// DeliveryView is one of a platform's webhooks as the ingest received and
// answered it: what the dashboard's Integrations page shows.
type DeliveryView struct {
	ID         string `json:"id"`
	Provider   string `json:"provider"`
	ReceivedAt string `json:"received_at"`
	// Status is the HTTP status the platform was answered, Outcome what
	// it meant (accepted, member_erased, duplicate, ignored, unattributed,
	// unauthorized, unprocessable, too_large, unavailable, rate_limited)
	// and Error why, when refused or attributed to nobody.
	Status  int    `json:"status"`
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
	// OrderID is the platform's order, null when the delivery was refused
	// before its order was read.
	OrderID *string `json:"order_id"`
	// Body is the JSON body received, every field named like a credential
	// (token, secret, password) replaced by "[redacted]"; null when what
	// is kept is not JSON (cut, or not JSON at all), as it could then hold
	// a credential that cannot be found to redact.
	Body json.RawMessage `json:"body"`
	// BodySHA256 and BodyLength identify the whole body of a delivery
	// refused before it authenticated, whose record keeps only its first
	// 4 KiB; null for the others.
	BodySHA256 *string `json:"body_sha256"`
	BodyLength *int    `json:"body_length"`
	// Source is "webhook", or "reconciliation" for a sale a pull found
	// that no webhook had brought.
	Source string `json:"source"`
}

// registerDeliveries adds the inbound delivery records of the merchant,
// when the API has them.
func (s *Server) registerDeliveries(admin *mux.Router) {
	if s.cfg.Deliveries != nil {
		admin.HandleFunc(v1+"/integrations/{provider}/deliveries", s.listDeliveries).Methods(http.MethodGet)
	}
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) {
	p, pageNum, perPage, err := providerPage(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, total, err := s.cfg.Deliveries.PageDeliveries(r.Context(), merchantOf(r).ID, p, (pageNum-1)*perPage, perPage)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, listOf(list, func(d *inbound.Delivery) DeliveryView { return deliveryView(*d) }, pageNum, perPage, total))
}

func deliveryView(d inbound.Delivery) DeliveryView {
	v := DeliveryView{ID: ids.Format(ids.InboundDelivery, d.ID), Provider: d.Provider, ReceivedAt: jsontime.Format(d.ReceivedAt),
		Status: d.HTTPStatus, Outcome: d.Outcome, Error: d.Error, Source: d.Source}
	if v.Source == "" {
		v.Source = inbound.SourceWebhook
	}
	if order := d.OrderID(); order != "" {
		v.OrderID = &order
	}
	if body, ok := inbound.Redact(d.Body); ok {
		v.Body = body
	}
	if d.BodySHA256 != nil {
		digest, length := hex.EncodeToString(d.BodySHA256), d.BodyLength
		v.BodySHA256, v.BodyLength = &digest, &length
	}
	return v
}
