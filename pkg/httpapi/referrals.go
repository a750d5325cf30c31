package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/respond"
)

// ReferralCatalog reads referrals with their referrer.
type ReferralCatalog interface {
	referral.Finder
	// ListReferrals returns a page of referrals newest first and the number
	// matching f.
	ListReferrals(ctx context.Context, merchantID uuid.UUID, f referral.Filter) ([]referral.Listed, int, error)
}

// ReferralFinder reads one referral with its referrer (apperr.NotFound
// when absent or another merchant's).
type ReferralFinder = ledger.ReferralFinder

// registerReferrals adds approve and reject, which are ledger commands
// (actions.go), and, when the catalog is wired, the list and the read.
func (s *Server) registerReferrals(admin *mux.Router) {
	if s.cfg.Catalog.Referrals != nil {
		admin.HandleFunc(v1+"/referrals", s.listReferrals).Methods(http.MethodGet)
		admin.HandleFunc(v1+"/referrals/{id}", s.getReferral).Methods(http.MethodGet)
	}
	admin.HandleFunc(v1+"/referrals/{id}/approve", s.approveReferral).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/referrals/{id}/reject", s.rejectReferral).Methods(http.MethodPost)
}

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
	respond.JSON(w, http.StatusOK, listOf(list, func(l *referral.Listed) referral.View { return l.AdminView() }, pageNum, perPage, total))
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
	switch v := strings.TrimSpace(q.Get("review_required")); v {
	case "":
	case "true", "false":
		held := v == "true"
		f.ReviewRequired = &held
	default:
		return f, apperr.Errorf(apperr.Invalid, "review_required: must be true or false")
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

// ReferralActionRequest is the body of approve and reject.
type ReferralActionRequest struct {
	Notes  string `json:"notes"`
	Reason string `json:"reason"`
}

func (s *Server) approveReferral(w http.ResponseWriter, r *http.Request) {
	s.referralAction(w, r, ledger.CmdApprove)
}

func (s *Server) rejectReferral(w http.ResponseWriter, r *http.Request) {
	s.referralAction(w, r, ledger.CmdReject)
}

// referralAction approves or rejects (decision 16): 200 with the referral,
// 409 invalid_state when its state does not allow it, 202 with the referral
// as it stands when the ledger did not answer in time.
func (s *Server) referralAction(w http.ResponseWriter, r *http.Request, typ string) {
	id, err := pathID(r, ids.Referral, "referral")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req ReferralActionRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	ref, settled, err := s.decider().Decide(r.Context(), ledger.Decision{Type: typ, MerchantID: merchantOf(r).ID,
		ReferralID: id, Notes: req.Notes, Reason: req.Reason, Key: requestKey(r), At: s.cfg.Now()})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if !settled {
		status = http.StatusAccepted
	}
	respond.JSON(w, status, Data[referral.View]{Data: ref.AdminView()})
}
