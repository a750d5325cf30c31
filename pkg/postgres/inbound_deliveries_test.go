package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/postgres"
)

// TestRecordDeliveriesKeepsTheAnswerGiven: a record is stored once per
// delivery id, and when a sale answered 503 also has the "accepted" record
// its late broker write produced, the 503 stands, whichever came first and
// whether or not they share a batch.
func TestRecordDeliveriesKeepsTheAnswerGiven(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 0)[0]
	store := postgres.NewDeliveryStore(s.pool)
	record := func(id uuid.UUID, outcome string, status int) inbound.Delivery {
		return inbound.Delivery{ID: id, MerchantID: s.merchant.ID, Provider: "guru", DedupeKey: "guru:o:sale",
			Outcome: outcome, HTTPStatus: status, Body: []byte(`{}`), ReceivedAt: time.Now()}
	}
	accepted := func(id uuid.UUID) inbound.Delivery { return record(id, inbound.DeliveryAccepted, 200) }
	unavailable := func(id uuid.UUID) inbound.Delivery { return record(id, inbound.DeliveryUnavailable, 503) }
	for _, tc := range []struct {
		name    string
		batches func(id uuid.UUID) [][]inbound.Delivery
		want    string
	}{
		{"a redelivered batch is stored once", func(id uuid.UUID) [][]inbound.Delivery {
			return [][]inbound.Delivery{{accepted(id)}, {accepted(id)}}
		}, "accepted 200"},
		{"the 503 replaces the late accepted record", func(id uuid.UUID) [][]inbound.Delivery {
			return [][]inbound.Delivery{{accepted(id)}, {unavailable(id)}}
		}, "unavailable 503"},
		{"the late accepted record leaves the 503", func(id uuid.UUID) [][]inbound.Delivery {
			return [][]inbound.Delivery{{unavailable(id)}, {accepted(id)}}
		}, "unavailable 503"},
		{"both in one batch: the 503", func(id uuid.UUID) [][]inbound.Delivery {
			return [][]inbound.Delivery{{accepted(id), unavailable(id), accepted(id)}}
		}, "unavailable 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := uuid.New()
			for _, b := range tc.batches(id) {
				if err := store.RecordDeliveries(ctx, b); err != nil {
					t.Fatalf("RecordDeliveries: %v", err)
				}
			}
			var n int
			var got string
			if err := s.pool.QueryRow(ctx, `SELECT count(*) OVER (), outcome || ' ' || http_status FROM inbound_deliveries
WHERE merchant_id = $1 AND id = $2`, s.merchant.ID, id).Scan(&n, &got); err != nil {
				t.Fatal(err)
			}
			if n != 1 || got != tc.want {
				t.Errorf("%d rows, record %q; want 1, %q", n, got, tc.want)
			}
		})
	}
}

// TestListAndFindDeliveries: the dashboard reads a merchant's records of
// one provider, newest first, and one record with its body; another
// merchant's record is not found.
func TestListAndFindDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 0, 0)
	store := postgres.NewDeliveryStore(a.pool)
	at := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	older, newer, yampi, other := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	err := store.RecordDeliveries(ctx, []inbound.Delivery{
		{ID: older, MerchantID: a.merchant.ID, Provider: "guru", Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, Body: []byte(`{"id":"o1"}`), ReceivedAt: at},
		{ID: newer, MerchantID: a.merchant.ID, Provider: "guru", Outcome: inbound.DeliveryUnauthorized, HTTPStatus: 401, Error: "bad token", Body: []byte(`{"id":"o2"}`), ReceivedAt: at.Add(time.Minute)},
		{ID: yampi, MerchantID: a.merchant.ID, Provider: "yampi", Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, Body: []byte(`{}`), ReceivedAt: at},
		{ID: other, MerchantID: b.merchant.ID, Provider: "guru", Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, Body: []byte(`{}`), ReceivedAt: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := store.ListDeliveries(ctx, a.merchant.ID, "guru", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != newer || list[1].ID != older {
		t.Fatalf("guru deliveries %+v, want the 401 then the 200", list)
	}
	if l := list[0]; l.Outcome != inbound.DeliveryUnauthorized || l.HTTPStatus != 401 || l.Error != "bad token" || !l.ReceivedAt.Equal(at.Add(time.Minute)) {
		t.Errorf("the newest record reads %+v", l)
	}
	if one, err := store.ListDeliveries(ctx, a.merchant.ID, "guru", 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %d records (%v)", len(one), err)
	}
	d, err := store.FindDelivery(ctx, a.merchant.ID, newer)
	if err != nil || string(d.Body) != `{"id":"o2"}` || d.Provider != "guru" || d.HTTPStatus != 401 {
		t.Errorf("FindDelivery: %+v, %v", d, err)
	}
	if _, err := store.FindDelivery(ctx, a.merchant.ID, other); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("another merchant's record: %v, want NotFound", err)
	}
}

// TestRefusedDeliveryKeepsItsDigest: a delivery refused before it
// authenticated is stored with the length and SHA-256 of its whole body
// beside the part kept; an authenticated one has neither.
func TestRefusedDeliveryKeepsItsDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 0)[0]
	store := postgres.NewDeliveryStore(s.pool)
	whole := bytes.Repeat([]byte("x"), 900_000)
	sum := sha256.Sum256(whole)
	refused, accepted := uuid.New(), uuid.New()
	err := store.RecordDeliveries(ctx, []inbound.Delivery{
		{ID: refused, MerchantID: s.merchant.ID, Provider: "guru", Outcome: inbound.DeliveryUnauthorized, HTTPStatus: 401,
			Body: whole[:4096], BodyLength: len(whole), BodySHA256: sum[:], ReceivedAt: time.Now()},
		{ID: accepted, MerchantID: s.merchant.ID, Provider: "guru", Outcome: inbound.DeliveryAccepted, HTTPStatus: 200,
			Body: []byte(`{}`), ReceivedAt: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := store.FindDelivery(ctx, s.merchant.ID, refused)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Body) != 4096 || d.BodyLength != len(whole) || !bytes.Equal(d.BodySHA256, sum[:]) {
		t.Errorf("refused record: body %d bytes, length %d, digest %x; want 4096, %d, %x", len(d.Body), d.BodyLength, d.BodySHA256, len(whole), sum)
	}
	d, err = store.FindDelivery(ctx, s.merchant.ID, accepted)
	if err != nil {
		t.Fatal(err)
	}
	if d.BodyLength != 0 || d.BodySHA256 != nil {
		t.Errorf("accepted record: length %d, digest %x; want none", d.BodyLength, d.BodySHA256)
	}
	var nulls int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_deliveries WHERE id = $1 AND body_length IS NULL AND body_sha256 IS NULL`,
		accepted).Scan(&nulls); err != nil || nulls != 1 {
		t.Errorf("the accepted record's new columns are not NULL (%d, %v)", nulls, err)
	}
}
