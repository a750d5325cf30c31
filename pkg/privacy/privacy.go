// Package privacy holds the rules of a member's rights over her personal
// data (Brazil's LGPD, art. 18; docs/privacy.md): what an erasure finds
// and replaces in the copies Convida keeps beyond the member's own row
// (Subject), and what an export holds (Records) and shows of other people
// (MadeView, PurchaseOf). The member's own fields are member.Erase's.
package privacy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// Subject is whom an erasure is for: the member's personal values as they
// stood before it, and the referrals whose buyer fields it clears (those
// she made, whose buyers are known through her, and those she bought
// with).
type Subject struct {
	MemberID   uuid.UUID
	Email      string
	Name       string
	ExternalID string
	Document   string
	Phone      string
	// CouponCode is her referral code, kept by the erasure: the key of
	// the deliveries of sales through her, whose buyers are hers.
	CouponCode string
	// Referrals are the ids of the referrals whose buyer fields
	// (referee_email, referee_name, referee_external_id) are cleared.
	Referrals map[uuid.UUID]bool
}

// NewSubject returns the subject of m's erasure, read before it, with no
// referrals yet.
func NewSubject(m *member.Member) Subject {
	return Subject{MemberID: m.ID, Email: strings.TrimSpace(m.Email), Name: strings.TrimSpace(m.Name),
		ExternalID: strings.TrimSpace(m.ExternalID), Document: strings.TrimSpace(m.Document),
		Phone: strings.TrimSpace(m.Phone), CouponCode: strings.TrimSpace(m.CouponCode), Referrals: map[uuid.UUID]bool{}}
}

// Erased is the text that replaces a personal value inside free text (a
// referral's notes).
const Erased = "[erased]"

// MinDocumentDigits is the fewest digits a document needs to be looked for
// in other records: a CPF has 11 and a CNPJ 14, while a shorter one would
// match unrelated numbers.
const MinDocumentDigits = 8

// DocumentDigits returns the digits of the member's document when there
// are enough of them to look for (MinDocumentDigits), "" otherwise: the
// key by which a referral's buyer (referee_external_id holds the buyer's
// CPF or CNPJ) is recognised as her.
func (s Subject) DocumentDigits() string {
	if d := fraud.Digits(s.Document); len(d) >= MinDocumentDigits {
		return d
	}
	return ""
}

// Needles are the lower-case texts whose presence in a platform's raw
// delivery body (lower-cased) means the delivery concerns her: her e-mail,
// and her document as stored and as digits (when it has
// MinDocumentDigits). A body that spells them otherwise (a JSON escape
// inside her e-mail, say) is not found: its body is ended by the
// deliveries' retention (docs/privacy.md).
func (s Subject) Needles() []string {
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		if v = strings.ToLower(v); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	add(s.Email)
	if d := s.DocumentDigits(); d != "" {
		add(s.Document)
		add(d)
	}
	return out
}

// DeliveryNeedles are the lower-case texts whose presence in a platform's
// raw delivery body means the delivery's buyer data is hers to erase: the
// Needles, and her referral code, which every delivery of a sale through
// her carries (its coupon, or the link's parameter) whatever became of it
// (credited, ignored, refused, or attributed to nobody), so that the
// buyers she brought leave those records with her. A code is
// PREFIX-NAME-XXXX (member.NewCode): it is found only where it was sent.
func (s Subject) DeliveryNeedles() []string {
	out := s.Needles()
	if c := strings.ToLower(s.CouponCode); c != "" && !slices.Contains(out, c) {
		out = append(out, c)
	}
	return out
}

// AnswerNeedles are the lower-case texts whose presence in an answer the
// API keeps for its idempotent replays means the answer shows her: her id
// (mem_… and the bare UUID of the member-facing API) and the Needles, her
// e-mail and document. Every answer that shows her name or her other
// fields shows one of them beside it: her id in her member and as a
// referrer, her e-mail or document as a buyer.
func (s Subject) AnswerNeedles() []string {
	return append([]string{ids.Format(ids.Member, s.MemberID), s.MemberID.String()}, s.Needles()...)
}

// Answers are the copies of API answers kept outside the database (the
// idempotent replays, redisx.Idempotency): an erasure forgets those that
// show her, so that no replay shows her data again.
type Answers interface {
	// ForgetAnswers deletes the answers kept for scope (a merchant id)
	// that hold one of needles, letter case ignored, and returns how many.
	ForgetAnswers(ctx context.Context, scope string, needles []string) (int, error)
}

// DeliveryKeys are the dedupe keys of the platform deliveries of an
// order (inbound.OrderEvent.DedupeKey: "{provider}:{order id}:{kind}"),
// its sale and its refund: the deliveries of a referral's order, whose
// bodies hold its buyer.
func DeliveryKeys(source, orderID string) []string {
	return []string{source + ":" + orderID + ":" + string(inbound.KindSale), source + ":" + orderID + ":" + string(inbound.KindRefund)}
}

