package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/webhook"
)

// WebhookStore keeps the outbound webhook endpoints, their delivery log and
// the deliveries still owed (the dispatcher's jobs). Signing secrets are
// stored only sealed with the secretbox: a database dump does not reveal
// them, and every method that returns an Endpoint returns them opened.
type WebhookStore struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
}

var _ webhook.ManualStore = (*WebhookStore)(nil)

// NewWebhookStore returns a WebhookStore sealing secrets with box.
func NewWebhookStore(pool *pgxpool.Pool, box *secretbox.Box) *WebhookStore {
	return &WebhookStore{pool: pool, box: box}
}

const endpointColumns = `merchant_id, id, url, events, is_active, secret_sealed, previous_secret_sealed,
  previous_secret_expires_at, disabled_reason, failing_since, created_at, updated_at`

// scanEndpoint reads a row of endpointColumns and opens its secrets.
func (s *WebhookStore) scanEndpoint(row pgx.Row) (*webhook.Endpoint, error) {
	e := &webhook.Endpoint{}
	var sealed, prevSealed []byte
	var prevExpires, failing *time.Time
	if err := row.Scan(&e.MerchantID, &e.ID, &e.URL, &e.Events, &e.IsActive, &sealed, &prevSealed, &prevExpires,
		&e.DisabledReason, &failing, &e.CreatedAt, &e.UpdatedAt); err != nil {
		return nil, err
	}
	var err error
	if e.Secret, err = endpointSecretColumn.open(s.box, sealed, e.MerchantID, e.ID.String()); err != nil {
		return nil, err
	}
	if e.PreviousSecret, err = endpointPreviousColumn.open(s.box, prevSealed, e.MerchantID, e.ID.String()); err != nil {
		return nil, err
	}
	if prevExpires != nil {
		e.PreviousSecretExpiresAt = *prevExpires
	}
	if failing != nil {
		e.FailingSince = *failing
	}
	if e.Events == nil {
		e.Events = []string{}
	}
	return e, nil
}

func (s *WebhookStore) collectEndpoints(rows pgx.Rows, err error) ([]webhook.Endpoint, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhook.Endpoint, error) {
		e, err := s.scanEndpoint(row)
		if err != nil {
			return webhook.Endpoint{}, err
		}
		return *e, nil
	})
}

// CreateWebhook stores e (a new ID when e.ID is zero) with its Secret
// sealed and its webhook_endpoint.created event, and fills in ID,
// CreatedAt and UpdatedAt. An unknown merchant is apperr.NotFound.
func (s *WebhookStore) CreateWebhook(ctx context.Context, e *webhook.Endpoint) error {
	if e.Secret == "" {
		return errors.New("webhook store: an endpoint needs a signing secret")
	}
	if e.ID == uuid.Nil {
		e.ID = uuid.New()
	}
	if e.Events == nil {
		e.Events = []string{}
	}
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO webhook_endpoints (merchant_id, id, url, events, is_active, secret_sealed)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at, updated_at`,
			e.MerchantID, e.ID, e.URL, e.Events, e.IsActive, endpointSecretColumn.seal(s.box, e.Secret, e.MerchantID, e.ID.String())).Scan(&e.CreatedAt, &e.UpdatedAt)
		if err != nil {
			return err
		}
		if err := writeAudit(ctx, tx, e.MerchantID, audit.WebhookEndpointCreated, endpointTarget(e.ID), nil); err != nil {
			return err
		}
		return bumpEndpointsVersion(ctx, tx, e.MerchantID)
	})
	if pgErrCode(err) == "23503" {
		return apperr.Errorf(apperr.NotFound, "merchant not found")
	}
	return err
}

// endpointTarget is the audit target of an endpoint, by its API id.
func endpointTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: audit.TargetWebhookEndpoint, ID: ids.Format(ids.Webhook, id)}
}

// ListWebhooks returns the merchant's endpoints, newest first.
func (s *WebhookStore) ListWebhooks(ctx context.Context, merchantID uuid.UUID) ([]webhook.Endpoint, error) {
	return s.collectEndpoints(s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC`, merchantID))
}

// FindWebhook returns the merchant's endpoint, or apperr.NotFound (also for
// another merchant's endpoint).
func (s *WebhookStore) FindWebhook(ctx context.Context, merchantID, id uuid.UUID) (*webhook.Endpoint, error) {
	e, err := s.scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if err != nil {
		return nil, notFound(err, "webhook not found")
	}
	return e, nil
}

