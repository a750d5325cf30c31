package httpapi

import (
	"context"
	"encoding/hex"
	"math"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/secretbox"
)

// CreatorProfiles is what the API needs of creator profiles
// (postgres.CreatorStore). An absent profile is apperr.NotFound.
type CreatorProfiles interface {
	creator.Store
	referral.CreatorSales
	// FindCreatorByToken finds a profile of any merchant by its token.
	FindCreatorByToken(ctx context.Context, token string) (*creator.Profile, error)
	DeleteCreator(ctx context.Context, merchantID, memberID uuid.UUID) error
}

// CreatorsConfig wires creators and commission tiers (creators.go,
// campaign_tiers.go). A nil Profiles or Tiers leaves all their routes out.
type CreatorsConfig struct {
	Profiles CreatorProfiles
	Tiers    creator.TierStore

	// The public operations are limited per token and per client IP
	// (decision 22), each a rate per second and a burst; zero takes the
	// defaults below. They use ProtectionConfig.Limiter, and are not
	// limited without one.
	TokenPerSecond, TokenBurst int
	IPPerSecond, IPBurst       int
}

// The defaults of CreatorsConfig's limits: a creator's page reads its three
// operations at once, a few times a minute; one address may serve many
// creators (a network behind one NAT).
const (
	DefaultCreatorTokenPerSecond = 5
	DefaultCreatorTokenBurst     = 20
	DefaultCreatorIPPerSecond    = 20
	DefaultCreatorIPBurst        = 60
)

// registerCreators adds the admin creator routes and the public creator
// operations, which have their own middleware: no API key, the token in the
// path is the credential.
func (s *Server) registerCreators(admin, public *mux.Router) {
	if s.cfg.Creators.Profiles == nil || s.cfg.Creators.Tiers == nil {
		return
	}
	creatorPath := v1 + "/members/{id}/creator"
	admin.HandleFunc(creatorPath, s.putCreator).Methods(http.MethodPut)
	admin.HandleFunc(creatorPath, s.getCreator).Methods(http.MethodGet)
	admin.HandleFunc(creatorPath, s.deleteCreator).Methods(http.MethodDelete)
	admin.HandleFunc(creatorPath+"/rotate-token", s.rotateCreatorToken).Methods(http.MethodPost)
	s.registerCampaignTiers(admin)

	public.Use(s.withStyle(respond.Member), noStore, s.checkQuery, s.creatorFailures, s.creatorRateLimit)
	public.HandleFunc(v1+"/creators/{token}", s.getPublicCreator).Methods(http.MethodGet)
	public.HandleFunc(v1+"/creators/{token}/tiers", s.getPublicCreatorTiers).Methods(http.MethodGet)
	public.HandleFunc(v1+"/creators/{token}/sales", s.getPublicCreatorSales).Methods(http.MethodGet)
}

// noStore keeps answers that hold a creator token (or are read with one)
// out of every cache.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// ---------------------------------------------------------------------
// Admin: a member's creator profile
// ---------------------------------------------------------------------

// PutCreatorRequest is the body of PUT /members/{id}/creator.
type PutCreatorRequest struct {
	DisplayName       string `json:"display_name"`
	Niche             string `json:"niche"`
	InstagramUsername string `json:"instagram_username"`
}