// Values are her personal values, non-empty, as a record that echoes them
// (a webhook receiver's answer) would hold them.
func (s Subject) Values() []string {
	var out []string
	for _, v := range []string{s.Email, s.Name, s.ExternalID, s.Document, s.Phone} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Text returns t with her e-mail replaced by her erased e-mail, and her
// name, external id, document and phone replaced by Erased, wherever they
// appear in it, letter case ignored; and whether anything changed. Values
// shorter than 3 characters are left: they would match inside other words.
func (s Subject) Text(t string) (string, bool) {
	return replaceAll(t, []replacement{
		{s.Email, member.ErasedEmail(s.MemberID)}, {s.Name, Erased}, {s.ExternalID, Erased},
		{s.Document, Erased}, {s.Phone, Erased},
	})
}

// replacement is a value to find in free text and what replaces it.
type replacement struct{ value, with string }

// replaceAll returns t with each value replaced in turn, wherever it
// appears, letter case ignored, and whether anything changed. Values
// shorter than 3 characters are left: they would match inside other words.
func replaceAll(t string, rs []replacement) (string, bool) {
	out := t
	for _, r := range rs {
		if utf8.RuneCountInString(r.value) < 3 {
			continue
		}
		out = regexp.MustCompile(`(?i)`+regexp.QuoteMeta(r.value)).ReplaceAllLiteralString(out, r.with)
	}
	return out, out != t
}

// Envelope returns an outbound event envelope (outbox.Envelope, as the
// outbox and the webhook jobs keep it) with her personal data replaced,
// and whether anything changed:
//
//   - an object whose id is hers (the member of member.* events, the
//     member of a referral): email becomes her erased e-mail, name,
//     external_id, document and phone empty, metadata {};
//   - a referral of Referrals: its referee_email, referee_name and
//     referee_external_id empty, her values in its notes replaced (Text);
//   - any other text that is exactly her e-mail (letter case ignored) or
//     her name: her erased e-mail, or empty.
//
// The envelope's id, type, created_at and merchant_id are kept; the data's
// keys are written in sorted order. An envelope that changes nothing is
// returned as it was.
func (s Subject) Envelope(payload []byte) ([]byte, bool, error) {
	var env outbox.Envelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return nil, false, fmt.Errorf("decode event envelope: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(env.Data))
	dec.UseNumber() // amounts stay exact
	var data any
	if err := dec.Decode(&data); err != nil {
		return nil, false, fmt.Errorf("decode event %s data: %w", env.ID, err)
	}
	data, changed := s.redact(data)
	if !changed {
		return payload, false, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, false, err
	}
	env.Data = raw
	out, err := json.Marshal(env)
	return out, true, err
}

// redact returns v with her data replaced (Envelope's rules).
func (s Subject) redact(v any) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		changed := s.redactObject(v)
		for k, child := range v {
			if c, ch := s.redact(child); ch {
				v[k], changed = c, true
			}
		}
		return v, changed
	case []any:
		changed := false
		for i, child := range v {
			if c, ch := s.redact(child); ch {
				v[i], changed = c, true
			}
		}
		return v, changed
	case string:
		t := strings.TrimSpace(v)
		switch {
		case s.Email != "" && strings.EqualFold(t, s.Email):
			return member.ErasedEmail(s.MemberID), true
		case s.Name != "" && strings.EqualFold(t, s.Name):
			return "", true
		}
	}
	return v, false
}

// redactObject applies the rules of her own objects and of the referrals
// to obj itself, not to its children.
func (s Subject) redactObject(obj map[string]any) bool {
	id, _ := obj["id"].(string)
	changed := false
	set := func(key string, value any) {
		if old, ok := obj[key]; ok && !equalJSON(old, value) {
			obj[key], changed = value, true
		}
	}
	if id == ids.Format(ids.Member, s.MemberID) {
		set("email", member.ErasedEmail(s.MemberID))
		for _, k := range []string{"name", "external_id", "document", "phone"} {
			set(k, "")
		}
		set("metadata", map[string]any{})
	}
	if ref, ok := ids.Parse(ids.Referral, id); ok && strings.HasPrefix(id, ids.Referral) && s.Referrals[ref] {
		for _, k := range []string{"referee_email", "referee_name", "referee_external_id"} {
			set(k, "")
		}
		if notes, ok := obj["notes"].(string); ok {
			if t, ch := s.Text(notes); ch {
				obj["notes"], changed = t, true
			}
		}
	}
	return changed
}

// equalJSON compares two decoded JSON values by their encoding.
func equalJSON(a, b any) bool {
	ra, errA := json.Marshal(a)
	rb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ra, rb)
}

// Records are everything Convida holds about a member, read in one
// snapshot: the export's content (GET /members/{id}/export), as the store
// holds it; the export shows the other people in them masked or not at all
// (MadeView, PurchaseOf). Purchases are the referrals whose buyer was her
// (by e-mail, or by document when it has MinDocumentDigits); after an
// erasure their buyer fields are empty, so none is found any more.
type Records struct {
	Member       *member.Member
	Coupons      map[string]redemption.CouponState
	Stats        member.Stats
	Wallet       ledger.Wallet
	Entries      []ledger.Entry       // newest first
	Transactions []ledger.Transaction // newest first
	Referrals    []referral.Listed    // she is the referrer; newest first
	Purchases    []referral.Referral  // she is the buyer; newest first
	Redemptions  []redemption.Redemption
	// Creator is her creator profile, without its token (a credential,
	// not data about her); nil when she has none.
	Creator *creator.Profile
}
