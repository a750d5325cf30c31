package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/privacy"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// EraseMember erases the personal data of the merchant's member (LGPD
// art. 18; docs/privacy.md says what and why) and returns the member as
// erased, and whether this call erased it. In one transaction:
//
//   - the member's e-mail, name, external id, document, phone and
//     metadata are replaced (member.Erase), erased_at is set;
//   - the buyer fields of the referrals she made and of those she bought
//     with (by e-mail, or by document) are emptied, her values in their
//     notes replaced; amounts and statuses stay;
//   - her creator profile is deleted (its token stops working);
//   - her coupons at the platforms are asked for again, which switches
//     them off (an erased member's code carries no discount);
//   - the stored copies that hold her data are redacted: the outbox
//     events about her and those referrals, the webhook jobs still owed
//     for them, the receivers' answers to them that echo her, and the
//     platforms' delivery bodies of those orders or naming her e-mail,
//     document or code (the deliveries of sales through her, accepted or
//     not: their buyers'), their bodies emptied, X-Convida-Body-Redacted
//     noted;
//   - member.erased is written to the outbox and audit.MemberErased to the
//     audit trail, with the actor ctx carries.
//
// After the commit the API's kept idempotent answers that show her are
// forgotten (WithAnswers), on a second call too; a failure there is
// logged, and those answers end with their retention (24 h).
//
// Her wallet, ledger entries, transactions and redemptions are not
// touched. The transaction first takes her wallet's row lock, the one the
// ledger takes for each of her commands (creating the empty row when she
// has none yet), so that a ledger batch either commits before the
// erasure, which then finds its events, or loads her erased. Erasing an
// erased member changes nothing and emits nothing (false). An unknown
// member is apperr.NotFound.
func (s *MemberStore) EraseMember(ctx context.Context, merchantID, id uuid.UUID) (*member.Member, bool, error) {
	for attempt := 0; ; attempt++ {
		m, rec, sub, err := s.erase(ctx, merchantID, id)
		switch code := pgErrCode(err); {
		case (code == "40P01" || code == "40001") && attempt < 3:
			continue // a deadlock with a dispatcher's batch over the same webhook jobs
		case err != nil:
			return nil, false, notFound(err, "member not found")
		}
		s.forgetAnswers(ctx, merchantID, sub)
		if rec == nil {
			return m, false, nil
		}
		s.relayed(ctx, *rec)
		return m, true, nil
	}
}

// forgetAnswers deletes the kept API answers of the merchant that show
// sub; a failure (Redis away) is logged with the member's id only.
func (s *MemberStore) forgetAnswers(ctx context.Context, merchantID uuid.UUID, sub privacy.Subject) {
	if s.answers == nil {
		return
	}
	if _, err := s.answers.ForgetAnswers(context.WithoutCancel(ctx), merchantID.String(), sub.AnswerNeedles()); err != nil {
		s.log.Warn("erasure: the kept idempotent answers that show the member were not forgotten; they end with their retention",
			zap.Stringer("merchant_id", merchantID), zap.String("member_id", ids.Format(ids.Member, sub.MemberID)), zap.Error(err))
	}
}

