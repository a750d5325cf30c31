package ingest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/respond"
)

// Service handles inbound deliveries.
type Service struct {
	merchants *settingsCache
	// intake takes in the sales, its codes' lookups cached (couponCache)
	// and its publishes bounded by PublishTimeout; its Publisher carries
	// the records without a command too.
	intake    intake.Intake
	pending   *pendingRecords
	limiter   Limiter
	rateLimit int
	failures  clientip.FailureLimit
	clients   clientip.Resolver
	log       *zap.Logger
	// lines writes the outcome lines through check, so it reports the
	// caller of check rather than check itself.
	lines   *zap.Logger
	now     func() time.Time
	metrics *Metrics
}

// Config wires a Service.
type Config struct {
	Merchants Merchants
	Coupons   intake.Coupons
	Dedupe    intake.Dedupe // optional
	// Publisher carries every delivery's record, and an accepted
	// delivery's command with it.
	Publisher intake.Publisher
	Log       *zap.Logger
	Now       func() time.Time
	Metrics   *Metrics // optional
	// Limiter and RateLimit set the per-merchant ceiling in requests per
	// second; 0 (the default) is no ceiling.
	Limiter   Limiter
	RateLimit int
	// AuthFailures limits the deliveries refused before they authenticated
	// per client (optional: no limit); Clients tells the client of a
	// request (TRUSTED_PROXIES), for that limit and the access log.
	AuthFailures clientip.FailureLimit
	Clients      clientip.Resolver
	// CacheTTL bounds how stale merchant settings may be (default 5 s).
	CacheTTL time.Duration
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = 5 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.AuthFailures == nil {
		cfg.AuthFailures = clientip.NoFailureLimit{}
	}
	return &Service{
		merchants: newSettingsCache(cfg.Merchants, cfg.CacheTTL, cfg.Now),
		intake: intake.Intake{Coupons: newCouponCache(cfg.Coupons, 10*time.Minute, cfg.Now), Dedupe: cfg.Dedupe,
			Publisher: cfg.Publisher, PublishTimeout: PublishTimeout, Log: cfg.Log},
		pending: newPendingRecords(cfg.Publisher, cfg.Log),
		limiter: cfg.Limiter, rateLimit: cfg.RateLimit, failures: cfg.AuthFailures, clients: cfg.Clients,
		log: cfg.Log, lines: cfg.Log.WithOptions(zap.AddCallerSkip(1)), now: cfg.Now, metrics: cfg.Metrics,
	}
}

// Register adds the receiver route to r, and an access-log line
// (accesslog.Middleware) to every request it serves, routed or not.
func (s *Service) Register(r *mux.Router) {
	accessLog := accesslog.Middleware(s.log, s.clients)
	r.Use(accessLog)
	r.HandleFunc("/api/webhooks/{provider}/{merchant_id}", s.ServeWebhook).Methods(http.MethodPost)
	r.NotFoundHandler, r.MethodNotAllowedHandler = respond.Unrouted(r, accessLog)
}

// ServeWebhook handles one delivery. Answers (decision 23): 200 once the
// command and the delivery's record are acknowledged by the broker, or for
// a duplicate, ignored or unattributed event once its record is; 401 for
// every authentication failure, with one message; 404 unknown provider or
// merchant; 413 body over 1 MiB; 422 unmappable body; 429 over the
// merchant's ceiling, or from an address blocked for its failed
// authentications with this merchant (failures.go); 503 when the broker
// (or, with cold caches, the database) cannot be reached (the platform
// retries). Every answer is written last: nothing runs on the request
// goroutine after it.
//
// A blocked (address, merchant) costs no database work: its delivery is
// answered 429 and recorded, unless it authenticates with settings
// already in memory (the merchant fixed its token). Another merchant's
// deliveries from the same address are not affected.
func (s *Service) ServeWebhook(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	d := &inbound.Delivery{ID: ids.New(), Provider: vars["provider"], ReceivedAt: s.now(), Headers: keptHeaders(r.Header, vars["provider"])}
	adapter, ok := inbound.Lookup(d.Provider)
	merchantID, okID := parseUUID(vars["merchant_id"])
	if !ok || !okID {
		if wait := s.failures.Blocked(guessKey(s.clients.Key(r))); wait > 0 {
			s.refuseGuesses(w, wait)
			return
		}
		respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.NotFound, "unknown provider or merchant"))
		return
	}
	ctx := r.Context()
	src := s.sourceOf(r, vars["merchant_id"])
	d.MerchantID = merchantID
	settings, err := s.settingsFor(ctx, merchantID, d.Provider, src)
	if err != nil && !errors.Is(err, errBlocked) {
		s.failSettings(w, r, src, err)
		return
	}
	// The operator's ceiling bounds a blocked pair's recorded 429s too.
	if s.overLimit(w, r, merchantID) {
		return
	}
	if err != nil {
		s.refuseUnread(w, r, d, src.blocked)
		return
	}
	secret := settings.secret(d.Provider)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			// Nothing of the body is kept: the cut could hide a token.
			d.Outcome = inbound.DeliveryTooLarge
			s.refuse(w, r, src, d, refusal{raw: body, err: apperr.Errorf(apperr.PayloadTooLarge, "request body over 1 MiB")})
			return
		}
		s.refuse(w, r, src, d, refusal{raw: body, err: apperr.Errorf(apperr.Invalid, "cannot read request body")})
		return
	}
	out, err := adapter.Handle(body, adapterHeader(r, d.Provider), secret)
	if errors.Is(err, inbound.ErrNotAuthenticated) {
		s.refuse(w, r, src, d, refusal{raw: body, kept: redact(d.Provider, body, secret, false), err: err})
		return
	}
	d.Body = keptBody(redact(d.Provider, body, secret, true), d.Headers)
	if err != nil {
		s.fail(w, d, err)
		return
	}
	accesslog.Merchant(r, merchantID.String())
	if out.Ignored {
		s.ok(ctx, w, d, inbound.DeliveryIgnored, out.Reason)
		return
	}
	s.accept(ctx, w, d, out.Event)
}