// UpdateWebhook applies patch and returns the endpoint as stored, or
// apperr.NotFound. updated_at always moves forward. Setting IsActive (either
// way) is the merchant's decision, so it clears disabled_reason; re-enabling
// also clears failing_since, so the dispatcher's 5-day count starts anew.
// Deactivating drops the deliveries still owed: an inactive endpoint
// receives nothing, and jobs nobody may claim would only weigh on the
// dispatcher's sweep. Repeating an update is safe. An update that changes
// a field writes webhook_endpoint.updated naming the fields it changed.
func (s *WebhookStore) UpdateWebhook(ctx context.Context, merchantID, id uuid.UUID, patch webhook.Patch) (*webhook.Endpoint, error) {
	var out *webhook.Endpoint
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var before webhook.Endpoint
		err := tx.QueryRow(ctx, `SELECT url, events, is_active FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2
FOR UPDATE`, merchantID, id).Scan(&before.URL, &before.Events, &before.IsActive)
		if err != nil {
			return notFound(err, "webhook not found")
		}
		out, err = s.scanEndpoint(tx.QueryRow(ctx, `UPDATE webhook_endpoints e SET
  url = COALESCE($3, e.url),
  events = COALESCE($4::text[], e.events),
  is_active = COALESCE($5::boolean, e.is_active),
  disabled_reason = CASE WHEN $5::boolean IS NULL THEN e.disabled_reason ELSE '' END,
  failing_since = CASE WHEN $5::boolean THEN NULL ELSE e.failing_since END,
  updated_at = greatest(now(), e.updated_at + interval '1 millisecond')
WHERE e.merchant_id = $1 AND e.id = $2
RETURNING `+endpointColumns, merchantID, id, patch.URL, patch.Events, patch.IsActive))
		if err != nil {
			return notFound(err, "webhook not found")
		}
		if patch.IsActive != nil && !*patch.IsActive {
			if _, err = tx.Exec(ctx, `DELETE FROM webhook_jobs WHERE merchant_id = $1 AND webhook_id = $2`, merchantID, id); err != nil {
				return err
			}
		}
		if fields := endpointChanges(before, *out); len(fields) > 0 {
			if err := writeAudit(ctx, tx, merchantID, audit.WebhookEndpointUpdated, endpointTarget(id), audit.Fields(fields)); err != nil {
				return err
			}
		}
		return bumpEndpointsVersion(ctx, tx, merchantID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// endpointChanges names the fields of an endpoint, as the API names them,
// that differ between before and after.
func endpointChanges(before, after webhook.Endpoint) []string {
	changed := []string{}
	if before.URL != after.URL {
		changed = append(changed, "url")
	}
	if !slices.Equal(before.Events, after.Events) {
		changed = append(changed, "events")
	}
	if before.IsActive != after.IsActive {
		changed = append(changed, "is_active")
	}
	return changed
}

// DeleteWebhook deletes the endpoint with its delivery log and pending
// deliveries, writing webhook_endpoint.deleted, or returns
// apperr.NotFound.
func (s *WebhookStore) DeleteWebhook(ctx context.Context, merchantID, id uuid.UUID) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2`, merchantID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return apperr.Errorf(apperr.NotFound, "webhook not found")
		}
		if err := writeAudit(ctx, tx, merchantID, audit.WebhookEndpointDeleted, endpointTarget(id), nil); err != nil {
			return err
		}
		return bumpEndpointsVersion(ctx, tx, merchantID)
	})
}

// RotateWebhookSecret makes newSecret the endpoint's signing secret; the
// current one becomes the previous secret, which keeps signing until
// now+overlap (not at all when overlap ≤ 0). A previous secret still
// overlapping from an earlier rotation is dropped: receivers are expected
// to have moved on to the secret this rotation replaces. It writes
// webhook_endpoint.secret_rotated (never a secret) and returns the
// endpoint, or apperr.NotFound.
func (s *WebhookStore) RotateWebhookSecret(ctx context.Context, merchantID, id uuid.UUID, newSecret string, overlap time.Duration, now time.Time) (*webhook.Endpoint, error) {
	if newSecret == "" {
		return nil, errors.New("webhook store: empty signing secret")
	}
	var e *webhook.Endpoint
	row := id.String()
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// The current secret becomes the previous one: sealed again, since
		// a sealed value is bound to its column.
		var current []byte
		err := tx.QueryRow(ctx, `SELECT secret_sealed FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
			merchantID, id).Scan(&current)
		if err != nil {
			return notFound(err, "webhook not found")
		}
		var previous []byte
		if overlap > 0 {
			plain, err := endpointSecretColumn.open(s.box, current, merchantID, row)
			if err != nil {
				return err
			}
			previous = endpointPreviousColumn.seal(s.box, plain, merchantID, row)
		}
		e, err = s.scanEndpoint(tx.QueryRow(ctx, `UPDATE webhook_endpoints SET
  previous_secret_sealed = $5,
  previous_secret_expires_at = CASE WHEN $6 THEN $4::timestamptz END,
  secret_sealed = $3,
  updated_at = greatest(now(), updated_at + interval '1 millisecond')
WHERE merchant_id = $1 AND id = $2
RETURNING `+endpointColumns, merchantID, id, endpointSecretColumn.seal(s.box, newSecret, merchantID, row), now.Add(overlap),
			previous, overlap > 0))
		if err != nil {
			return err
		}
		if err := writeAudit(ctx, tx, merchantID, audit.WebhookEndpointSecretRotated, endpointTarget(id), nil); err != nil {
			return err
		}
		// The dispatcher's cached endpoint carries the secrets it signs with.
		return bumpEndpointsVersion(ctx, tx, merchantID)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// DisableWebhook switches the endpoint off for reason (shown to the
// merchant) and drops its pending deliveries, or returns apperr.NotFound.
// The dispatcher calls it on a 410 or after days of failures; repeating it
// is safe.
func (s *WebhookStore) DisableWebhook(ctx context.Context, merchantID, id uuid.UUID, reason string) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET is_active = false, disabled_reason = $3,
  updated_at = greatest(now(), updated_at + interval '1 millisecond')
WHERE merchant_id = $1 AND id = $2`, merchantID, id, reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return apperr.Errorf(apperr.NotFound, "webhook not found")
		}
		// A second statement, so that under READ COMMITTED it also sees
		// jobs committed while the UPDATE waited for the row.
		if _, err = tx.Exec(ctx, `DELETE FROM webhook_jobs WHERE merchant_id = $1 AND webhook_id = $2`, merchantID, id); err != nil {
			return err
		}
		return bumpEndpointsVersion(ctx, tx, merchantID)
	})
}

// ActiveEndpoints returns the active endpoints of the merchants, with their
// secrets opened, by merchant (a merchant without one is absent), each
// merchant's oldest first.
func (s *WebhookStore) ActiveEndpoints(ctx context.Context, merchantIDs []uuid.UUID) (map[uuid.UUID][]webhook.Endpoint, error) {
	out := map[uuid.UUID][]webhook.Endpoint{}
	if len(merchantIDs) == 0 {
		return out, nil
	}
	list, err := s.collectEndpoints(s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE merchant_id = ANY($1::uuid[]) AND is_active ORDER BY merchant_id, created_at, id`, merchantIDs))
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		out[e.MerchantID] = append(out[e.MerchantID], e)
	}
	return out, nil
}

