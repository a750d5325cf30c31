package httpapi

import (
	"net/http"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/respond"
)

// CreateMemberRequest is the body of POST /members.
type CreateMemberRequest struct {
	Email      string         `json:"email"`
	Name       string         `json:"name"`
	ExternalID string         `json:"external_id"`
	CampaignID string         `json:"campaign_id"`
	Metadata   map[string]any `json:"metadata"`
}

func (s *Server) createMember(w http.ResponseWriter, r *http.Request) {
	var req CreateMemberRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	mer := merchantOf(r)
	m := &member.Member{MerchantID: mer.ID, Email: strings.TrimSpace(req.Email), Name: strings.TrimSpace(req.Name),
		ExternalID: strings.TrimSpace(req.ExternalID), Metadata: req.Metadata}
	if err := m.Validate(); err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.campaignFor(r, strings.TrimSpace(req.CampaignID))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m.CampaignID = c.ID
	if err := s.cfg.Members.CreateMember(r.Context(), m, mer.CodePrefix); err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[AdminMember]{Data: adminMember(m, ledger.Wallet{}, member.Stats{})})
}

// memberByPath loads the member of the {id} path parameter (404 when
// absent, malformed or another merchant's).
func (s *Server) memberByPath(r *http.Request) (*member.Member, error) {
	id, err := pathID(r, ids.Member, "member")
	if err != nil {
		return nil, err
	}
	return s.cfg.Members.FindMemberByID(r.Context(), merchantOf(r).ID, id)
}

func (s *Server) getMember(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByPath(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	view, err := s.adminMemberView(r, m)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[AdminMember]{Data: view})
}

func (s *Server) adminMemberView(r *http.Request, m *member.Member) (AdminMember, error) {
	wallet, err := s.cfg.Wallets.FindWallet(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		return AdminMember{}, err
	}
	st, err := s.cfg.Members.MemberStats(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		return AdminMember{}, err
	}
	return adminMember(m, wallet, st), nil
}

func (s *Server) getMemberWallet(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByPath(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	wallet, err := s.cfg.Wallets.FindWallet(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	updated := m.CreatedAt
	if !wallet.UpdatedAt.IsZero() {
		updated = wallet.UpdatedAt
	}
	respond.JSON(w, http.StatusOK, Data[AdminWallet]{Data: AdminWallet{
		MemberID: ids.Format(ids.Member, m.ID), Pending: wallet.Pending, Available: wallet.Available,
		TotalEarned: wallet.TotalEarned, TotalRedeemed: wallet.TotalRedeemed, Cancelled: wallet.Cancelled,
		Currency: "BRL", UpdatedAt: jsontime.Ptr(updated),
	}})
}

var entryTypes = map[string]bool{
	ledger.EntryCredit: true, ledger.EntryDebit: true, ledger.EntryRelease: true,
	ledger.EntryCancel: true, ledger.EntryAdjustment: true,
}

func (s *Server) getMemberTransactions(w http.ResponseWriter, r *http.Request) {
	pageNum, perPage, err := page(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	typ := r.URL.Query().Get("type")
	if typ != "" && !entryTypes[typ] {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "type: must be one of credit, debit, release, cancel, adjustment"))
		return
	}
	m, err := s.memberByPath(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	entries, total, err := s.cfg.Wallets.ListEntries(r.Context(), m.MerchantID, m.ID,
		ledger.EntryFilter{Type: typ, Offset: (pageNum - 1) * perPage, Limit: perPage})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := List[ledger.TransactionView]{Data: make([]ledger.TransactionView, len(entries)), Pagination: pagination(pageNum, perPage, total)}
	for i, e := range entries {
		out.Data[i] = e.View()
	}
	respond.JSON(w, http.StatusOK, out)
}
