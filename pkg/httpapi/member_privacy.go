package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/privacy"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/respond"
)

// A member's rights over her personal data (LGPD art. 18, docs/privacy.md):
// POST /members/{id}/erase and GET /members/{id}/export.

// MemberPrivacy erases and exports members (postgres.MemberStore).
type MemberPrivacy interface {
	member.Eraser
	// MemberRecords returns everything held about the member, in one
	// snapshot (apperr.NotFound when absent).
	MemberRecords(ctx context.Context, merchantID, id uuid.UUID) (*privacy.Records, error)
}

func (s *Server) registerMemberPrivacy(admin *mux.Router) {
	admin.HandleFunc(v1+"/members/{id}/erase", s.eraseMember).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/members/{id}/export", s.exportMember).Methods(http.MethodGet)
}

// eraseMember answers POST /members/{id}/erase: 200 with the member as
// erased. A second call answers the same and emits nothing. The body is
// not read.
func (s *Server) eraseMember(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Member, "member")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m, _, err := s.cfg.Catalog.Members.EraseMember(r.Context(), merchantOf(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeMember(w, r, http.StatusOK, m)
}

// MemberExport is the answer of GET /members/{id}/export: everything held
// about the member, not paginated, each record in its admin shape.
type MemberExport struct {
	Member AdminMember `json:"member"`
	Wallet AdminWallet `json:"wallet"`
	// Transactions are the ledger entries (GET /members/{id}/transactions),
	// WalletTransactions the member-facing ones (a credit or a debit with
	// its status), newest first.
	Transactions       []ledger.TransactionView `json:"transactions"`
	WalletTransactions []ExportTransaction      `json:"wallet_transactions"`
	// Referrals are the sales she referred, their buyers masked;
	// Purchases those she bought, found by her e-mail or document (none
	// after an erasure), naming no referrer (privacy.MadeView, PurchaseOf).
	Referrals      []referral.View    `json:"referrals"`
	Purchases      []privacy.Purchase `json:"purchases"`
	Redemptions    []redemption.View  `json:"redemptions"`
	CreatorProfile *ExportCreator     `json:"creator_profile"`
	ExportedAt     string             `json:"exported_at"`
}

// ExportTransaction is a member-facing wallet transaction in the admin
// conventions; its id is the UUID the member-facing API shows.
type ExportTransaction struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	Status        string `json:"status"`
	Amount        int64  `json:"amount"`
	Description   string `json:"description"`
	ReferenceType string `json:"reference_type"`
	ReferenceID   string `json:"reference_id"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
}

// ExportCreator is the member's creator profile without its token: a
// credential, not data about her.
type ExportCreator struct {
	DisplayName       string `json:"display_name"`
	Niche             string `json:"niche"`
	InstagramUsername string `json:"instagram_username"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
}

// exportMember answers GET /members/{id}/export with MemberExport, never
// cached, as a download.
func (s *Server) exportMember(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Member, "member")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rec, err := s.cfg.Catalog.Members.MemberRecords(r.Context(), merchantOf(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	checkout, err := s.checkouts(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="`+ids.Format(ids.Member, id)+`.json"`)
	respond.JSON(w, http.StatusOK, Data[MemberExport]{Data: exportOf(rec, s.cfg.Now(), checkout)})
}

// exportOf renders rec in MemberExport, every list present (empty rather
// than null); checkouts make the member's referral links.
func exportOf(rec *privacy.Records, now time.Time, checkouts member.Checkouts) MemberExport {
	m := rec.Member
	out := MemberExport{
		Member:             adminMember(m, rec.Wallet, rec.Stats, rec.Coupons, checkouts),
		Wallet:             adminWallet(m, rec.Wallet),
		Transactions:       make([]ledger.TransactionView, len(rec.Entries)),
		WalletTransactions: make([]ExportTransaction, len(rec.Transactions)),
		Referrals:          make([]referral.View, len(rec.Referrals)),
		Purchases:          make([]privacy.Purchase, len(rec.Purchases)),
		Redemptions:        make([]redemption.View, len(rec.Redemptions)),
		ExportedAt:         jsontime.Format(now.UTC()),
	}
	for i, e := range rec.Entries {
		out.Transactions[i] = e.View()
	}
	for i, t := range rec.Transactions {
		out.WalletTransactions[i] = ExportTransaction{ID: t.ID.String(), Type: t.Type, Status: t.Status, Amount: t.Amount,
			Description: t.Description, ReferenceType: t.ReferenceType, ReferenceID: ledger.ReferenceID(t.ReferenceType, t.ReferenceID),
			CreatedAt: jsontime.Format(t.CreatedAt), UpdatedAt: jsontime.Format(t.UpdatedAt)}
	}
	for i, l := range rec.Referrals {
		out.Referrals[i] = privacy.MadeView(l)
	}
	for i, r := range rec.Purchases {
		out.Purchases[i] = privacy.PurchaseOf(r)
	}
	for i, d := range rec.Redemptions {
		out.Redemptions[i] = d.AdminView()
	}
	if p := rec.Creator; p != nil {
		out.CreatorProfile = &ExportCreator{DisplayName: p.DisplayName, Niche: p.Niche, InstagramUsername: p.InstagramUsername,
			CreatedAt: jsontime.Format(p.CreatedAt), UpdatedAt: jsontime.Format(p.UpdatedAt)}
	}
	return out
}
