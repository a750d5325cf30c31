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
		WarrantyDays: campaign.DefaultWarrantyDays, IsActive: true}
	if err := required("name", c.Name); err != nil {
		s.fail(w, r, err)
		return
	}
	if c.RewardType != campaign.RewardFixed && c.RewardType != campaign.RewardPercentage {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "reward_type: must be percentage or fixed"))
		return
	}
	if !req.RewardValue.Set || req.RewardValue.Null {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "reward_value: is required"))
		return
	}
	c.RewardValue = req.RewardValue.Value
	if req.WarrantyDays.Set && !req.WarrantyDays.Null {
		c.WarrantyDays = int(req.WarrantyDays.Value)
		if req.WarrantyDays.Value < 0 || req.WarrantyDays.Value > 3650 {
			s.fail(w, r, apperr.Errorf(apperr.Invalid, "warranty_days: must be from 0 to 3650"))
			return
		}
	}
	if req.MinRedemption.Set && !req.MinRedemption.Null {
		c.MinRedemption = req.MinRedemption.Value
	}
	c.IsActive = !req.IsActive.Set || req.IsActive.Value
	c.IsDefault = req.IsDefault.Set && req.IsDefault.Value
	c.AutoRegister = req.AutoRegister.Set && req.AutoRegister.Value
	if err := validateRewards(c); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Campaigns.CreateCampaign(r.Context(), c); err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[AdminCampaign]{Data: adminCampaign(c, campaign.Stats{})})
}

// validateRewards checks the money rules of a campaign (decision 15).
func validateRewards(c *campaign.Campaign) error {
	switch {
	case c.RewardType == campaign.RewardPercentage && (c.RewardValue < 1 || c.RewardValue > 100):
		return apperr.Errorf(apperr.Invalid, "reward_value: a percentage must be a whole percent from 1 to 100")
	case c.RewardType == campaign.RewardFixed && (c.RewardValue < 1 || c.RewardValue > 1_000_000_000):
		return apperr.Errorf(apperr.Invalid, "reward_value: a fixed reward must be from 1 to 1000000000 cents")
	case c.MinRedemption < 0 || c.MinRedemption > 1_000_000_000:
		return apperr.Errorf(apperr.Invalid, "min_redemption: must be from 0 to 1000000000 cents")
	}
	return nil
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
