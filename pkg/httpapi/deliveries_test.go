package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

// TestInboundDeliveries lists a merchant's webhook deliveries through the
// API, as the recorder stored them, with a client that validates every
// answer against the OpenAPI document: newest first, paginated, each with
// the status answered, the outcome, the order and the body with its
// credentials redacted; a delivery refused before it authenticated shows
// the digest and length of its body and no body. Another merchant's key
// sees only its own, an unknown provider is 404, a bad page 400.
func TestInboundDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := openapitest.New(t)
	var store *postgres.DeliveryStore
	env := mustEnvWith(t, envOptions{
		wire: func(pool *pgxpool.Pool, _ *secretbox.Box) httpapi.Config {
			store = postgres.NewDeliveryStore(pool)
			return httpapi.Config{Deliveries: store}
		},
		client: v.Client,
	})
	tn, other := env.mustTenant(t), env.mustTenant(t)

	// 24 Guru sales of tn a minute apart, then a refused one; a Yampi
	// sale; 3 Guru sales of the other merchant.
	start := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var records []inbound.Delivery
	var guruIDs []uuid.UUID // newest first, as the list answers
	for i := range 24 {
		order := fmt.Sprintf("guru-order-%d", 1000+i)
		d := inbound.Delivery{ID: uuid.New(), MerchantID: tn.merchant.ID, Provider: "guru", DedupeKey: "guru:" + order + ":sale",
			Outcome: inbound.DeliveryAccepted, HTTPStatus: http.StatusOK, ReceivedAt: start.Add(time.Duration(i) * time.Minute),
			Body: []byte(`{"api_token":"guru-account-secret-1234","id":"` + order + `","status":"approved","payment":{"total":199.9}}`)}
		records = append(records, d)
		guruIDs = append([]uuid.UUID{d.ID}, guruIDs...)
	}
	whole := []byte(strings.Repeat("x", 5000))
	digest := sha256.Sum256(whole)
	refused := inbound.Delivery{ID: uuid.New(), MerchantID: tn.merchant.ID, Provider: "guru", Outcome: inbound.DeliveryUnauthorized,
		HTTPStatus: http.StatusUnauthorized, Error: "api_token does not match", ReceivedAt: start.Add(time.Hour),
		Body: whole[:4096], BodyLength: len(whole), BodySHA256: digest[:]}
	guruIDs = append([]uuid.UUID{refused.ID}, guruIDs...)
	records = append(records, refused,
		inbound.Delivery{ID: uuid.New(), MerchantID: tn.merchant.ID, Provider: "yampi", DedupeKey: "yampi:7001:sale",
			Outcome: inbound.DeliveryUnattributed, HTTPStatus: http.StatusOK, ReceivedAt: start, Body: []byte(`{"event":"order.paid"}`)})
	for i := range 3 {
		records = append(records, inbound.Delivery{ID: uuid.New(), MerchantID: other.merchant.ID, Provider: "guru",
			DedupeKey: fmt.Sprintf("guru:other-%d:sale", i), Outcome: inbound.DeliveryAccepted, HTTPStatus: http.StatusOK,
			ReceivedAt: start.Add(time.Duration(i) * time.Second), Body: []byte(`{}`)})
	}
	if err := store.RecordDeliveries(ctx, records); err != nil {
		t.Fatal(err)
	}

	// Newest first, in pages.
	var listed []string
	for page, n := range []int{10, 10, 5, 0} {
		r := tn.get(t, fmt.Sprintf("/api/v1/integrations/guru/deliveries?page=%d&per_page=10", page+1))
		wantStatus(t, r, http.StatusOK)
		wantPage(t, r, page+1, 10, 25, 3)
		wantLen(t, r, "data", n)
		listed = append(listed, listIDs(t, r)...)
	}
	var want []string
	for _, id := range guruIDs {
		want = append(want, ids.Format(ids.InboundDelivery, id))
	}
	if !slices.Equal(listed, want) {
		t.Errorf("the deliveries, page after page: %v\nwant newest first: %v", listed, want)
	}

	// The first page: the refused delivery, then the last sale.
	r := tn.get(t, "/api/v1/integrations/guru/deliveries")
	wantPage(t, r, 1, 20, 25, 2)
	wantKeys(t, r, "data.0", "id", "provider", "received_at", "status", "outcome", "error", "order_id", "body", "body_sha256", "body_length", "source")
	wantFields(t, r, map[string]any{
		"data.0.status": 401, "data.0.outcome": "unauthorized", "data.0.error": "api_token does not match", "data.0.order_id": nil,
		"data.0.body": nil, "data.0.body_sha256": hex.EncodeToString(digest[:]), "data.0.body_length": 5000,
		"data.0.received_at": "2026-11-20T13:00:00.000Z", "data.0.provider": "guru", "data.0.source": "webhook",
		"data.1.status": 200, "data.1.outcome": "accepted", "data.1.error": "", "data.1.order_id": "guru-order-1023",
		"data.1.body.api_token": inbound.Redacted, "data.1.body.id": "guru-order-1023",
		"data.1.body_sha256": nil, "data.1.body_length": nil, "data.1.received_at": "2026-11-20T12:23:00.000Z",
	})
	if strings.Contains(string(r.raw), "guru-account-secret-1234") {
		t.Errorf("the list shows the Guru token: %s", r.raw)
	}

	// The other provider, the other merchant.
	r = tn.get(t, "/api/v1/integrations/yampi/deliveries")
	wantPage(t, r, 1, 20, 1, 1)
	wantFields(t, r, map[string]any{"data.0.outcome": "unattributed", "data.0.order_id": "7001", "data.0.body.event": "order.paid"})
	r = other.get(t, "/api/v1/integrations/guru/deliveries")
	wantPage(t, r, 1, 20, 3, 1)
	for _, id := range listIDs(t, r) {
		if slices.Contains(want, id) {
			t.Errorf("the other merchant's key lists %s", id)
		}
	}
	wantOnePage(t, other.get(t, "/api/v1/integrations/yampi/deliveries"), []string{})

	wantError(t, tn.get(t, "/api/v1/integrations/stripe/deliveries"), http.StatusNotFound, "not_found", "provider")
	wantError(t, tn.get(t, "/api/v1/integrations/guru/deliveries?per_page=101"), http.StatusBadRequest, "validation_error", "per_page")
	wantError(t, env.call(t, request{method: http.MethodGet, path: "/api/v1/integrations/guru/deliveries"}),
		http.StatusUnauthorized, "unauthorized", "")
	v.WantExercised(t, ex("listInboundDeliveries", 200), ex("listInboundDeliveries", 400),
		ex("listInboundDeliveries", 401), ex("listInboundDeliveries", 404))
}
