package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/respond"
)

// registerMemberFacing adds the member-facing reads; the redemption is in
// redemptions.go.
func (s *Server) registerMemberFacing(mf *mux.Router) {
	mf.HandleFunc(v1+"/member/me", s.getMemberMe).Methods(http.MethodGet)
	mf.HandleFunc(v1+"/member/referrals", s.getMemberReferrals).Methods(http.MethodGet)
	mf.HandleFunc(v1+"/wallet/balance", s.getWalletBalance).Methods(http.MethodGet)
	mf.HandleFunc(v1+"/wallet/transactions", s.getWalletTransactions).Methods(http.MethodGet)
}

// MeResponse is the answer of GET /member/me.
type MeResponse struct {
	Data    PublicMember `json:"data"`
	Created bool         `json:"created"`
}

// meBounds are the bounds of /member/me's text parameters, checked before
// anything else: each is a lookup key or a field of the member it may
// create, and none may reach a query or a row unbounded.
var meBounds = []struct {
	param string
	max   int
}{{"email", bounds.Email}, {"externalId", member.MaxExternalID}, {"name", bounds.Name},
	{"cpf", bounds.ID}, {"phone", bounds.ID}, {"campaignId", bounds.ID}}

// getMemberMe looks a member up by email and/or externalId and, with
// autoCreate=true, creates a missing one (spec 4.1, rules 1–5). It answers
// 200 also when it creates (decision 10).
func (s *Server) getMemberMe(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, b := range meBounds {
		if err := bounds.Check(b.param, strings.TrimSpace(q.Get(b.param)), b.max); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	email, externalID, name := strings.TrimSpace(q.Get("email")), strings.TrimSpace(q.Get("externalId")), strings.TrimSpace(q.Get("name"))
	autoCreate, err := boolQuery(r, "autoCreate")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if email != "" && !member.ValidEmail(email) {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "email: is not a valid email address"))
		return
	}
	mer := merchantOf(r)
	ctx := r.Context()
	var m *member.Member
	if email != "" || externalID != "" {
		m, err = s.cfg.Members.FindMemberByEmailOrExternalID(ctx, mer.ID, email, externalID)
	} else if !autoCreate {
		err = apperr.Errorf(apperr.Invalid, "email or externalId: one is required")
	} else {
		err = apperr.Errorf(apperr.NotFound, "member not found")
	}
	created := false
	switch {
	case err == nil:
	case !apperr.Is(err, apperr.NotFound):
		s.fail(w, r, err)
		return
	case !autoCreate:
		s.fail(w, r, apperr.Errorf(apperr.MemberNotFound, "member not found"))
		return
	case name == "" || email == "":
		s.fail(w, r, apperr.Errorf(apperr.MissingFields, "name and email are required to create a member"))
		return
	default:
		m, created, err = s.autoCreate(r, email, name, externalID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
	}
	wallet, err := s.cfg.Wallets.FindWallet(ctx, mer.ID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, MeResponse{Data: publicMember(m, mer, wallet), Created: created})
}

// autoCreate creates the member of /member/me; a concurrent creation of the
// same email returns the existing member with created false.
func (s *Server) autoCreate(r *http.Request, email, name, externalID string) (*member.Member, bool, error) {
	q := r.URL.Query()
	mer := merchantOf(r)
	m, _, err := member.Create(r.Context(), s.cfg.Members, s.cfg.Campaigns, member.Input{MerchantID: mer.ID,
		CodePrefix: mer.CodePrefix, Email: email, Name: name, ExternalID: externalID, Document: q.Get("cpf"),
		Phone: q.Get("phone"), Campaign: q.Get("campaignId"), CampaignField: "campaignId"})
	if apperr.Is(err, apperr.EmailExists) {
		m, err = s.cfg.Members.FindMemberByEmailOrExternalID(r.Context(), mer.ID, email, "")
		return m, false, err
	}
	return m, err == nil, err
}

// memberByEmail resolves the required email query parameter of the
// member-facing reads.
func (s *Server) memberByEmail(r *http.Request) (*member.Member, error) {
	email := strings.TrimSpace(r.URL.Query().Get("email"))
	if email == "" {
		return nil, apperr.Errorf(apperr.Invalid, "email: is required")
	}
	if err := bounds.Check("email", email, bounds.Email); err != nil {
		return nil, err
	}
	if !member.ValidEmail(email) {
		return nil, apperr.Errorf(apperr.Invalid, "email: is not a valid email address")
	}
	m, err := s.cfg.Members.FindMemberByEmailOrExternalID(r.Context(), merchantOf(r).ID, email, "")
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Errorf(apperr.MemberNotFound, "member not found")
	}
	return m, err
}