// erase is one try of EraseMember; rec is the member.erased event, nil
// when the member was already erased; sub is whom the erasure is for, as
// the member was before it.
func (s *MemberStore) erase(ctx context.Context, merchantID, id uuid.UUID) (m *member.Member, rec *outbox.Record, sub privacy.Subject, err error) {
	err = InTx(ctx, s.pool, func(tx pgx.Tx) error {
		before, err := scanMember(tx.QueryRow(ctx, `SELECT `+memberColumns+` FROM members m
  WHERE m.merchant_id = $1 AND m.id = $2 FOR UPDATE`, merchantID, id))
		if err != nil {
			return err
		}
		sub = privacy.NewSubject(before)
		if before.IsErased() {
			m = before
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO wallets (merchant_id, member_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			merchantID, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM wallets WHERE merchant_id = $1 AND member_id = $2 FOR UPDATE`,
			merchantID, id); err != nil {
			return err
		}
		now := s.now()
		counts, err := redactCopies(ctx, tx, merchantID, &sub, now)
		if err != nil {
			return err
		}
		if m, err = storeErased(ctx, tx, member.Erase(before, now)); err != nil {
			return err
		}
		f, err := memberFigures(ctx, tx, m)
		if err != nil {
			return err
		}
		r, err := member.Erased(m, f)
		if err != nil {
			return err
		}
		rec = &r
		if err := insertOutbox(ctx, tx, r); err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit.New(ctx, merchantID, audit.MemberErased,
			audit.Target{Type: "member", ID: ids.Format(ids.Member, id)}, counts, now))
	})
	return m, rec, sub, err
}

// storeErased writes e, a member just erased (member.Erase), deletes her
// creator profile and asks for her coupons at the platforms again (an
// erased member's code is switched off there: ClaimCoupons gives it no
// discount). It returns the member as stored.
func storeErased(ctx context.Context, tx pgx.Tx, e *member.Member) (*member.Member, error) {
	meta, err := json.Marshal(e.Metadata)
	if err != nil {
		return nil, err
	}
	m, err := scanMember(tx.QueryRow(ctx, `UPDATE members m SET email = $3, name = $4, external_id = $5,
  document = $6, phone = $7, metadata = $8, erased_at = $9,
  updated_at = greatest($9, m.updated_at + interval '1 millisecond')
WHERE m.merchant_id = $1 AND m.id = $2
RETURNING `+memberColumns, e.MerchantID, e.ID, e.Email, e.Name, e.ExternalID, e.Document, e.Phone, meta, e.ErasedAt))
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM creator_profiles WHERE merchant_id = $1 AND member_id = $2`, e.MerchantID, e.ID); err != nil {
		return nil, err
	}
	_, err = wantMemberCoupons(ctx, tx, e.MerchantID, e.ID)
	return m, err
}

// redactCopies clears the buyer fields of the subject's referrals (those
// she made and those she bought with, added to sub.Referrals) and redacts
// the stored copies of her data: outbox events, webhook jobs, receivers'
// answers that echo her, platforms' delivery bodies. It returns how many
// records of each kind it changed, for the audit event (counts, never
// values).
func redactCopies(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, sub *privacy.Subject, now time.Time) (map[string]any, error) {
	refs, err := clearBuyerFields(ctx, tx, merchantID, sub)
	if err != nil {
		return nil, err
	}
	members := []uuid.UUID{sub.MemberID} // whose events may hold her: hers, and her sellers'
	var keys []string
	for _, r := range refs {
		keys = append(keys, privacy.DeliveryKeys(r.Source, r.OrderID)...)
		if r.MemberID != sub.MemberID {
			members = append(members, r.MemberID)
		}
	}
	events, changed, err := redactEvents(ctx, tx, merchantID, *sub, members)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE webhook_attempts SET response_body = ''
WHERE merchant_id = $1 AND event_id = ANY($2) AND response_body <> ''
  AND EXISTS (SELECT 1 FROM unnest($3::text[]) AS v (value) WHERE strpos(lower(response_body), lower(v.value)) > 0)`,
		merchantID, events, sub.Values()); err != nil {
		return nil, err
	}
	// A body is read as text with encode(…, 'escape'), which takes any
	// bytes (a body cut mid-character included) and keeps ASCII as it is:
	// the needles, an e-mail, a document and her code, are found whatever
	// their letter case. Her code finds the deliveries of sales through
	// her that made no referral (ignored, refused, attributed to nobody):
	// their buyers are hers as much as her referrals' are.
	tag, err := tx.Exec(ctx, `UPDATE inbound_deliveries SET body = '\x'::bytea,
  headers = headers || jsonb_build_object('X-Convida-Body-Redacted', 'personal data erased at ' || $4::text)
WHERE merchant_id = $1 AND id IN (
  SELECT d.id FROM inbound_deliveries d CROSS JOIN LATERAL (SELECT lower(encode(d.body, 'escape')) AS text) b
  WHERE d.merchant_id = $1 AND octet_length(d.body) > 0
    AND (d.dedupe_key = ANY($2) OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS n (needle) WHERE strpos(b.text, n.needle) > 0)))`,
		merchantID, keys, sub.DeliveryNeedles(), now.UTC().Format(time.RFC3339))
	if err != nil {
		return nil, err
	}
	return map[string]any{"fields": []string{"email", "name", "external_id", "document", "phone", "metadata"},
		"referrals": len(refs), "events": changed, "deliveries": tag.RowsAffected()}, nil
}

// clearBuyerFields empties the buyer fields of the referrals sub made and
// of those whose buyer was sub (by e-mail, or by document of
// privacy.MinDocumentDigits), replaces sub's values in their notes, adds
// them to sub.Referrals and returns them. Nothing else of a referral
// changes, its updated_at included: an erasure is no business event.
func clearBuyerFields(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, sub *privacy.Subject) ([]referral.Referral, error) {
	rows, err := tx.Query(ctx, `UPDATE referrals r SET referee_email = '', referee_name = '', referee_external_id = ''
WHERE r.merchant_id = $1 AND (`+purchasesWhere+` OR r.member_id = $4)
RETURNING `+referralColumns, merchantID, sub.Email, sub.DocumentDigits(), sub.MemberID)
	if err != nil {
		return nil, err
	}
	refs, err := pgx.CollectRows(rows, scanReferral)
	if err != nil {
		return nil, err
	}
	var noted []uuid.UUID
	var notes []string
	for _, r := range refs {
		sub.Referrals[r.ID] = true
		if t, changed := sub.Text(r.Notes); changed {
			noted, notes = append(noted, r.ID), append(notes, t)
		}
	}
	_, err = tx.Exec(ctx, `UPDATE referrals r SET notes = k.notes
FROM unnest($2::uuid[], $3::text[]) AS k (id, notes) WHERE r.merchant_id = $1 AND r.id = k.id`, merchantID, noted, notes)
	return refs, err
}

// purchasesWhere selects the referrals r of merchant $1 whose buyer was
// the member of e-mail $2 (letter case ignored) or document digits $3
// (privacy.Subject.DocumentDigits, empty for none).
const purchasesWhere = `(($2 <> '' AND lower(r.referee_email) = lower($2))
  OR ($3 <> '' AND regexp_replace(r.referee_external_id, '[^0-9]', '', 'g') = $3))`

// redactEvents redacts (privacy.Subject.Envelope) the outbox events of
// members whose events may hold sub's data, and the webhook jobs still
// owed for them, which send the same bytes. It returns the ids of the
// events it read and how many it changed. The merchant's outbox is read
// by its key: the relayed rows are kept RETENTION_OUTBOX (7 days).
func redactEvents(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, sub privacy.Subject, members []uuid.UUID) ([]uuid.UUID, int, error) {
	rows, err := tx.Query(ctx, `SELECT event_id, payload::text FROM outbox
WHERE merchant_id = $1 AND member_id = ANY($2) ORDER BY event_id`, merchantID, members)
	if err != nil {
		return nil, 0, err
	}
	var (
		read, changed []uuid.UUID
		payloads      []string
		id            uuid.UUID
		payload       string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &payload}, func() error {
		read = append(read, id)
		out, ch, err := sub.Envelope([]byte(payload))
		if err == nil && ch {
			changed, payloads = append(changed, id), append(payloads, string(out))
		}
		return err
	})
	if err != nil || len(changed) == 0 {
		return read, 0, err
	}
	_, err = tx.Exec(ctx, `UPDATE outbox o SET payload = k.payload::json
FROM unnest($2::uuid[], $3::text[]) AS k (event_id, payload) WHERE o.merchant_id = $1 AND o.event_id = k.event_id`,
		merchantID, changed, payloads)
	if err != nil {
		return nil, 0, err
	}
	_, err = tx.Exec(ctx, `UPDATE webhook_jobs j SET payload = convert_to(k.payload, 'UTF8')
FROM unnest($2::uuid[], $3::text[]) AS k (event_id, payload) WHERE j.merchant_id = $1 AND j.event_id = k.event_id`,
		merchantID, changed, payloads)
	return read, len(changed), err
}

// MemberRecords returns everything held about the merchant's member, read
// in one snapshot (a repeatable-read transaction): the export (GET
// /members/{id}/export). The same transaction writes audit.MemberExported
// with the actor ctx carries, so a read the trail cannot record is not
// returned. An erased member has hers too: what the erasure left. An
// unknown member is apperr.NotFound, and records no event.
func (s *MemberStore) MemberRecords(ctx context.Context, merchantID, id uuid.UUID) (*privacy.Records, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	m, err := scanMember(tx.QueryRow(ctx, `SELECT `+memberColumns+` FROM members m WHERE m.merchant_id = $1 AND m.id = $2`,
		merchantID, id))
	if err != nil {
		return nil, notFound(err, "member not found")
	}
	rec := &privacy.Records{Member: m, Coupons: map[string]redemption.CouponState{}}
	b := &pgx.Batch{}
	queueRecords(b, rec, privacy.NewSubject(m))
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	rec.Stats.TotalReferrals = int64(len(rec.Referrals))
	if err := writeAudit(ctx, tx, merchantID, audit.MemberExported, audit.Target{Type: audit.TargetMember,
		ID: ids.Format(ids.Member, id)}, nil); err != nil {
		return nil, err
	}
	return rec, tx.Commit(ctx)
}

// queueRecords queues the reads of rec's member's records into rec.
func queueRecords(b *pgx.Batch, rec *privacy.Records, sub privacy.Subject) {
	m := rec.Member
	b.Queue(sqlWallet, m.MerchantID, m.ID).QueryRow(func(row pgx.Row) (err error) {
		rec.Wallet, err = scanWallet(row, m.MerchantID, m.ID)
		return err
	})
	b.Queue(`SELECT `+entryColumns+` FROM ledger_entries WHERE merchant_id = $1 AND member_id = $2
  ORDER BY created_at DESC, id DESC`, m.MerchantID, m.ID).Query(func(rows pgx.Rows) (err error) {
		rec.Entries, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (e ledger.Entry, err error) {
			return e, row.Scan(entryDest(&e)...)
		})
		return err
	})
	b.Queue(sqlTransactions, m.MerchantID, m.ID).Query(func(rows pgx.Rows) (err error) {
		rec.Transactions, err = pgx.CollectRows(rows, scanTransaction)
		return err
	})
	all := referral.Filter{MemberID: m.ID}
	b.Queue(referralPageSQL, append(referralFilterArgs(m.MerchantID, all, "", nil), 0, math.MaxInt32)...).Query(
		func(rows pgx.Rows) (err error) {
			rec.Referrals, err = pgx.CollectRows(rows, scanListedReferral)
			return err
		})
	// Her purchases without their referrers: the export names no one else.
	b.Queue(`SELECT `+referralColumns+` FROM referrals r
WHERE r.merchant_id = $1 AND `+purchasesWhere+` ORDER BY r.created_at DESC, r.id DESC`,
		m.MerchantID, sub.Email, sub.DocumentDigits()).Query(func(rows pgx.Rows) (err error) {
		rec.Purchases, err = pgx.CollectRows(rows, scanReferral)
		return err
	})
	reds := redemption.Filter{MemberID: m.ID}
	b.Queue(redemptionPageSQL, append(redemptionFilterArgs(m.MerchantID, reds, "", nil), 0, math.MaxInt32)...).Query(
		func(rows pgx.Rows) error {
			list, err := pgx.CollectRows(rows, scanListedRedemption)
			for _, l := range list {
				rec.Redemptions = append(rec.Redemptions, l.Redemption)
			}
			return err
		})
	b.Queue(`SELECT merchant_id, member_id, display_name, niche, instagram_username, created_at, updated_at
FROM creator_profiles WHERE merchant_id = $1 AND member_id = $2`, m.MerchantID, m.ID).QueryRow(func(row pgx.Row) error {
		var p creator.Profile
		err := row.Scan(&p.MerchantID, &p.MemberID, &p.DisplayName, &p.Niche, &p.InstagramUsername, &p.CreatedAt, &p.UpdatedAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err == nil:
			rec.Creator = &p
		}
		return err
	})
	b.Queue(`SELECT platform, status, COALESCE(coupon_id, ''), COALESCE(error, '') FROM coupon_provisions
WHERE merchant_id = $1 AND member_id = $2`, m.MerchantID, m.ID).Query(func(rows pgx.Rows) error {
		var platform string
		var st redemption.CouponState
		_, err := pgx.ForEachRow(rows, []any{&platform, &st.Status, &st.CouponID, &st.Error}, func() error {
			rec.Coupons[platform] = st
			return nil
		})
		return err
	})
}
