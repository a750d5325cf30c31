package postgres

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/audit"
)

// AuditStore reads the merchants' audit trails. The events themselves are
// written by the store of each change, in its transaction (insertAudit).
type AuditStore struct{ pool *pgxpool.Pool }

var _ audit.Trail = (*AuditStore)(nil)

// NewAuditStore returns an AuditStore.
func NewAuditStore(pool *pgxpool.Pool) *AuditStore { return &AuditStore{pool: pool} }

// insertAudit writes e in tx: the caller's change and its event commit or
// roll back together.
func insertAudit(ctx context.Context, tx pgx.Tx, e audit.Event) error {
	details, err := json.Marshal(e.Details)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO audit_events (merchant_id, id, action, actor_type, actor_id, actor_label,
  target_type, target_id, ip, details, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.MerchantID, e.ID, e.Action, e.Actor.Type, e.Actor.ID, e.Actor.Label, e.Target.Type, e.Target.ID, e.IP,
		details, e.CreatedAt)
	return err
}

// writeAudit writes, in tx, the event of action on target by the actor
// ctx carries (audit.WithActor), stamped on the clock it carries
// (audit.Now).
//
// The event's foreign key takes a share lock on the merchant's row, which
// CreateCampaign and a move of the default campaign hold exclusively while
// they lock the merchant's campaigns and coupon provisions. So a
// transaction writes its event before it locks any of those rows, or takes
// the merchant's share lock first (UpdateCampaign, ReplaceTiers): the two
// then never wait for each other.
func writeAudit(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, action string, target audit.Target, details map[string]any) error {
	return insertAudit(ctx, tx, audit.New(ctx, merchantID, action, target, details, audit.Now(ctx)))
}

// ListAuditEvents returns a page of the merchant's events selected by f,
// newest first with ties broken by id, and how many f selects in all.
func (s *AuditStore) ListAuditEvents(ctx context.Context, merchantID uuid.UUID, f audit.Filter) ([]audit.Event, int, error) {
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, id, action, actor_type, actor_id, actor_label, target_type,
  target_id, ip, details, created_at, count(*) OVER ()
FROM audit_events WHERE merchant_id = $1 AND ($2 = '' OR action = $2)
ORDER BY created_at DESC, id DESC OFFSET $3 LIMIT $4`, merchantID, f.Action, f.Offset, f.Limit)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (audit.Event, error) {
		var e audit.Event
		var details []byte
		err := row.Scan(&e.MerchantID, &e.ID, &e.Action, &e.Actor.Type, &e.Actor.ID, &e.Actor.Label, &e.Target.Type,
			&e.Target.ID, &e.IP, &details, &e.CreatedAt, &total)
		if err == nil {
			err = json.Unmarshal(details, &e.Details)
		}
		return e, err
	})
	if err != nil {
		return nil, 0, err
	}
	if len(list) == 0 && f.Offset > 0 {
		// A page past the end still tells the total.
		err = s.pool.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE merchant_id = $1 AND ($2 = '' OR action = $2)`,
			merchantID, f.Action).Scan(&total)
	}
	return list, total, err
}