// adapterHeader is the header an adapter authenticates with: the
// request's, and for a platform that sends its credential in the URL's
// query (provider.InQuery: Kiwify's signature), that credential under
// inbound.QueryCredentialHeader, set only from the query (a client's own
// header of that name is dropped).
func adapterHeader(r *http.Request, platform string) http.Header {
	d, _ := provider.Lookup(platform)
	if d.Webhook.Place != provider.InQuery && r.Header.Get(inbound.QueryCredentialHeader) == "" {
		return r.Header
	}
	h := r.Header.Clone()
	h.Del(inbound.QueryCredentialHeader)
	if d.Webhook.Place != provider.InQuery {
		return h
	}
	if v := r.URL.Query().Get(d.Webhook.Name); v != "" {
		h.Set(inbound.QueryCredentialHeader, v)
	}
	return h
}

// accept takes the sale in (intake.Intake.Take) and answers: 200 once its
// command and record, or a duplicate's or an unattributed sale's record,
// are acknowledged by the broker; 503 when the broker, or with a cold
// cache the database, cannot be reached. Yampi gives up on an answer
// after 5 s: with the broker unreachable the writer would retry for
// longer, so the publish has a deadline (PublishTimeout) and the
// platform its 503 in time.
func (s *Service) accept(ctx context.Context, w http.ResponseWriter, d *inbound.Delivery, ev *inbound.OrderEvent) {
	taken, err := s.intake.Take(ctx, d, ev, nil)
	switch {
	case err != nil:
		s.unavailable(w, d, err)
		return
	case taken.Outcome != inbound.DeliveryAccepted:
		s.ok(ctx, w, d, taken.Outcome, taken.Reason)
		return
	}
	s.metrics.observe(d.Provider, inbound.DeliveryAccepted)
	msg := "sale accepted"
	if ev.Kind == inbound.KindRefund {
		msg = "refund accepted"
	}
	if ce := s.check(msg); ce != nil {
		ce.Write(zap.String("merchant", d.MerchantID.String()), zap.String("provider", d.Provider),
			zap.String("order", ev.OrderID), zap.String("member", ids.Format(ids.Member, taken.Member)),
			zap.Int64("amount", ev.Amount), zap.String("delivery", d.ID.String()))
	}
	respond.JSON(w, http.StatusOK, answer{Status: inbound.DeliveryAccepted, DeliveryID: d.ID.String()})
}

// overLimit applies the operator's per-merchant ceiling (INGEST_RATE_LIMIT,
// off by default): above it the answer is 429 with Retry-After, which both
// platforms retry. Refused requests are counted, not recorded: recording
// each would load the database the ceiling protects. Redis down: no limit.
func (s *Service) overLimit(w http.ResponseWriter, r *http.Request, merchantID uuid.UUID) bool {
	if s.limiter == nil || s.rateLimit <= 0 {
		return false
	}
	_, retryAfter, _, err := s.limiter.Allow(r.Context(), "ingest:"+merchantID.String(), s.rateLimit, s.rateLimit)
	if err != nil || retryAfter <= 0 {
		return false
	}
	w.Header().Set("Retry-After", retryAfterHeader(retryAfter))
	s.metrics.observe(mux.Vars(r)["provider"], "rate_limited")
	respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.RateLimited, "too many deliveries for this merchant, retry later"))
	return true
}

func parseUUID(s string) (uuid.UUID, bool) {
	id, err := uuid.Parse(s)
	return id, err == nil && len(s) == 36
}

// secret is the merchant's webhook secret of platform (the setting its
// provider.WebhookAuth names); "" when not configured.
func (s providerSettings) secret(platform string) string {
	if s.integration == nil {
		return ""
	}
	d, _ := provider.Lookup(platform)
	return s.integration.ValueOf(d.Webhook.Setting)
}

type providerSettings struct {
	integration *merchant.Integration // nil when not configured
}
