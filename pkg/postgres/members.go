package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/privacy"
	"github.com/convida/convida/pkg/report"
)

// MemberStore keeps members. It never writes wallets: a member's wallet
// row appears with its first ledger command.
type MemberStore struct {
	pool    *pgxpool.Pool
	relay   *outbox.Relay
	now     func() time.Time // created_at, updated_at, erased_at and the events' times
	answers privacy.Answers  // the API's kept answers an erasure forgets; nil: none
	log     *zap.Logger
}

// The contracts the API and the dashboard share.
var (
	_ member.Store   = (*MemberStore)(nil)
	_ member.Updater = (*MemberStore)(nil)
	_ member.Eraser  = (*MemberStore)(nil)
)

// NewMemberStore returns a MemberStore on the real clock.
func NewMemberStore(pool *pgxpool.Pool) *MemberStore {
	return &MemberStore{pool: pool, now: time.Now, log: zap.NewNop()}
}

// WithClock returns a copy of s whose times come from now: the program's
// clock, which a test pins.
func (s *MemberStore) WithClock(now func() time.Time) *MemberStore {
	c := *s
	c.now = now
	return &c
}

// WithRelay returns a copy of s that relays the member events it writes as
// soon as they are committed, rather than leaving them to the scheduler's
// sweep of stranded outbox rows.
func (s *MemberStore) WithRelay(r *outbox.Relay) *MemberStore {
	c := *s
	c.relay = r
	return &c
}

// WithAnswers returns a copy of s whose erasures forget the kept API
// answers that show the erased member (redisx.Idempotency), logging on log
// when they cannot.
func (s *MemberStore) WithAnswers(a privacy.Answers, log *zap.Logger) *MemberStore {
	c := *s
	c.answers, c.log = a, log
	return &c
}

// relayed publishes committed records; a failure leaves them to the sweep.
func (s *MemberStore) relayed(ctx context.Context, recs ...outbox.Record) {
	if s.relay != nil {
		_ = s.relay.Relay(context.WithoutCancel(ctx), recs)
	}
}

const memberColumns = `m.merchant_id, m.id, m.email, m.name, m.external_id, m.coupon_code, m.campaign_id, m.status,
  m.metadata, m.document, m.phone, m.created_at, m.updated_at, m.erased_at`

// memberDest are the scan destinations of memberColumns; done finishes
// what they cannot (the nullable erased_at).
func memberDest(m *member.Member, meta *[]byte) (dest []any, done func()) {
	var erasedAt *time.Time
	dest = []any{&m.MerchantID, &m.ID, &m.Email, &m.Name, &m.ExternalID, &m.CouponCode, &m.CampaignID,
		&m.Status, meta, &m.Document, &m.Phone, &m.CreatedAt, &m.UpdatedAt, &erasedAt}
	return dest, func() {
		if erasedAt != nil {
			m.ErasedAt = *erasedAt
		}
	}
}

