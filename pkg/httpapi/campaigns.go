package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/respond"
)

// Campaigns is what the API needs of campaigns (postgres.CampaignStore):
// the store the dashboard shares, and the stats of the admin shape.
type Campaigns interface {
	campaign.Store
	CampaignStats(ctx context.Context, merchantID, id uuid.UUID) (campaign.Stats, error)
}

// registerCampaigns adds the campaign routes; the list and the PATCH only
// when the catalog is wired.
func (s *Server) registerCampaigns(admin *mux.Router) {
	admin.HandleFunc(v1+"/campaigns", s.createCampaign).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/campaigns/{id}", s.getCampaign).Methods(http.MethodGet)
	if s.cfg.Catalog.Campaigns != nil {
		admin.HandleFunc(v1+"/campaigns", s.listCampaigns).Methods(http.MethodGet)
		admin.HandleFunc(v1+"/campaigns/{id}", s.patchCampaign).Methods(http.MethodPatch)
	}
}

// CreateCampaignRequest is the body of POST /campaigns.
type CreateCampaignRequest struct {
	Name          string         `json:"name"`
	RewardType    string         `json:"reward_type"`
	RewardValue   Int            `json:"reward_value"`
	WarrantyDays  Int            `json:"warranty_days"`
	MinRedemption Int            `json:"min_redemption"`
	IsActive      Optional[bool] `json:"is_active"`
	IsDefault     Optional[bool] `json:"is_default"`
	AutoRegister  Optional[bool] `json:"auto_register"`
	CampaignRulesRequest
}

// CampaignRulesRequest holds the fraud thresholds and the referee discount
// of a campaign's creation or update; null clears a nullable one.
type CampaignRulesRequest struct {
	MaxReferralsPerHour        Int            `json:"max_referrals_per_hour"`
	MaxCreatorReferralsPerHour Int            `json:"max_creator_referrals_per_hour"`
	MaxRewardPerMonth          Int            `json:"max_reward_per_month"`
	BlockDisposableEmails      Optional[bool] `json:"block_disposable_emails"`
	RefereeDiscountType        NullableString `json:"referee_discount_type"`
	RefereeDiscountValue       Int            `json:"referee_discount_value"`
}

// update returns the change of rules req asks for.
func (req CampaignRulesRequest) update(upd *campaign.Update) {
	upd.MaxReferralsPerHour = perHourChange(req.MaxReferralsPerHour)
	upd.MaxCreatorReferralsPerHour = perHourChange(req.MaxCreatorReferralsPerHour)
	if req.MaxRewardPerMonth.Set {
		upd.MaxRewardPerMonth = &campaign.Change[int64]{}
		if v, ok := intField(req.MaxRewardPerMonth); ok {
			upd.MaxRewardPerMonth.To = &v
		}
	}
	if req.BlockDisposableEmails.Set {
		upd.BlockDisposableEmails = &req.BlockDisposableEmails.Value
	}
	if req.RefereeDiscountType.Set {
		upd.RefereeDiscountType = &req.RefereeDiscountType.Value
	}
	if v, ok := intField(req.RefereeDiscountValue); ok {
		upd.RefereeDiscountValue = &v
	}
}

// perHourChange is the change of a velocity limit f asks for: nil when
// absent, a cleared limit for null. A number out of range stays out of
// range (and is refused by campaign.Rules.Validate) without overflowing
// an int.
func perHourChange(f Int) *campaign.Change[int] {
	if !f.Set {
		return nil
	}
	c := &campaign.Change[int]{}
	if v, ok := intField(f); ok {
		c.To = ptr(int(min(max(v, -1), campaign.MaxReferralsPerHourLimit+1)))
	}
	return c
}

