package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/respond"
)

// RedemptionFinder reads redemptions.
type RedemptionFinder = ledger.RedemptionFinder

// registerRedemptions adds the two redeem operations: the admin one by
// member id, the member-facing one by email.
func (s *Server) registerRedemptions(mf, admin *mux.Router) {
	admin.HandleFunc(v1+"/members/{id}/redeem", s.redeemAdmin).Methods(http.MethodPost)
	mf.HandleFunc(v1+"/wallet/redeem", s.redeemMember).Methods(http.MethodPost)
}

// redeemRequest is a redemption as both interfaces ask for it.
type redeemRequest struct {
	member         *member.Member
	amount         int64 // 0 = all available
	typ            string
	subscriptionID string
}

// redeemResult is what a redemption came to.
type redeemResult struct {
	redemption *redemption.Redemption
	pending    bool // still pending after the timeout: 202
}

// redeem runs a redemption through ledger.Redeemer, the path every edge
// shares; the Idempotency-Key names the redemption.
func (s *Server) redeem(r *http.Request, req redeemRequest) (redeemResult, error) {
	mer := merchantOf(r)
	redemptionID := uuid.New()
	if k := strings.TrimSpace(r.Header.Get("Idempotency-Key")); k != "" {
		redemptionID = ledger.RedemptionIDFor(mer.ID, k)
	}
	red, pending, err := s.redeemer().Redeem(r.Context(), ledger.RedeemRequest{Member: req.member, RedemptionID: redemptionID,
		Amount: req.amount, Type: req.typ, SubscriptionID: req.subscriptionID, IssuedAt: s.cfg.Now()},
		time.Now().Add(s.actionTimeout()))
	return redeemResult{redemption: red, pending: pending}, err
}

func (s *Server) redeemer() ledger.Redeemer {
	return ledger.Redeemer{Commands: s.cfg.Actions.Commands, Waiter: s.cfg.Actions.Waiter, Redemptions: s.cfg.Actions.Redemptions,
		Integrations: s.cfg.Merchants}
}

// AdminRedeemRequest is the body of POST /members/{id}/redeem.
type AdminRedeemRequest struct {
	Amount         Int    `json:"amount"`
	Type           string `json:"type"`
	SubscriptionID string `json:"subscription_id"`
}

func (s *Server) redeemAdmin(w http.ResponseWriter, r *http.Request) {
	var body AdminRedeemRequest
	if err := decode(w, r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	req, err := redeemFields(body.Amount, false, body.Type, body.SubscriptionID, "type", "subscription_id")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if req.member, err = s.memberByPath(r); err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.redeem(r, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if res.pending {
		status = http.StatusAccepted
	}
	respond.JSON(w, status, Data[redemption.View]{Data: res.redemption.AdminView()})
}

// redeemFields validates the common fields: amount (required and ≥ 1 when
// amountRequired, else absent or null means all available), the type in
// any vocabulary, and the subscription id a subscription discount needs.
func redeemFields(amount Int, amountRequired bool, typ, subscriptionID, typeField, subField string) (redeemRequest, error) {
	var req redeemRequest
	switch {
	case amountRequired && (!amount.Set || amount.Null):
		return req, apperr.Errorf(apperr.Invalid, "amount: is required (integer cents)")
	case amount.Set && !amount.Null && amount.Value < 1:
		return req, apperr.Errorf(apperr.Invalid, "amount: must be a positive integer of cents")
	}
	req.amount = amount.Value
	var ok bool
	if req.typ, ok = redemption.TypeOf(strings.TrimSpace(typ)); !ok {
		if typeField == "type" {
			return req, apperr.Errorf(apperr.Invalid, "type: must be subscription_discount or store_credit")
		}
		return req, apperr.Errorf(apperr.Invalid, "destination: must be billing_subscription or store_coupon")
	}
	req.subscriptionID = strings.TrimSpace(subscriptionID)
	return req, redemption.CheckSubscriptionID(subField, req.typ, req.subscriptionID)
}

// MemberRedeemRequest is the body of POST /wallet/redeem.
type MemberRedeemRequest struct {
	Email          string `json:"email"`
	Amount         Int    `json:"amount"`
	Destination    string `json:"destination"`
	SubscriptionID string `json:"subscriptionId"`
}

// MemberRedeemResponse is the answer of POST /wallet/redeem.
type MemberRedeemResponse struct {
	Success bool `json:"success"`
	Data    struct {
		MemberID       string       `json:"memberId"`
		AmountRedeemed int64        `json:"amountRedeemed"`
		Destination    string       `json:"destination"`
		NewBalance     PublicWallet `json:"newBalance"`
		Integration    *Integration `json:"integration"`
	} `json:"data"`
}

// Integration is what the platform did: a Guru discount or a Yampi coupon.
type Integration struct {
	Provider       string  `json:"provider"`
	SubscriptionID *string `json:"subscriptionId,omitempty"`
	AppliedCycles  *int    `json:"appliedCycles,omitempty"`
	CouponCode     *string `json:"couponCode,omitempty"`
	ExpiresAt      *string `json:"expiresAt,omitempty"`
}

func integrationOf(red *redemption.Redemption) *Integration {
	if red.Status != redemption.StatusCompleted {
		return nil
	}
	in := &Integration{Provider: redemption.Provider(red.Type)}
	if red.Type == redemption.TypeSubscriptionDiscount {
		in.SubscriptionID, in.AppliedCycles = ptr(red.SubscriptionID), ptr(max(red.Result.AppliedCycles, 1))
	} else {
		in.CouponCode = ptr(red.Result.CouponCode)
		in.ExpiresAt = jsontime.Ptr(red.Result.ExpiresAt)
	}
	return in
}

func (s *Server) redeemMember(w http.ResponseWriter, r *http.Request) {
	var body MemberRedeemRequest
	if err := decode(w, r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	body.Email = strings.TrimSpace(body.Email)
	if err := bounds.Check("email", body.Email, bounds.Email); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Email == "" || !member.ValidEmail(body.Email) {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "email: a valid email address is required"))
		return
	}
	req, err := redeemFields(body.Amount, true, body.Destination, body.SubscriptionID, "destination", "subscriptionId")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m, err := s.cfg.Members.FindMemberByEmailOrExternalID(r.Context(), merchantOf(r).ID, body.Email, "")
	if apperr.Is(err, apperr.NotFound) {
		err = apperr.Errorf(apperr.MemberNotFound, "member not found")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req.member = m
	res, err := s.redeem(r, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	wallet, err := s.cfg.Wallets.FindWallet(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var out MemberRedeemResponse
	out.Success = true
	out.Data.MemberID = m.ID.String()
	out.Data.AmountRedeemed = res.redemption.Amount
	out.Data.Destination = redemption.Destination(res.redemption.Type)
	out.Data.NewBalance = publicWallet(wallet)
	out.Data.Integration = integrationOf(res.redemption)
	status := http.StatusOK
	if res.pending {
		status = http.StatusAccepted
	}
	respond.JSON(w, status, out)
}
