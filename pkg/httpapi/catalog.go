package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/respond"
)

// MemberCatalog lists and updates members.
type MemberCatalog interface {
	// ListMembers returns a page of members newest first, each with its
	// wallet and stats, and the number matching f.
	ListMembers(ctx context.Context, merchantID uuid.UUID, f member.Filter) ([]member.Listed, int, error)
	// UpdateMember applies upd and returns the member as stored
	// (apperr.NotFound when absent).
	UpdateMember(ctx context.Context, merchantID, id uuid.UUID, upd member.Update) (*member.Member, error)
}

// CampaignCatalog lists and updates campaigns.
type CampaignCatalog interface {
	// ListCampaigns returns a page of campaigns newest first, each with its
	// stats, and the number of campaigns.
	ListCampaigns(ctx context.Context, merchantID uuid.UUID, f campaign.Filter) ([]campaign.Listed, int, error)
	// UpdateCampaign applies upd, moving the default when upd.IsDefault is
	// true, and returns the campaign as stored (apperr.NotFound when
	// absent, apperr.Invalid when it would leave no default).
	UpdateCampaign(ctx context.Context, merchantID, id uuid.UUID, upd campaign.Update) (*campaign.Campaign, error)
}

// ReferralCatalog reads referrals with their referrer.
type ReferralCatalog interface {
	// ListReferrals returns a page of referrals newest first and the number
	// matching f.
	ListReferrals(ctx context.Context, merchantID uuid.UUID, f referral.Filter) ([]referral.Listed, int, error)
	// FindReferralByID returns the referral, or apperr.NotFound.
	FindReferralByID(ctx context.Context, merchantID, id uuid.UUID) (*referral.Listed, error)
}

// CatalogConfig wires the list and update operations. A nil store leaves
// its routes out of the router (they answer 405 or 404 like any unknown
// route), so a partial wiring never turns into a 500.
type CatalogConfig struct {
	Members   MemberCatalog   // GET /members, PATCH /members/{id}
	Campaigns CampaignCatalog // GET /campaigns, PATCH /campaigns/{id}
	Referrals ReferralCatalog // GET /referrals, GET /referrals/{id}
}

// registerCatalog adds the paginated lists and the PATCH operations.
func (s *Server) registerCatalog(admin *mux.Router) {
	c := s.cfg.Catalog
	if c.Members != nil {
		admin.HandleFunc(v1+"/members", s.listMembers).Methods(http.MethodGet)
		admin.HandleFunc(v1+"/members/{id}", s.patchMember).Methods(http.MethodPatch)
	}
	if c.Campaigns != nil {
		admin.HandleFunc(v1+"/campaigns", s.listCampaigns).Methods(http.MethodGet)
		admin.HandleFunc(v1+"/campaigns/{id}", s.patchCampaign).Methods(http.MethodPatch)
	}
	if c.Referrals != nil {
		admin.HandleFunc(v1+"/referrals", s.listReferrals).Methods(http.MethodGet)
		admin.HandleFunc(v1+"/referrals/{id}", s.getReferral).Methods(http.MethodGet)
	}
}

// maxSearch bounds the search text of GET /members.
const maxSearch = 255

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
	if len(f.Search) > maxSearch {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "search: must be at most %d bytes", maxSearch))
		return
	}
	list, total, err := s.cfg.Catalog.Members.ListMembers(r.Context(), merchantOf(r).ID, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := List[AdminMember]{Data: make([]AdminMember, len(list)), Pagination: pagination(pageNum, perPage, total)}
	for i := range list {
		l := &list[i]
		out.Data[i] = adminMember(&l.Member,
			ledger.Wallet{Pending: l.Pending, Available: l.Available, TotalEarned: l.TotalEarned}, l.Stats)
	}
	respond.JSON(w, http.StatusOK, out)
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
	view, err := s.adminMemberView(r, m)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[AdminMember]{Data: view})
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
	if err := upd.Validate(); err != nil {
		return upd, err
	}
	if meta, ok, err := objectField("metadata", req.Metadata); err != nil {
		return upd, err
	} else if ok {
		upd.Metadata = meta
	}
	if req.CampaignID.Set {
		cid, ok := ids.Parse(ids.Campaign, strings.TrimSpace(req.CampaignID.Value))
		if !ok {
			return upd, apperr.Errorf(apperr.Invalid, "campaign_id: no such campaign")
		}
		if _, err := s.cfg.Campaigns.FindCampaignByID(r.Context(), merchantOf(r).ID, cid); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return upd, apperr.Errorf(apperr.Invalid, "campaign_id: no such campaign")
			}
			return upd, err
		}
		upd.CampaignID = &cid
	}
	return upd, nil
}

// objectField decodes a raw JSON object field, keeping integers exact. ok
// is false when the field is absent or null.
func objectField(field string, raw json.RawMessage) (obj map[string]any, ok bool, err error) {
	if raw == nil || string(raw) == "null" {
		return nil, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false, apperr.Errorf(apperr.Invalid, "%s: must be an object", field)
	}
	return obj, true, nil
}