// ReferralsResponse is the answer of GET /member/referrals.
type ReferralsResponse struct {
	Data struct {
		MemberID  string           `json:"memberId"`
		Referrals []PublicReferral `json:"referrals"`
	} `json:"data"`
}

func (s *Server) getMemberReferrals(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByEmail(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	refs, err := s.cfg.Wallets.ListMemberReferrals(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var out ReferralsResponse
	out.Data.MemberID = m.ID.String()
	out.Data.Referrals = make([]PublicReferral, len(refs))
	for i, ref := range refs {
		out.Data.Referrals[i] = publicReferral(ref)
	}
	respond.JSON(w, http.StatusOK, out)
}

// BalanceResponse is the answer of GET /wallet/balance.
type BalanceResponse struct {
	Data struct {
		MemberID string       `json:"memberId"`
		Balance  PublicWallet `json:"balance"`
	} `json:"data"`
}

func (s *Server) getWalletBalance(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByEmail(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	wallet, err := s.cfg.Wallets.FindWallet(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var out BalanceResponse
	out.Data.MemberID = m.ID.String()
	out.Data.Balance = publicWallet(wallet)
	respond.JSON(w, http.StatusOK, out)
}

// TransactionsResponse is the answer of GET /wallet/transactions.
type TransactionsResponse struct {
	Data struct {
		MemberID     string              `json:"memberId"`
		Transactions []PublicTransaction `json:"transactions"`
	} `json:"data"`
}

func (s *Server) getWalletTransactions(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByEmail(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	txns, err := s.cfg.Wallets.ListTransactions(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var out TransactionsResponse
	out.Data.MemberID = m.ID.String()
	out.Data.Transactions = make([]PublicTransaction, len(txns))
	for i, t := range txns {
		out.Data.Transactions[i] = PublicTransaction{ID: t.ID.String(), Type: t.Type, Status: t.Status,
			Amount: t.Amount, Description: t.Description, CreatedAt: jsontime.Format(t.CreatedAt)}
	}
	respond.JSON(w, http.StatusOK, out)
}

// PublicWallet is the member-facing wallet (spec 2.2, decision 18).
type PublicWallet struct {
	TotalEarned   int64 `json:"totalEarned"`
	TotalRedeemed int64 `json:"totalRedeemed"`
	Available     int64 `json:"available"`
	Pending       int64 `json:"pending"`
	Cancelled     int64 `json:"cancelled"`
}

func publicWallet(w ledger.Wallet) PublicWallet {
	return PublicWallet{TotalEarned: w.TotalEarned, TotalRedeemed: w.TotalRedeemed, Available: w.Available,
		Pending: w.Pending, Cancelled: w.Cancelled}
}

// PublicMember is the member-facing member (spec 2.1).
type PublicMember struct {
	ID           string       `json:"id"`
	Email        string       `json:"email"`
	Name         string       `json:"name"`
	ReferralCode string       `json:"referralCode"`
	ReferralLink string       `json:"referralLink"`
	Status       string       `json:"status"`
	Wallet       PublicWallet `json:"wallet"`
}

func publicMember(m *member.Member, mer *merchant.Merchant, w ledger.Wallet) PublicMember {
	return PublicMember{ID: m.ID.String(), Email: m.Email, Name: m.Name, ReferralCode: m.CouponCode,
		ReferralLink: member.Link(mer.StoreURL, mer.ReferralParam, m.CouponCode), Status: m.Status,
		Wallet: publicWallet(w)}
}

// PublicTransaction is a member-facing transaction (spec 2.3).
type PublicTransaction struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Amount      int64  `json:"amount"`
	Description string `json:"description"`
	CreatedAt   string `json:"createdAt"`
}

// PublicReferral is an entry of /member/referrals (spec 2.4).
type PublicReferral struct {
	ID           string `json:"id"`
	RefereeName  string `json:"refereeName"`
	RefereeEmail string `json:"refereeEmail"`
	OrderAmount  int64  `json:"orderAmount"`
	RewardAmount int64  `json:"rewardAmount"`
	Status       string `json:"status"`
	CouponUsed   string `json:"couponUsed"`
	CreatedAt    string `json:"createdAt"`
}

func publicReferral(r referral.Referral) PublicReferral {
	return PublicReferral{ID: r.ID.String(), RefereeName: r.RefereeName, RefereeEmail: r.RefereeEmail,
		OrderAmount: r.OrderValue, RewardAmount: r.RewardAmount, Status: r.Status, CouponUsed: r.CouponUsed,
		CreatedAt: jsontime.Format(r.CreatedAt)}
}