// putCreator creates or updates the member's creator profile. Both answer
// 200 with the profile and its token: a PUT names the resource, so its
// creation is not told apart (decision 10 keeps 201 for POST creations).
func (s *Server) putCreator(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Member, "member")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req PutCreatorRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	m, err := s.cfg.Members.FindMemberByID(r.Context(), merchantOf(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := creator.Put(r.Context(), s.cfg.Creators.Profiles, creator.Profile{MerchantID: m.MerchantID, MemberID: m.ID,
		DisplayName: req.DisplayName, Niche: req.Niche, InstagramUsername: req.InstagramUsername})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeCreator(w, r, p)
}

// creatorByPath loads the creator profile of the {id} member (404 when the
// member is absent, another merchant's, or not a creator).
func (s *Server) creatorByPath(r *http.Request) (*creator.Profile, error) {
	m, err := s.memberByPath(r)
	if err != nil {
		return nil, err
	}
	return s.cfg.Creators.Profiles.FindCreator(r.Context(), m.MerchantID, m.ID)
}

func (s *Server) getCreator(w http.ResponseWriter, r *http.Request) {
	p, err := s.creatorByPath(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeCreator(w, r, p)
}

// rotateCreatorToken gives the creator a new token; the old one answers
// 404 on the public operations at once.
func (s *Server) rotateCreatorToken(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByPath(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.cfg.Creators.Profiles.RotateCreatorToken(r.Context(), m.MerchantID, m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeCreator(w, r, p)
}

// deleteCreator removes the profile (the member stays): 204.
func (s *Server) deleteCreator(w http.ResponseWriter, r *http.Request) {
	m, err := s.memberByPath(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Creators.Profiles.DeleteCreator(r.Context(), m.MerchantID, m.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// AdminCreator is the administrative creator profile, token included.
type AdminCreator struct {
	MemberID          string `json:"member_id"`
	DisplayName       string `json:"display_name"`
	Niche             string `json:"niche"`
	InstagramUsername string `json:"instagram_username"`
	Token             string `json:"token"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
}

// writeCreator answers 200 with the profile; it holds the token, so no
// cache may keep it, and an idempotent replay (of rotate-token) shows it
// masked, ****abcd: the idempotency store never holds it (GET shows it).
func writeCreator(w http.ResponseWriter, r *http.Request, p *creator.Profile) {
	w.Header().Set("Cache-Control", "no-store")
	full := AdminCreator{
		MemberID: ids.Format(ids.Member, p.MemberID), DisplayName: p.DisplayName, Niche: p.Niche,
		InstagramUsername: p.InstagramUsername, Token: p.Token,
		CreatedAt: jsontime.Format(p.CreatedAt), UpdatedAt: jsontime.Format(p.UpdatedAt),
	}
	masked := full
	masked.Token = secretbox.Mask(p.Token)
	writeSecretOnce(w, r, http.StatusOK, Data[AdminCreator]{Data: full}, Data[AdminCreator]{Data: masked})
}

// ---------------------------------------------------------------------
// Public: the creator operations (decision 22)
// ---------------------------------------------------------------------

// creatorByToken finds the profile of the {token} path parameter: an
// unknown, rotated or deleted token is 404 NOT_FOUND. The token is never
// logged nor put in an error message.
func (s *Server) creatorByToken(r *http.Request) (*creator.Profile, error) {
	p, err := s.cfg.Creators.Profiles.FindCreatorByToken(r.Context(), mux.Vars(r)["token"])
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Errorf(apperr.NotFound, "creator not found")
	}
	return p, err
}

// standingOf reads the creator of the {token} path parameter, her member
// and where she stands (creator.StandingOf, as the dashboard's creator
// page reads it).
func (s *Server) standingOf(r *http.Request) (*creator.Profile, *member.Member, *creator.Standing, error) {
	p, err := s.creatorByToken(r)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := s.cfg.Members.FindMemberByID(r.Context(), p.MerchantID, p.MemberID)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := creator.StandingOf(r.Context(), s.cfg.Creators.Profiles, s.cfg.Creators.Tiers,
		creator.Who{MerchantID: p.MerchantID, MemberID: m.ID, CampaignID: m.CampaignID}, s.cfg.Now())
	return p, m, st, err
}

// PublicCreator is GET /creators/{token}, unwrapped (decision 22).
type PublicCreator struct {
	ID                string                `json:"id"`
	Name              string                `json:"name"`
	Niche             string                `json:"niche"`
	InstagramUsername string                `json:"instagramUsername"`
	ReferralCode      string                `json:"referralCode"`
	ReferralLink      string                `json:"referralLink"`
	TotalSales        int                   `json:"totalSales"`
	ApprovedSales     int                   `json:"approvedSales"`
	CommissionTier    *PublicCommissionTier `json:"commissionTier"`
}

// PublicCommissionTier is the tier the creator's month has reached.
type PublicCommissionTier struct {
	Name           string  `json:"name"`
	CommissionRate float64 `json:"commissionRate"` // a fraction: 0.15 is 15 %
}

// getPublicCreator answers the creator's profile and standing. The tier is
// the one this calendar month's sales (UTC) reach; null when none does (no
// tiers, or fewer sales than the first tier's min_sales), in which case a
// sale earns the campaign's own reward. A blocked member's token still
// reads: the page shows the figures, and the merchant deletes the profile
// or rotates the token to close it.
func (s *Server) getPublicCreator(w http.ResponseWriter, r *http.Request) {
	p, m, st, err := s.standingOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	mer, err := s.cfg.Merchants.FindMerchantByID(r.Context(), p.MerchantID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := PublicCreator{ID: m.ID.String(), Name: p.DisplayName, Niche: p.Niche, InstagramUsername: p.InstagramUsername,
		ReferralCode: m.CouponCode, ReferralLink: member.Link(mer.StoreURL, mer.ReferralParam, m.CouponCode),
		TotalSales: st.Figures.TotalSales, ApprovedSales: st.Figures.ApprovedSales}
	if st.HasTier {
		out.CommissionTier = &PublicCommissionTier{Name: st.Tier.Name, CommissionRate: st.Tier.Rate()}
	}
	respond.JSON(w, http.StatusOK, out)
}

// PublicTier is a commission tier as the creator operations show it.
type PublicTier struct {
	Name           string  `json:"name"`
	MinSales       int     `json:"minSales"`
	CommissionRate float64 `json:"commissionRate"`
}

func publicTier(t creator.Tier) PublicTier {
	return PublicTier{Name: t.Name, MinSales: t.MinSales, CommissionRate: t.Rate()}
}

// PublicCreatorTiers is the data of GET /creators/{token}/tiers.
type PublicCreatorTiers struct {
	CurrentTier     *PublicTier  `json:"currentTier"`
	NextTier        *PublicTier  `json:"nextTier"`
	SalesToNextTier *int         `json:"salesToNextTier"`
	Tiers           []PublicTier `json:"tiers"`
}

// getPublicCreatorTiers answers the campaign's tiers and where this
// month's sales stand: currentTier null below the first tier; nextTier and
// salesToNextTier null at the top (and with no tiers).
func (s *Server) getPublicCreatorTiers(w http.ResponseWriter, r *http.Request) {
	_, _, st, err := s.standingOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := PublicCreatorTiers{Tiers: make([]PublicTier, len(st.Tiers))}
	for i, t := range st.Tiers {
		out.Tiers[i] = publicTier(t)
	}
	if st.HasTier {
		out.CurrentTier = ptr(publicTier(st.Tier))
	}
	if st.HasNext {
		out.NextTier, out.SalesToNextTier = ptr(publicTier(st.Next)), &st.ToNext
	}
	respond.JSON(w, http.StatusOK, Data[PublicCreatorTiers]{Data: out})
}

// PublicSale is an entry of GET /creators/{token}/sales.
type PublicSale struct {
	ID               string `json:"id"`
	OrderAmount      int64  `json:"orderAmount"`
	CommissionAmount int64  `json:"commissionAmount"`
	Status           string `json:"status"`
	CouponUsed       string `json:"couponUsed"`
	BuyerEmail       string `json:"buyerEmail"` // masked: j***@example.com
	CreatedAt        string `json:"createdAt"`
}

// PublicSalesPagination is the pagination of the creator's sales.
type PublicSalesPagination struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
	Total int `json:"total"`
}

// PublicSales is the answer of GET /creators/{token}/sales.
type PublicSales struct {
	Data       []PublicSale          `json:"data"`
	Pagination PublicSalesPagination `json:"pagination"`
}

// getPublicCreatorSales answers a page of the creator's sales, every
// status, newest first: page ≥ 1, limit 1–100 (default 20).
func (s *Server) getPublicCreatorSales(w http.ResponseWriter, r *http.Request) {
	pageNum, err := intQuery(r, "page", 1, 1, math.MaxInt32)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, err := intQuery(r, "limit", 20, 1, 100)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.creatorByToken(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sales, total, err := s.cfg.Creators.Profiles.ListCreatorSales(r.Context(), p.MerchantID, p.MemberID, (pageNum-1)*limit, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := PublicSales{Data: make([]PublicSale, len(sales)), Pagination: PublicSalesPagination{Page: pageNum, Limit: limit, Total: total}}
	for i, sale := range sales {
		out.Data[i] = PublicSale{ID: sale.ID.String(), OrderAmount: sale.OrderValue, CommissionAmount: sale.RewardAmount,
			Status: sale.Status, CouponUsed: sale.CouponUsed, BuyerEmail: creator.MaskEmail(sale.RefereeEmail),
			CreatedAt: jsontime.Format(sale.CreatedAt)}
	}
	respond.JSON(w, http.StatusOK, out)
}

// creatorRateLimit limits the public operations per token and per client
// IP (decision 22), with the limiter and answers of the API key's limit
// (RateLimit-* headers of the tighter of the two, 429 RATE_LIMITED with
// Retry-After). The token is counted by its SHA-256, never kept as such.
// The client IP is Config.TrustedProxies' (X-Forwarded-For only from the
// operator's proxies; an IPv6 client by its /64). When the limiter's store
// fails the request is served unlimited.
func (s *Server) creatorRateLimit(next http.Handler) http.Handler {
	lim := s.cfg.Protection.Limiter
	if lim == nil {
		return next
	}
	c := s.cfg.Creators
	tokenRate, tokenBurst := orDefault(c.TokenPerSecond, DefaultCreatorTokenPerSecond), orDefault(c.TokenBurst, DefaultCreatorTokenBurst)
	ipRate, ipBurst := orDefault(c.IPPerSecond, DefaultCreatorIPPerSecond), orDefault(c.IPBurst, DefaultCreatorIPBurst)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		byIP, ok := s.countRequest(r, "creator-ip:"+s.cfg.TrustedProxies.Key(r), ipRate, ipBurst)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if byIP.retryAfter == 0 { // a refused address does not spend the token's allowance
			tokenKey := "creator-token:" + hex.EncodeToString(creator.HashToken(mux.Vars(r)["token"]))
			if byToken, ok := s.countRequest(r, tokenKey, tokenRate, tokenBurst); ok {
				byIP = tighter(byIP, byToken)
			}
		}
		if s.answerLimit(w, r, byIP) {
			next.ServeHTTP(w, r)
		}
	})
}

// creatorFailures counts a token that finds no creator (a 404 of the
// creator operations: unknown, rotated or deleted) as a failed
// authentication of the client, like a wrong API key, and answers 429 to a
// client blocked for its failures before any database work.
func (s *Server) creatorFailures(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := s.cfg.TrustedProxies.Key(r)
		if wait := s.cfg.Protection.AuthFailures.Blocked(client); wait > 0 {
			s.refuseBlocked(w, r, wait)
			return
		}
		sw := &accesslog.StatusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.Status() == http.StatusNotFound {
			s.cfg.Protection.AuthFailures.Failed(r.Context(), client)
		}
	})
}