// listCampaigns answers GET /campaigns.
func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request) {
	pageNum, perPage, err := page(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, total, err := s.cfg.Catalog.Campaigns.ListCampaigns(r.Context(), merchantOf(r).ID,
		campaign.Filter{Offset: (pageNum - 1) * perPage, Limit: perPage})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := List[AdminCampaign]{Data: make([]AdminCampaign, len(list)), Pagination: pagination(pageNum, perPage, total)}
	for i := range list {
		out.Data[i] = adminCampaign(&list[i].Campaign, list[i].Stats)
	}
	respond.JSON(w, http.StatusOK, out)
}

// PatchCampaignRequest is the body of PATCH /campaigns/{id}. Every field is
// optional; an absent or null field is left unchanged.
type PatchCampaignRequest struct {
	RewardType    json.RawMessage  `json:"reward_type"` // present at all: 400, it is immutable
	Name          Optional[string] `json:"name"`
	RewardValue   Int              `json:"reward_value"`
	WarrantyDays  Int              `json:"warranty_days"`
	MinRedemption Int              `json:"min_redemption"`
	IsActive      Optional[bool]   `json:"is_active"`
	AutoRegister  Optional[bool]   `json:"auto_register"`
	IsDefault     Optional[bool]   `json:"is_default"`
}

// patchCampaign answers PATCH /campaigns/{id} with the updated campaign
// (200). The result is validated like a creation, against the campaign's
// own reward_type.
func (s *Server) patchCampaign(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Campaign, "campaign")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req PatchCampaignRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	upd, err := campaignUpdate(req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	mer := merchantOf(r)
	cur, err := s.cfg.Campaigns.FindCampaignByID(r.Context(), mer.ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	next := upd.Apply(*cur)
	if err := next.Validate(); err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.cfg.Catalog.Campaigns.UpdateCampaign(r.Context(), mer.ID, id, upd)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeCampaign(w, r, http.StatusOK, c)
}

// campaignUpdate decodes req into an update and checks what can be checked
// without the campaign.
func campaignUpdate(req PatchCampaignRequest) (campaign.Update, error) {
	var upd campaign.Update
	if req.RewardType != nil {
		return upd, apperr.Errorf(apperr.Invalid, "reward_type: cannot be changed")
	}
	if req.Name.Set {
		name := strings.TrimSpace(req.Name.Value)
		upd.Name = &name
	}
	if v, ok := intField(req.RewardValue); ok {
		upd.RewardValue = &v
	}
	if v, ok := intField(req.WarrantyDays); ok {
		days := int(v)
		upd.WarrantyDays = &days
	}
	if v, ok := intField(req.MinRedemption); ok {
		upd.MinRedemption = &v
	}
	if req.IsActive.Set {
		upd.IsActive = &req.IsActive.Value
	}
	if req.AutoRegister.Set {
		upd.AutoRegister = &req.AutoRegister.Value
	}
	if req.IsDefault.Set {
		upd.IsDefault = &req.IsDefault.Value
	}
	return upd, upd.Validate()
}

// intField returns the value of a present, non-null integer field.
func intField(i Int) (int64, bool) { return i.Value, i.Set && !i.Null }

// listReferrals answers GET /referrals: filters member_id (mem_… or a bare
// UUID), status, created_after and created_before (see timeBound).
func (s *Server) listReferrals(w http.ResponseWriter, r *http.Request) {
	pageNum, perPage, err := page(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f, err := referralFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f.Offset, f.Limit = (pageNum-1)*perPage, perPage
	list, total, err := s.cfg.Catalog.Referrals.ListReferrals(r.Context(), merchantOf(r).ID, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := List[referral.View]{Data: make([]referral.View, len(list)), Pagination: pagination(pageNum, perPage, total)}
	for i, l := range list {
		out.Data[i] = l.AdminView()
	}
	respond.JSON(w, http.StatusOK, out)
}

func referralFilter(r *http.Request) (referral.Filter, error) {
	q := r.URL.Query()
	f := referral.Filter{Status: q.Get("status")}
	if f.Status != "" && !referral.ValidStatus(f.Status) {
		return f, apperr.Errorf(apperr.Invalid, "status: must be pending, approved, rejected or cancelled")
	}
	if v := strings.TrimSpace(q.Get("member_id")); v != "" {
		id, ok := ids.Parse(ids.Member, v)
		if !ok {
			return f, apperr.Errorf(apperr.Invalid, "member_id: must be a member id (mem_…)")
		}
		f.MemberID = id
	}
	var err error
	if f.CreatedAfter, err = timeBound("created_after", q.Get("created_after"), false); err != nil {
		return f, err
	}
	if f.CreatedBefore, err = timeBound("created_before", q.Get("created_before"), true); err != nil {
		return f, err
	}
	return f, nil
}

// timeBound parses a creation bound: an ISO 8601 date (2026-11-20) or an
// RFC 3339 timestamp (2026-11-20T15:04:05Z, 2026-11-20T12:04:05.5-03:00);
// empty is no bound (the zero time). The bounds form the half-open interval
// [created_after, created_before): a timestamp as created_after is
// inclusive, as created_before exclusive. A date is a whole UTC day: as
// created_after it starts at the day's first instant; as created_before
// (end true) it ends at the next midnight, so the day itself is included
// and created_after=D&created_before=D is exactly the day D. A '+' of an
// offset that arrives unencoded in a query string (decoded as a space) is
// read as '+'. A bound after the other is not an error: it matches nothing.
func timeBound(field, v string, end bool) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.Replace(v, " ", "+", 1)); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, apperr.Errorf(apperr.Invalid,
		"%s: must be a date (2026-11-20) or an RFC 3339 timestamp (2026-11-20T15:04:05Z)", field)
}

// getReferral answers GET /referrals/{id} (ref_… or a bare UUID).
func (s *Server) getReferral(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Referral, "referral")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.cfg.Catalog.Referrals.FindReferralByID(r.Context(), merchantOf(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[referral.View]{Data: l.AdminView()})
}