func scanMember(row pgx.Row) (*member.Member, error) {
	m := &member.Member{}
	var meta []byte
	dest, done := memberDest(m, &meta)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	done()
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
		return apperr.Invalidf("metadata", apperr.RuleFormat, "must be a JSON object")
	}
	for attempt := 0; ; attempt++ {
		m.CouponCode = member.NewCode(codePrefix, m.Name)
		var rec outbox.Record
		err = InTx(ctx, s.pool, func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, `INSERT INTO members (merchant_id, id, email, name, external_id, coupon_code,
  campaign_id, status, metadata, document, phone, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
  RETURNING created_at, updated_at`, m.MerchantID, m.ID, m.Email, m.Name, m.ExternalID, m.CouponCode,
				m.CampaignID, m.Status, meta, m.Document, m.Phone, s.now()).Scan(&m.CreatedAt, &m.UpdatedAt); err != nil {
				return err
			}
			if rec, err = member.Created(m); err != nil {
				return err
			}
			// The member's code as a coupon at the platforms, carried out
			// by the dispatcher: its failure never fails the creation.
			if _, err := wantMemberCoupons(ctx, tx, m.MerchantID, m.ID); err != nil {
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
			return apperr.Invalidf("campaign_id", apperr.RuleUnknown, "no such campaign")
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
// none matches. An erased member is found by its id only: her old e-mail
// is gone, and her erased one names nobody a caller could know.
func (s *MemberStore) FindMemberByEmailOrExternalID(ctx context.Context, merchantID uuid.UUID, email, externalID string) (*member.Member, error) {
	m, err := scanMember(s.pool.QueryRow(ctx, `SELECT `+memberColumns+` FROM members m
  WHERE m.merchant_id = $1 AND (($2 <> '' AND lower(m.email) = lower($2)) OR ($3 <> '' AND m.external_id = $3))
    AND m.erased_at IS NULL
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

// memberFilterWhere selects the members of merchant $1 matching the filter
// $2 (status, empty for any), $3 (campaign, NULL for any), $4 (an escaped
// ILIKE substring pattern, NULL for any), $5 (an escaped LIKE prefix
// pattern, NULL for any: served by the *_prefix indexes of migration 00010)
// and coming after the cursor ($6, $7), NULL for the start.
const memberFilterWhere = `m.merchant_id = $1 AND ($2 = '' OR m.status = $2)
  AND ($3::uuid IS NULL OR m.campaign_id = $3)
  AND ($4::text IS NULL OR m.name ILIKE $4 ESCAPE '\' OR m.email ILIKE $4 ESCAPE '\')
  AND ($5::text IS NULL OR lower(m.name) LIKE lower($5) ESCAPE '\' OR lower(m.email) LIKE lower($5) ESCAPE '\'
       OR upper(m.coupon_code) LIKE upper($5) ESCAPE '\')
  AND ($6::timestamptz IS NULL OR (m.created_at, m.id) < ($6, $7::uuid))`

// memberFilterArgs are the parameters of memberFilterWhere for f, with the
// status taken from status rather than f (the tabs count every status).
func memberFilterArgs(merchantID uuid.UUID, f member.Filter, status string, after *cursor) []any {
	return append([]any{merchantID, status, nilIfZero(f.CampaignID), containsPattern(f.Search), prefixPattern(f.Prefix)},
		cursorArgs(after)...)
}

// memberPageSQL reads a page of memberFilterWhere ($8 offset, $9 limit),
// each member with its wallet snapshot and referral count. The page is
// chosen first, so only its members are joined.
const memberPageSQL = `SELECT ` + memberColumns + `,
  COALESCE(w.pending, 0), COALESCE(w.available, 0), COALESCE(w.total_earned, 0), rs.total_referrals
FROM (SELECT m.merchant_id, m.id FROM members m WHERE ` + memberFilterWhere + `
      ORDER BY m.created_at DESC, m.id DESC OFFSET $8 LIMIT $9) p
JOIN members m ON m.merchant_id = p.merchant_id AND m.id = p.id
LEFT JOIN wallets w ON w.merchant_id = m.merchant_id AND w.member_id = m.id
CROSS JOIN LATERAL (SELECT count(*) AS total_referrals
  FROM referrals r WHERE r.merchant_id = m.merchant_id AND r.member_id = m.id) rs
ORDER BY m.created_at DESC, m.id DESC`

var memberTabsSQL = tabsSQL("members", "m", memberFilterWhere, member.StatusActive, member.StatusInactive, member.StatusBlocked)

func scanListedMember(row pgx.CollectableRow) (member.Listed, error) {
	var l member.Listed
	var meta []byte
	m := &l.Member
	dest, done := memberDest(m, &meta)
	err := row.Scan(append(dest, &l.Pending, &l.Available, &l.TotalEarned, &l.Stats.TotalReferrals)...)
	if err != nil {
		return l, err
	}
	done()
	m.Metadata, err = decodeMetadata(m.ID, meta)
	return l, err
}

// ListMembers returns a page of the merchant's members matching f, newest
// first with ties broken by id, each with its wallet snapshot and referral
// stats, and the number of members matching f, exact, in one round trip.
func (s *MemberStore) ListMembers(ctx context.Context, merchantID uuid.UUID, f member.Filter) ([]member.Listed, int, error) {
	var list []member.Listed
	total := 0
	b := &pgx.Batch{}
	b.Queue(memberPageSQL, append(memberFilterArgs(merchantID, f, f.Status, nil), f.Offset, f.Limit)...).Query(
		func(rows pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rows, scanListedMember)
			return err
		})
	b.Queue(`SELECT count(*) FROM members m WHERE `+memberFilterWhere, memberFilterArgs(merchantID, f, f.Status, nil)...).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// MembersPage returns a page of the merchant's members matching f, as
// ListMembers does, and the members matching f counted by status up to
// report.TabCap (the page's tabs; f.Status chooses the tab, not the counts), in
// one round trip.
func (s *MemberStore) MembersPage(ctx context.Context, merchantID uuid.UUID, f member.Filter) ([]member.Listed, report.Tabs, error) {
	var list []member.Listed
	tabs := newTabs(member.StatusActive, member.StatusInactive, member.StatusBlocked)
	b := &pgx.Batch{}
	b.Queue(memberPageSQL, append(memberFilterArgs(merchantID, f, f.Status, nil), f.Offset, f.Limit)...).Query(
		func(rows pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rows, scanListedMember)
			return err
		})
	b.Queue(memberTabsSQL, memberFilterArgs(merchantID, f, "", nil)...).Query(collectTabs(tabs))
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, err
	}
	return list, tabs, nil
}

// MemberRows yields every member of the merchant matching f (its Offset
// and Limit ignored), newest first, read ExportBatch at a time: the CSV
// export. The sequence ends at the first error, yielded.
func (s *MemberStore) MemberRows(ctx context.Context, merchantID uuid.UUID, f member.Filter) iter.Seq2[member.Listed, error] {
	return batches(ctx, func(ctx context.Context, after *cursor, limit int) ([]member.Listed, error) {
		rows, err := s.pool.Query(ctx, memberPageSQL, append(memberFilterArgs(merchantID, f, f.Status, after), 0, limit)...)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, scanListedMember)
	}, func(l member.Listed) cursor { return cursor{l.CreatedAt, l.ID} })
}

// UpdateMember applies upd to the merchant's member and returns it as
// stored. A nil field is left as it is; updated_at always moves forward,
// by at least a millisecond (the precision the API shows). An unknown
// member is apperr.NotFound; a campaign the merchant does not have is
// apperr.Invalid. Repeating an update is safe. A campaign_id given asks
// for the member's coupons at the platforms again, with that campaign's
// referee discount. An erased member refuses a name, an external id or
// metadata (apperr.InvalidState, member.CheckUpdate).
func (s *MemberStore) UpdateMember(ctx context.Context, merchantID, id uuid.UUID, upd member.Update) (*member.Member, error) {
	var meta []byte
	if upd.Metadata != nil {
		var err error
		if meta, err = json.Marshal(upd.Metadata); err != nil {
			return nil, apperr.Invalidf("metadata", apperr.RuleFormat, "must be a JSON object")
		}
	}
	if upd.Status != nil && !member.ValidStatus(*upd.Status) {
		return nil, apperr.Invalidf("status", apperr.RuleNotAllowed, "must be active, inactive or blocked")
	}
	var m *member.Member
	var rec outbox.Record
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if upd.SetsPersonalData() {
			before, err := scanMember(tx.QueryRow(ctx, `SELECT `+memberColumns+` FROM members m
  WHERE m.merchant_id = $1 AND m.id = $2 FOR UPDATE`, merchantID, id))
			if err != nil {
				return err
			}
			if err := member.CheckUpdate(before, upd); err != nil {
				return err
			}
		}
		m, err = scanMember(tx.QueryRow(ctx, `UPDATE members m SET
  name = COALESCE($3, m.name),
  external_id = COALESCE($4, m.external_id),
  campaign_id = COALESCE($5, m.campaign_id),
  status = COALESCE($6, m.status),
  metadata = COALESCE($7::jsonb, m.metadata),
  updated_at = greatest($8, m.updated_at + interval '1 millisecond')
WHERE m.merchant_id = $1 AND m.id = $2
RETURNING `+memberColumns, merchantID, id, upd.Name, upd.ExternalID, upd.CampaignID, upd.Status, meta, s.now()))
		if err != nil {
			return err
		}
		f, err := memberFigures(ctx, tx, m)
		if err != nil {
			return err
		}
		if rec, err = member.Updated(m, f); err != nil {
			return err
		}
		if upd.CampaignID != nil { // the coupon follows the discount of the member's campaign
			if _, err := wantMemberCoupons(ctx, tx, merchantID, id); err != nil {
				return err
			}
		}
		return insertOutbox(ctx, tx, rec)
	})
	switch {
	case err == nil:
		s.relayed(ctx, rec)
		return m, nil
	case pgErrCode(err) == "23503":
		return nil, apperr.Invalidf("campaign_id", apperr.RuleUnknown, "no such campaign")
	}
	return nil, notFound(err, "member not found")
}

// decodeMetadata reads a jsonb object keeping integers exact, as scanMember
// does.
func decodeMetadata(id uuid.UUID, raw []byte) (map[string]any, error) {
	meta := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "member "+id.String()+" metadata")
	}
	return meta, nil
}

// containsPattern returns the ILIKE pattern (escape character \) matching
// s as a substring, its wildcards taken literally; nil when s is empty.
func containsPattern(s string) *string {
	if s == "" {
		return nil
	}
	p := "%" + likeEscaper.Replace(s) + "%"
	return &p
}

// prefixPattern returns the LIKE pattern (escape character \) matching
// strings that start with s, its wildcards taken literally; nil when s is
// empty.
func prefixPattern(s string) *string {
	if s == "" {
		return nil
	}
	p := likeEscaper.Replace(s) + "%"
	return &p
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// nilIfZero maps uuid.Nil to SQL NULL.
func nilIfZero(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
