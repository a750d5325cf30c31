package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/outbox"
)

// MemberStore keeps members. It never writes wallets: a member's wallet
// row appears with its first ledger command.
type MemberStore struct {
	pool  *pgxpool.Pool
	relay *outbox.Relay
}

// NewMemberStore returns a MemberStore.
func NewMemberStore(pool *pgxpool.Pool) *MemberStore { return &MemberStore{pool: pool} }

// WithRelay returns a copy of s that relays the member events it writes as
// soon as they are committed, rather than leaving them to the scheduler's
// sweep of stranded outbox rows.
func (s *MemberStore) WithRelay(r *outbox.Relay) *MemberStore {
	c := *s
	c.relay = r
	return &c
}

// relayed publishes committed records; a failure leaves them to the sweep.
func (s *MemberStore) relayed(ctx context.Context, recs ...outbox.Record) {
	if s.relay != nil {
		_ = s.relay.Relay(context.WithoutCancel(ctx), recs)
	}
}

const memberColumns = `m.merchant_id, m.id, m.email, m.name, m.external_id, m.coupon_code, m.campaign_id, m.status,
  m.metadata, m.document, m.phone, m.created_at, m.updated_at`

func scanMember(row pgx.Row) (*member.Member, error) {
	m := &member.Member{}
	var meta []byte
	err := row.Scan(&m.MerchantID, &m.ID, &m.Email, &m.Name, &m.ExternalID, &m.CouponCode, &m.CampaignID,
		&m.Status, &meta, &m.Document, &m.Phone, &m.CreatedAt, &m.UpdatedAt)
	if err != nil {
		return nil, err
	}
	m.Metadata = map[string]any{}
	// UseNumber keeps integers beyond 2^53 exact on the way back out.
	dec := json.NewDecoder(bytes.NewReader(meta))
	dec.UseNumber()
	if err := dec.Decode(&m.Metadata); err != nil {
		return nil, fmt.Errorf("member %s metadata: %w", m.ID, err)
	}
	return m, nil
}

// CreateMember stores m with a fresh referral code made with codePrefix,
// retrying on the rare code collision. An email already used by another
// member of the merchant is apperr.EmailExists; an unknown campaign is
// apperr.Invalid.
func (s *MemberStore) CreateMember(ctx context.Context, m *member.Member, codePrefix string) error {
	if m.ID == uuid.Nil {
		m.ID = uuid.New()
	}
	if m.Status == "" {
		m.Status = member.StatusActive
	}
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	meta, err := json.Marshal(m.Metadata)
	if err != nil {
		return apperr.Errorf(apperr.Invalid, "metadata must be a JSON object")
	}
	for attempt := 0; ; attempt++ {
		m.CouponCode = member.NewCode(codePrefix, m.Name)
		var rec outbox.Record
		err = InTx(ctx, s.pool, func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, `INSERT INTO members (merchant_id, id, email, name, external_id, coupon_code,
  campaign_id, status, metadata, document, phone) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
  RETURNING created_at, updated_at`, m.MerchantID, m.ID, m.Email, m.Name, m.ExternalID, m.CouponCode,
				m.CampaignID, m.Status, meta, m.Document, m.Phone).Scan(&m.CreatedAt, &m.UpdatedAt); err != nil {
				return err
			}
			if rec, err = member.Created(m); err != nil {
				return err
			}
			return insertOutbox(ctx, tx, rec)
		})
		switch {
		case err == nil:
			s.relayed(ctx, rec)
			return nil
		case isUniqueViolation(err, "members_coupon") && attempt < 10:
			continue
		case isUniqueViolation(err, "members_email"):
			return apperr.Errorf(apperr.EmailExists, "a member with this email already exists")
		case pgErrCode(err) == "23503":
			return apperr.Errorf(apperr.Invalid, "campaign_id: no such campaign")
		}
		return err
	}
}

// memberFigures reads the member's wallet snapshot and referral count as
// they stand in tx, for its member.updated event.
func memberFigures(ctx context.Context, tx pgx.Tx, m *member.Member) (member.Figures, error) {
	var f member.Figures
	err := tx.QueryRow(ctx, `SELECT
  COALESCE(w.pending, 0), COALESCE(w.available, 0), COALESCE(w.total_earned, 0),
  (SELECT count(*) FROM referrals WHERE merchant_id = $1 AND member_id = $2)
FROM (SELECT) AS one LEFT JOIN wallets w ON w.merchant_id = $1 AND w.member_id = $2`, m.MerchantID, m.ID).Scan(
		&f.Pending, &f.Available, &f.TotalEarned, &f.TotalReferrals)
	return f, err
}

// FindMemberByID returns the merchant's member, or apperr.NotFound.
func (s *MemberStore) FindMemberByID(ctx context.Context, merchantID, id uuid.UUID) (*member.Member, error) {
	m, err := scanMember(s.pool.QueryRow(ctx, `SELECT `+memberColumns+` FROM members m
  WHERE m.merchant_id = $1 AND m.id = $2`, merchantID, id))
	if err != nil {
		return nil, notFound(err, "member not found")
	}
	return m, nil
}

// FindMemberByEmailOrExternalID looks a member up by email
// (case-insensitive) and/or external id; when both are given a member
// matching either is returned, the email match first. apperr.NotFound when
// none matches.
func (s *MemberStore) FindMemberByEmailOrExternalID(ctx context.Context, merchantID uuid.UUID, email, externalID string) (*member.Member, error) {
	m, err := scanMember(s.pool.QueryRow(ctx, `SELECT `+memberColumns+` FROM members m
  WHERE m.merchant_id = $1 AND (($2 <> '' AND lower(m.email) = lower($2)) OR ($3 <> '' AND m.external_id = $3))
  ORDER BY ($2 <> '' AND lower(m.email) = lower($2)) DESC LIMIT 1`, merchantID, email, externalID))
	if err != nil {
		return nil, notFound(err, "member not found")
	}
	return m, nil
}

// FindMemberByCoupon resolves a referral code (case-insensitive) to its
// member id, or apperr.NotFound.
func (s *MemberStore) FindMemberByCoupon(ctx context.Context, merchantID uuid.UUID, code string) (uuid.UUID, error) {
	var id uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT id FROM members WHERE merchant_id = $1 AND upper(coupon_code) = upper($2)`,
		merchantID, code).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, apperr.Errorf(apperr.NotFound, "no member with this coupon")
	}
	return id, err
}

// MemberStats returns the member's referral count. (Earnings come from the
// wallet: stats.total_earnings is its total_earned.)
func (s *MemberStore) MemberStats(ctx context.Context, merchantID, id uuid.UUID) (member.Stats, error) {
	var st member.Stats
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM referrals WHERE merchant_id = $1 AND member_id = $2`,
		merchantID, id).Scan(&st.TotalReferrals)
	return st, err
}
