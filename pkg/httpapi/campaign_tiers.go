package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/respond"
)

func (s *Server) registerCampaignTiers(admin *mux.Router) {
	admin.HandleFunc(v1+"/campaigns/{id}/tiers", s.putCampaignTiers).Methods(http.MethodPut)
	admin.HandleFunc(v1+"/campaigns/{id}/tiers", s.getCampaignTiers).Methods(http.MethodGet)
}

// PutTiersRequest is the body of PUT /campaigns/{id}/tiers: the whole list,
// in increasing min_sales; an empty list removes the tiers.
type PutTiersRequest struct {
	Tiers *[]TierRequest `json:"tiers"`
}

// TierRequest is one tier of PutTiersRequest.
type TierRequest struct {
	Name              string          `json:"name"`
	MinSales          Int             `json:"min_sales"`
	CommissionPercent json.RawMessage `json:"commission_percent"` // read as decimal text, never as a float
}

// tiers validates req into the campaign's tiers.
func (req PutTiersRequest) tiers() (creator.Tiers, error) {
	if req.Tiers == nil {
		return nil, apperr.Errorf(apperr.Invalid, "tiers: is required (an empty list removes the tiers)")
	}
	if len(*req.Tiers) > creator.MaxTiers {
		return nil, apperr.Errorf(apperr.Invalid, "tiers: at most %d tiers", creator.MaxTiers)
	}
	out := make(creator.Tiers, len(*req.Tiers))
	for i, t := range *req.Tiers {
		minSales, ok := intField(t.MinSales)
		if !ok || minSales < 0 || minSales > creator.MaxMinSales {
			return nil, apperr.Errorf(apperr.Invalid, "tiers[%d].min_sales: is required, an integer from 0 to %d", i, creator.MaxMinSales)
		}
		bp, err := percentBP(t.CommissionPercent)
		if err != nil {
			return nil, apperr.Errorf(apperr.Invalid, "tiers[%d].commission_percent: %v", i, err)
		}
		out[i] = creator.Tier{Name: strings.TrimSpace(t.Name), MinSales: int(minSales), CommissionBP: bp}
	}
	return out, out.Validate()
}

// percentBP reads a JSON number as creator.ParsePercent does, from its
// text: 15.5 is 1550 basis points.
func percentBP(raw json.RawMessage) (int, error) {
	text := string(bytes.TrimSpace(raw))
	if text == "" || text == "null" {
		return 0, errors.New("is required")
	}
	return creator.ParsePercent(text)
}

// putCampaignTiers replaces the campaign's tiers: 200 with the list as
// stored.
func (s *Server) putCampaignTiers(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Campaign, "campaign")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req PutTiersRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	tiers, err := req.tiers()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	mer := merchantOf(r)
	if err := s.cfg.Creators.Tiers.ReplaceTiers(r.Context(), mer.ID, id, tiers); err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerTiers(w, r, id)
}

func (s *Server) getCampaignTiers(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Campaign, "campaign")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if _, err := s.cfg.Campaigns.FindCampaignByID(r.Context(), merchantOf(r).ID, id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerTiers(w, r, id)
}

// answerTiers answers 200 with the campaign's tiers as stored.
func (s *Server) answerTiers(w http.ResponseWriter, r *http.Request, campaignID uuid.UUID) {
	tiers, err := s.cfg.Creators.Tiers.FindTiers(r.Context(), merchantOf(r).ID, campaignID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := AdminTiers{Tiers: make([]AdminTier, len(tiers))}
	for i, t := range tiers {
		out.Tiers[i] = AdminTier{Name: t.Name, MinSales: t.MinSales, CommissionPercent: t.Percent()}
	}
	respond.JSON(w, http.StatusOK, Data[AdminTiers]{Data: out})
}

// AdminTiers is the data of the tiers operations.
type AdminTiers struct {
	Tiers []AdminTier `json:"tiers"`
}

// AdminTier is one commission tier in the admin API.
type AdminTier struct {
	Name              string  `json:"name"`
	MinSales          int     `json:"min_sales"`
	CommissionPercent float64 `json:"commission_percent"`
}
