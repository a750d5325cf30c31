package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/respond"
)

// Members is what the API needs of members (postgres.MemberStore): the
// store the dashboard shares, and the figures of the admin shape.
type Members interface {
	member.Store
	MemberStats(ctx context.Context, merchantID, id uuid.UUID) (member.Stats, error)
}

// MemberCatalog lists, updates, erases and exports members.
type MemberCatalog interface {
	member.Updater
	MemberPrivacy
	// ListMembers returns a page of members newest first, each with its
	// wallet and stats, and the number matching f.
	ListMembers(ctx context.Context, merchantID uuid.UUID, f member.Filter) ([]member.Listed, int, error)
}

// registerMembers adds the admin member routes; the list, the PATCH, erase
// and export only when the catalog is wired.
func (s *Server) registerMembers(admin *mux.Router) {
	admin.HandleFunc(v1+"/members", s.createMember).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/members/{id}", s.getMember).Methods(http.MethodGet)
	admin.HandleFunc(v1+"/members/{id}/wallet", s.getMemberWallet).Methods(http.MethodGet)
	admin.HandleFunc(v1+"/members/{id}/transactions", s.getMemberTransactions).Methods(http.MethodGet)
	if s.cfg.Coupons != nil {
		admin.HandleFunc(v1+"/members/{id}/provision-coupon", s.provisionCoupon).Methods(http.MethodPost)
	}
	if s.cfg.Catalog.Members != nil {
		admin.HandleFunc(v1+"/members", s.listMembers).Methods(http.MethodGet)
		admin.HandleFunc(v1+"/members/{id}", s.patchMember).Methods(http.MethodPatch)
		s.registerMemberPrivacy(admin)
	}
}

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
	checkout, err := s.checkouts(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m, c, err := member.Create(r.Context(), s.cfg.Members, s.cfg.Campaigns, member.Input{MerchantID: mer.ID,
		CodePrefix: mer.CodePrefix, Email: req.Email, Name: req.Name, ExternalID: req.ExternalID,
		Metadata: req.Metadata, Campaign: req.CampaignID})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[AdminMember]{Data: adminMember(m, ledger.Wallet{}, member.Stats{}, s.newCoupons(c), checkout)})
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
	s.writeMember(w, r, http.StatusOK, m)
}

// writeMember answers status with m in the admin shape, with its wallet,
// stats and coupons as they stand.
func (s *Server) writeMember(w http.ResponseWriter, r *http.Request, status int, m *member.Member) {
	view, err := s.adminMemberView(r, m)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, status, Data[AdminMember]{Data: view})
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
	coupons, err := s.couponStates(r, m.MerchantID, m.ID)
	if err != nil {
		return AdminMember{}, err
	}
	checkout, err := s.checkouts(r)
	if err != nil {
		return AdminMember{}, err
	}
	return adminMember(m, wallet, st, coupons[m.ID], checkout), nil
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
	respond.JSON(w, http.StatusOK, Data[AdminWallet]{Data: adminWallet(m, wallet)})
}

// adminWallet renders m's wallet; a wallet the ledger never wrote shows
// the member's creation as its updated_at.
func adminWallet(m *member.Member, wallet ledger.Wallet) AdminWallet {
	updated := m.CreatedAt
	if !wallet.UpdatedAt.IsZero() {
		updated = wallet.UpdatedAt
	}
	return AdminWallet{
		MemberID: ids.Format(ids.Member, m.ID), Pending: wallet.Pending, Available: wallet.Available,
		TotalEarned: wallet.TotalEarned, TotalRedeemed: wallet.TotalRedeemed, Cancelled: wallet.Cancelled,
		Currency: "BRL", UpdatedAt: jsontime.Ptr(updated),
	}
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
	respond.JSON(w, http.StatusOK, listOf(entries, (*ledger.Entry).View, pageNum, perPage, total))
}