// EndpointVersions returns the endpoints version of each merchant (0 for
// one absent from the map): a number that every committed change to the
// merchant's endpoints moves (CreateWebhook, UpdateWebhook, DeleteWebhook,
// RotateWebhookSecret, DisableWebhook) and that never comes back. So
// endpoints read after a version was read are at least as new as it, and
// equal versions read at two moments mean no endpoint changed in between:
// a cache of endpoints tagged with the version read before loading them is
// current while the version stays the same.
func (s *WebhookStore) EndpointVersions(ctx context.Context, merchantIDs []uuid.UUID) (map[uuid.UUID]int64, error) {
	out := map[uuid.UUID]int64{}
	if len(merchantIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, version FROM webhook_endpoint_versions
WHERE merchant_id = ANY($1::uuid[])`, merchantIDs)
	if err != nil {
		return nil, err
	}
	var m uuid.UUID
	var v int64
	_, err = pgx.ForEachRow(rows, []any{&m, &v}, func() error {
		out[m] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// bumpEndpointsVersion moves the merchant's endpoints version in tx, the
// transaction of a change to its endpoints, so the change and the bump are
// seen together. It comes last in the transaction: a transaction holding
// the version's row lock then waits for nothing else, so the lock, which
// serializes the changes of one merchant's endpoints, adds no deadlock.
func bumpEndpointsVersion(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID) error {
	_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoint_versions AS v (merchant_id, version) VALUES ($1, 1)
ON CONFLICT (merchant_id) DO UPDATE SET version = v.version + 1`, merchantID)
	return err
}