func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request) {
	var req CreateCampaignRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	c := &campaign.Campaign{MerchantID: merchantOf(r).ID, Name: strings.TrimSpace(req.Name), RewardType: req.RewardType,
		RewardValue: req.RewardValue.Value, WarrantyDays: campaign.DefaultWarrantyDays,
		IsActive: !req.IsActive.Set || req.IsActive.Value, IsDefault: req.IsDefault.Set && req.IsDefault.Value,
		AutoRegister: req.AutoRegister.Set && req.AutoRegister.Value, Rules: campaign.DefaultRules()}
	if !req.RewardValue.Set || req.RewardValue.Null {
		// Absent is not a zero value, yet the fields Validate checks
		// before it (name, reward_type) are still reported first: they are
		// checked with the other figures set to valid values.
		probe := *c
		probe.RewardValue, probe.WarrantyDays, probe.MinRedemption = 1, 0, 0
		if err := probe.Validate(); err != nil {
			s.fail(w, r, err)
			return
		}
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "reward_value: is required"))
		return
	}
	if v, ok := intField(req.WarrantyDays); ok {
		c.WarrantyDays = int(v)
	}
	if v, ok := intField(req.MinRedemption); ok {
		c.MinRedemption = v
	}
	var rules campaign.Update
	req.CampaignRulesRequest.update(&rules)
	*c = rules.Apply(*c)
	if err := c.Validate(); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Campaigns.CreateCampaign(r.Context(), c); err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[AdminCampaign]{Data: adminCampaign(c, campaign.Stats{})})
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Campaign, "campaign")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.cfg.Campaigns.FindCampaignByID(r.Context(), merchantOf(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeCampaign(w, r, http.StatusOK, c)
}

// writeCampaign answers c in the admin shape with its current stats.
func (s *Server) writeCampaign(w http.ResponseWriter, r *http.Request, status int, c *campaign.Campaign) {
	st, err := s.cfg.Campaigns.CampaignStats(r.Context(), c.MerchantID, c.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, status, Data[AdminCampaign]{Data: adminCampaign(c, st)})
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
	respond.JSON(w, http.StatusOK, listOf(list, func(c *campaign.Listed) AdminCampaign { return adminCampaign(&c.Campaign, c.Stats) },
		pageNum, perPage, total))
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
	CampaignRulesRequest
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
	c, err := campaign.Edit(r.Context(), s.cfg.Catalog.Campaigns, merchantOf(r).ID, id, upd)
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
	req.CampaignRulesRequest.update(&upd)
	return upd, upd.Validate()
}

// AdminCampaign is the campaign (spec 2.8).
type AdminCampaign struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	RewardType    string `json:"reward_type"`
	RewardValue   int64  `json:"reward_value"`
	WarrantyDays  int    `json:"warranty_days"`
	MinRedemption int64  `json:"min_redemption"`
	IsActive      bool   `json:"is_active"`
	IsDefault     bool   `json:"is_default"`
	AutoRegister  bool   `json:"auto_register"`
	// The rules (issue 11): null is off.
	MaxReferralsPerHour        *int          `json:"max_referrals_per_hour"`
	MaxCreatorReferralsPerHour *int          `json:"max_creator_referrals_per_hour"`
	MaxRewardPerMonth          *int64        `json:"max_reward_per_month"`
	BlockDisposableEmails      bool          `json:"block_disposable_emails"`
	RefereeDiscountType        *string       `json:"referee_discount_type"`
	RefereeDiscountValue       int64         `json:"referee_discount_value"`
	Stats                      CampaignStats `json:"stats"`
	CreatedAt                  string        `json:"created_at"`
	UpdatedAt                  string        `json:"updated_at"`
}

// CampaignStats are the stats of a campaign.
type CampaignStats struct {
	TotalMembers     int64 `json:"total_members"`
	TotalReferrals   int64 `json:"total_referrals"`
	TotalRewardsPaid int64 `json:"total_rewards_paid"`
}

func adminCampaign(c *campaign.Campaign, st campaign.Stats) AdminCampaign {
	return AdminCampaign{
		ID: ids.Format(ids.Campaign, c.ID), Name: c.Name, RewardType: c.RewardType, RewardValue: c.RewardValue,
		WarrantyDays: c.WarrantyDays, MinRedemption: c.MinRedemption, IsActive: c.IsActive, IsDefault: c.IsDefault,
		AutoRegister:        c.AutoRegister,
		MaxReferralsPerHour: c.MaxReferralsPerHour, MaxCreatorReferralsPerHour: c.MaxCreatorReferralsPerHour,
		MaxRewardPerMonth:     c.MaxRewardPerMonth,
		BlockDisposableEmails: c.BlockDisposableEmails, RefereeDiscountType: nilIfEmpty(c.RefereeDiscountType),
		RefereeDiscountValue: c.RefereeDiscountValue,
		Stats:                CampaignStats{TotalMembers: st.TotalMembers, TotalReferrals: st.TotalReferrals, TotalRewardsPaid: st.TotalRewardsPaid},
		CreatedAt:            jsontime.Format(c.CreatedAt), UpdatedAt: jsontime.Format(c.UpdatedAt),
	}
}
