package httpapi

import (
	"net/http"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/respond"
)

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
		AutoRegister: req.AutoRegister.Set && req.AutoRegister.Value}
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
