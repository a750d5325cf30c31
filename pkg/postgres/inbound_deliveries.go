package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/inbound"
)

// DeliveryStore writes inbound delivery records (it implements
// ingest.RecordStore). The ingest never calls it: records reach it through
// the broker and the recorder, a batch at a time; the records of accepted
// deliveries travel inside their commands and the ledger writes them
// (queueDeliveries, in ledgerTx.Write).
type DeliveryStore struct{ pool *pgxpool.Pool }

// NewDeliveryStore returns a DeliveryStore.
func NewDeliveryStore(pool *pgxpool.Pool) *DeliveryStore { return &DeliveryStore{pool: pool} }

// RecordDeliveries stores ds in one statement (queueDeliveries). It is
// idempotent by delivery id: a record already stored (a batch redelivered
// after a crash) is left as it is, with one exception. A sale answered 503
// has two records under one id when the broker took its command late: the
// "accepted" record that travelled with the command the writer kept
// retrying after the ingest gave up (the ledger writes it; member_erased
// when it found the member erased), and the
// "unavailable" one of the answer given (the recorder writes it). The 503
// is what the platform saw, so it wins, whichever arrives first.
func (s *DeliveryStore) RecordDeliveries(ctx context.Context, ds []inbound.Delivery) error {
	b := &pgx.Batch{}
	queueDeliveries(b, ds)
	if b.Len() == 0 {
		return nil
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	return nil
}

// queueDeliveries queues the insert of ds into b (see RecordDeliveries),
// in the order of their ids, so that the recorder's and the ledger's
// inserts of the same ids never wait for each other in a cycle.
func queueDeliveries(b *pgx.Batch, ds []inbound.Delivery) {
	ds = answeredRecords(ds)
	n := len(ds)
	if n == 0 {
		return
	}
	slices.SortFunc(ds, func(a, b inbound.Delivery) int {
		if c := bytes.Compare(a.MerchantID[:], b.MerchantID[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	merchants, ids := make([]uuid.UUID, n), make([]uuid.UUID, n)
	providers, keys, outcomes, errs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	statuses := make([]int32, n)
	headers := make([]string, n)
	bodies, digests := make([][]byte, n), make([][]byte, n)
	lengths := make([]int32, n) // -1 for none (NULL): see referralCols.creditTxn
	received := make([]time.Time, n)
	sources := make([]string, n)
	for i, d := range ds {
		sources[i] = d.Source
		if sources[i] == "" {
			sources[i] = inbound.SourceWebhook
		}
		h, err := json.Marshal(d.Headers)
		if err != nil || d.Headers == nil {
			h = []byte("{}")
		}
		body := d.Body
		if body == nil {
			body = []byte{}
		}
		merchants[i], ids[i], providers[i], keys[i] = d.MerchantID, d.ID, d.Provider, d.DedupeKey
		outcomes[i], statuses[i], errs[i], headers[i], bodies[i], received[i] = d.Outcome, int32(d.HTTPStatus), d.Error, string(h), body, d.ReceivedAt
		lengths[i] = -1
		if d.BodySHA256 != nil {
			lengths[i], digests[i] = int32(min(d.BodyLength, math.MaxInt32)), d.BodySHA256
		}
	}
	b.Queue(`INSERT INTO inbound_deliveries (merchant_id, id, provider, dedupe_key, outcome, http_status, error, headers, body,
    body_length, body_sha256, received_at, source)
SELECT k.merchant_id, k.id, k.provider, k.dedupe_key, k.outcome, k.http_status, k.error, k.headers, k.body,
    nullif(k.body_length, -1), k.body_sha256, k.received_at, k.source
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::jsonb[], $9::bytea[],
    $10::int[], $11::bytea[], $12::timestamptz[], $13::text[])
  AS k(merchant_id, id, provider, dedupe_key, outcome, http_status, error, headers, body, body_length, body_sha256,
    received_at, source)
ON CONFLICT (merchant_id, id) DO UPDATE SET outcome = EXCLUDED.outcome, http_status = EXCLUDED.http_status, error = EXCLUDED.error
WHERE EXCLUDED.outcome = '`+inbound.DeliveryUnavailable+`'
  AND inbound_deliveries.outcome IN ('`+inbound.DeliveryAccepted+`', '`+inbound.DeliveryMemberErased+`')`,
		merchants, ids, providers, keys, outcomes, statuses, errs, headers, bodies, lengths, digests, received, sources)
}

// answeredRecords keeps one record per delivery id, the 503 when there is
// one (see RecordDeliveries): a row may not be written twice by one INSERT.
func answeredRecords(ds []inbound.Delivery) []inbound.Delivery {
	type key struct{ merchant, id uuid.UUID }
	at := make(map[key]int, len(ds))
	out := ds[:0:0]
	for _, d := range ds {
		k := key{d.MerchantID, d.ID}
		i, seen := at[k]
		switch {
		case !seen:
			at[k] = len(out)
			out = append(out, d)
		case d.Outcome == inbound.DeliveryUnavailable:
			out[i] = d
		}
	}
	return out
}

// ListDeliveries returns the merchant's last limit delivery records from
// provider, newest first, without their bodies (the dashboard's list).
func (s *DeliveryStore) ListDeliveries(ctx context.Context, merchantID uuid.UUID, provider string, limit int) ([]inbound.Delivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, outcome, http_status, error, received_at, source FROM inbound_deliveries
WHERE merchant_id = $1 AND provider = $2 ORDER BY received_at DESC, id LIMIT $3`, merchantID, provider, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (inbound.Delivery, error) {
		d := inbound.Delivery{MerchantID: merchantID, Provider: provider}
		var status int32
		err := row.Scan(&d.ID, &d.Outcome, &status, &d.Error, &d.ReceivedAt, &d.Source)
		d.HTTPStatus = int(status)
		return d, err
	})
}

// PageDeliveries returns a page of the merchant's delivery records from
// provider, newest first, with their bodies as kept (and, for those refused
// before they authenticated, the length and digest of the whole body), and
// how many records the merchant has from provider: the API's list.
func (s *DeliveryStore) PageDeliveries(ctx context.Context, merchantID uuid.UUID, provider string, offset, limit int) ([]inbound.Delivery, int, error) {
	var list []inbound.Delivery
	total := 0
	b := &pgx.Batch{}
	b.Queue(`SELECT id, dedupe_key, `+keptColumns+` FROM inbound_deliveries
WHERE merchant_id = $1 AND provider = $2 ORDER BY received_at DESC, id DESC OFFSET $3 LIMIT $4`, merchantID, provider, offset, limit).Query(
		func(rows pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (inbound.Delivery, error) {
				d := inbound.Delivery{MerchantID: merchantID, Provider: provider}
				return d, scanKept(row, &d, &d.ID, &d.DedupeKey)
			})
			return err
		})
	b.Queue(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND provider = $2`, merchantID, provider).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, fmt.Errorf("page deliveries: %w", err)
	}
	return list, total, nil
}

// FindDelivery returns one of the merchant's delivery records with its
// body as kept (and, for a delivery refused before it authenticated, the
// length and digest of the whole body); another merchant's or an unknown
// id is apperr.NotFound.
func (s *DeliveryStore) FindDelivery(ctx context.Context, merchantID, id uuid.UUID) (*inbound.Delivery, error) {
	d := &inbound.Delivery{MerchantID: merchantID, ID: id}
	err := scanKept(s.pool.QueryRow(ctx, `SELECT provider, dedupe_key, `+keptColumns+`
FROM inbound_deliveries WHERE merchant_id = $1 AND id = $2`, merchantID, id), d, &d.Provider, &d.DedupeKey)
	if err != nil {
		return nil, notFound(err, "delivery not found")
	}
	return d, nil
}

// keptColumns are what a delivery record keeps of the answer and the body
// (scanKept reads them).
const keptColumns = `outcome, http_status, error, body, body_length, body_sha256, received_at, source`

// scanKept scans row's lead columns into lead, then keptColumns into d.
func scanKept(row pgx.Row, d *inbound.Delivery, lead ...any) error {
	var status int32
	var length *int32
	if err := row.Scan(append(lead, &d.Outcome, &status, &d.Error, &d.Body, &length, &d.BodySHA256, &d.ReceivedAt, &d.Source)...); err != nil {
		return err
	}
	d.HTTPStatus = int(status)
	if length != nil {
		d.BodyLength = int(*length)
	}
	return nil
}