// maxSearch bounds the search text of GET /members, in characters.
const maxSearch = bounds.ID

// listMembers answers GET /members: filters status, campaign_id (camp_… or
// a bare UUID; another merchant's campaign matches nothing) and search (a
// case-insensitive substring of the name or the email, wildcards taken
// literally).
func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) {
	pageNum, perPage, err := page(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	f := member.Filter{Status: q.Get("status"), Search: strings.TrimSpace(q.Get("search")),
		Offset: (pageNum - 1) * perPage, Limit: perPage}
	if f.Status != "" && !member.ValidStatus(f.Status) {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "status: must be active, inactive or blocked"))
		return
	}
	if v := strings.TrimSpace(q.Get("campaign_id")); v != "" {
		id, ok := ids.Parse(ids.Campaign, v)
		if !ok {
			s.fail(w, r, apperr.Errorf(apperr.Invalid, "campaign_id: must be a campaign id (camp_…)"))
			return
		}
		f.CampaignID = id
	}
	if err := bounds.Check("search", f.Search, maxSearch); err != nil {
		s.fail(w, r, err)
		return
	}
	list, total, err := s.cfg.Catalog.Members.ListMembers(r.Context(), merchantOf(r).ID, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	memberIDs := make([]uuid.UUID, len(list))
	for i := range list {
		memberIDs[i] = list[i].ID
	}
	coupons, err := s.couponStates(r, merchantOf(r).ID, memberIDs...)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	checkout, err := s.checkouts(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, listOf(list, func(l *member.Listed) AdminMember {
		return adminMember(&l.Member, ledger.Wallet{Pending: l.Pending, Available: l.Available, TotalEarned: l.TotalEarned},
			l.Stats, coupons[l.ID], checkout)
	}, pageNum, perPage, total))
}

// PatchMemberRequest is the body of PATCH /members/{id}. Every field is
// optional; an absent or null field is left unchanged.
type PatchMemberRequest struct {
	Email      json.RawMessage  `json:"email"` // present at all: 400, the email is immutable
	Name       Optional[string] `json:"name"`
	ExternalID Optional[string] `json:"external_id"`
	CampaignID Optional[string] `json:"campaign_id"`
	Status     Optional[string] `json:"status"`
	Metadata   json.RawMessage  `json:"metadata"` // an object; replaces the metadata
}

// patchMember answers PATCH /members/{id} with the updated member (200).
func (s *Server) patchMember(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Member, "member")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req PatchMemberRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	upd, err := s.memberUpdate(r, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m, err := s.cfg.Catalog.Members.UpdateMember(r.Context(), merchantOf(r).ID, id, upd)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeMember(w, r, http.StatusOK, m)
}

// memberUpdate validates req into a member.Update.
func (s *Server) memberUpdate(r *http.Request, req PatchMemberRequest) (member.Update, error) {
	var upd member.Update
	if req.Email != nil {
		return upd, apperr.Errorf(apperr.Invalid, "email: cannot be changed")
	}
	if req.Name.Set {
		name := strings.TrimSpace(req.Name.Value)
		upd.Name = &name
	}
	if req.ExternalID.Set {
		ext := strings.TrimSpace(req.ExternalID.Value)
		upd.ExternalID = &ext
	}
	if req.Status.Set {
		upd.Status = &req.Status.Value
	}
	if meta, ok, err := objectField("metadata", req.Metadata); err != nil {
		return upd, err
	} else if ok {
		upd.Metadata = meta
	}
	if err := upd.Validate(); err != nil {
		return upd, err
	}
	if req.CampaignID.Set {
		raw := strings.TrimSpace(req.CampaignID.Value)
		if raw == "" { // a member leaves her campaign only for another one
			return upd, apperr.Invalidf("campaign_id", apperr.RuleUnknown, "no such campaign")
		}
		c, err := campaign.Resolve(r.Context(), s.cfg.Campaigns, merchantOf(r).ID, "campaign_id", raw)
		if err != nil {
			return upd, err
		}
		upd.CampaignID = &c.ID
	}
	return upd, nil
}

// AdminMember is the administrative member (spec 2.5) with where its code
// stands as a coupon at each platform (issue 11). The member.* events
// carry member.AdminView alone: provisioning happens after the event.
type AdminMember struct {
	member.AdminView
	CouponProvisioning redemption.CouponProvisioningView `json:"coupon_provisioning"`
	ReferralLinks      ReferralLinks                     `json:"referral_links"`
}

// ReferralLinks are the member's links, by platform, at the platforms
// that attribute a sale by the link it came through rather than a coupon
// (member.Member.ReferralLinks): null while the merchant has set no
// checkout link there, and for an erased member.
type ReferralLinks map[string]*string

// checkouts are the merchant's checkout links (member.CheckoutsOf).
func (s *Server) checkouts(r *http.Request) (member.Checkouts, error) {
	return member.CheckoutsOf(r.Context(), s.cfg.Merchants, merchantOf(r).ID)
}

func adminMember(m *member.Member, w ledger.Wallet, st member.Stats, coupons map[string]redemption.CouponState, checkouts member.Checkouts) AdminMember {
	return AdminMember{AdminView: m.AdminView(w.Pending, w.Available, w.TotalEarned, st.TotalReferrals),
		CouponProvisioning: redemption.CouponView(coupons), ReferralLinks: m.ReferralLinks(checkouts)}
}

// newCoupons are the coupon states of a member just created in c: the
// store asked for both coupons in the creation's transaction (pending, for
// the dispatcher to carry out after it), or, when c gives the friend no
// discount, recorded them not_configured. The answer shows the member as
// created, whatever the dispatcher did since.
func (s *Server) newCoupons(c *campaign.Campaign) map[string]redemption.CouponState {
	if s.cfg.Coupons == nil {
		return nil
	}
	state := redemption.CouponState{Status: redemption.CouponPending}
	if !c.HasRefereeDiscount() {
		state = redemption.CouponState{Status: redemption.CouponNotConfigured, Error: redemption.NoRefereeDiscount}
	}
	out := map[string]redemption.CouponState{}
	for _, p := range redemption.CouponPlatforms {
		out[p] = state
	}
	return out
}

// couponStates reads the members' coupon states; none when Coupons is not
// wired (every platform then shows redemption.NotAsked).
func (s *Server) couponStates(r *http.Request, merchantID uuid.UUID, memberIDs ...uuid.UUID) (map[uuid.UUID]map[string]redemption.CouponState, error) {
	if s.cfg.Coupons == nil {
		return nil, nil
	}
	return s.cfg.Coupons.CouponStates(r.Context(), merchantID, memberIDs)
}

// provisionCoupon answers POST /members/{id}/provision-coupon: it asks for
// the member's code as a coupon at every platform (created, or updated to
// the campaign's current referee discount) and answers 202 with the member,
// its coupon_provisioning pending; the dispatcher carries it out.
func (s *Server) provisionCoupon(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Member, "member")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Coupons.RequestCoupons(r.Context(), merchantOf(r).ID, id); err != nil {
		s.fail(w, r, err)
		return
	}
	m, err := s.cfg.Members.FindMemberByID(r.Context(), merchantOf(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeMember(w, r, http.StatusAccepted, m)
}

// AdminWallet is GET /members/{id}/wallet (decision 20).
type AdminWallet struct {
	MemberID      string  `json:"member_id"`
	Pending       int64   `json:"pending"`
	Available     int64   `json:"available"`
	TotalEarned   int64   `json:"total_earned"`
	TotalRedeemed int64   `json:"total_redeemed"`
	Cancelled     int64   `json:"cancelled"`
	Currency      string  `json:"currency"`
	UpdatedAt     *string `json:"updated_at"`
}
