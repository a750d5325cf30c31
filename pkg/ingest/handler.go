package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/respond"
)

// Service handles inbound deliveries.
type Service struct {
	merchants *settingsCache
	coupons   *couponCache
	dedupe    Dedupe
	publisher Publisher
	pending   *pendingRecords
	limiter   Limiter
	rateLimit int
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
	Coupons   Coupons
	Dedupe    Dedupe // optional
	// Publisher carries every delivery's record, and an accepted
	// delivery's command with it.
	Publisher Publisher
	Log       *zap.Logger
	Now       func() time.Time
	Metrics   *Metrics // optional
	// Limiter and RateLimit set the per-merchant ceiling in requests per
	// second; 0 (the default) is no ceiling.
	Limiter   Limiter
	RateLimit int
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
	return &Service{
		merchants: newSettingsCache(cfg.Merchants, cfg.CacheTTL, cfg.Now),
		coupons:   newCouponCache(cfg.Coupons, 10*time.Minute, cfg.Now),
		dedupe:    cfg.Dedupe, publisher: cfg.Publisher, pending: newPendingRecords(cfg.Publisher, cfg.Log),
		limiter: cfg.Limiter, rateLimit: cfg.RateLimit,
		log: cfg.Log, lines: cfg.Log.WithOptions(zap.AddCallerSkip(1)), now: cfg.Now, metrics: cfg.Metrics,
	}
}

// Register adds the receiver route to r, and an access-log line
// (httpapi.AccessLog) to every request it serves, routed or not.
func (s *Service) Register(r *mux.Router) {
	accessLog := httpapi.AccessLog(s.log)
	r.Use(accessLog)
	r.HandleFunc("/api/webhooks/{provider}/{merchant_id}", s.ServeWebhook).Methods(http.MethodPost)
	r.NotFoundHandler = accessLog(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		respond.Error(w, nil, respond.Admin, apperr.Errorf(apperr.NotFound, "no such route"))
	}))
	r.MethodNotAllowedHandler = accessLog(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		respond.JSON(w, http.StatusMethodNotAllowed, respond.ErrorBody{Error: respond.ErrorDetail{
			Code: "method_not_allowed", Message: "method not allowed on this route"}})
	}))
}

// answer is the body of a 200: what became of the delivery.
type answer struct {
	Status     string `json:"status"`
	DeliveryID string `json:"delivery_id"`
	Reason     string `json:"reason,omitempty"`
}

// ServeWebhook handles one delivery. Answers (webhooks.md): 200 once the
// command and the delivery's record are acknowledged by the broker, or for
// a duplicate, ignored or unattributed event once its record is; 401 bad
// token or signature; 404 unknown provider or merchant; 413 body over
// 1 MiB; 422 unmappable body; 503 when the broker (or, with cold caches,
// the database) cannot be reached (the platform retries). Every answer is
// written last: nothing runs on the request goroutine after it.
func (s *Service) ServeWebhook(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	d := &inbound.Delivery{ID: uuid.New(), Provider: vars["provider"], ReceivedAt: s.now(), Headers: keptHeaders(r.Header)}
	adapter, ok := inbound.Lookup(d.Provider)
	merchantID, okID := parseUUID(vars["merchant_id"])
	if !ok || !okID {
		respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.NotFound, "unknown provider or merchant"))
		return
	}
	ctx := r.Context()
	settings, err := s.merchants.get(ctx, merchantID, d.Provider)
	if err != nil {
		s.fail(w, nil, err)
		return
	}
	if s.overLimit(w, r, merchantID) {
		return
	}
	d.MerchantID = merchantID
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		d.Body = []byte{} // what was read is not kept: the record says why
		if errors.As(err, &tooLarge) {
			d.Outcome, d.HTTPStatus = inbound.DeliveryTooLarge, http.StatusRequestEntityTooLarge
			s.fail(w, d, apperr.Errorf(apperr.PayloadTooLarge, "request body over 1 MiB"))
			return
		}
		s.fail(w, d, apperr.Errorf(apperr.Invalid, "cannot read request body"))
		return
	}
	creds := settings.credentials()
	out, err := adapter.Handle(body, r.Header, creds)
	d.Body = keptBody(redact(d.Provider, body, creds, err == nil), d.Headers)
	if err != nil {
		s.fail(w, d, err)
		return
	}
	httpapi.LogMerchant(r, merchantID.String())
	if out.Ignored {
		s.ok(ctx, w, d, inbound.DeliveryIgnored, out.Reason)
		return
	}
	s.accept(ctx, w, d, out.Event)
}

func (s *Service) accept(ctx context.Context, w http.ResponseWriter, d *inbound.Delivery, ev *inbound.OrderEvent) {
	d.DedupeKey = ev.DedupeKey
	fastKey := "ingest:dedupe:" + d.MerchantID.String() + ":" + ev.DedupeKey
	if s.dedupe != nil {
		if seen, err := s.dedupe.Seen(ctx, fastKey); err == nil && seen {
			s.ok(ctx, w, d, inbound.DeliveryDuplicate, "already received")
			return
		}
	}
	memberID, err := s.coupons.resolve(ctx, d.MerchantID, ev.CouponCode)
	if apperr.Is(err, apperr.NotFound) {
		s.ok(ctx, w, d, inbound.DeliveryUnattributed, "no member has coupon "+quote(ev.CouponCode))
		return
	}
	if err != nil {
		s.unavailable(w, d, err)
		return
	}
	// The command and the record leave in one write. Yampi gives up on an
	// answer after 5 s: with the broker unreachable the writer would retry
	// for longer, so the publish gets a deadline and the platform its 503
	// in time. A publish that still lands later is harmless: the retried
	// delivery publishes the same command id, which the ledger applies
	// once, and its own record.
	cmd := command(ev, d.MerchantID, memberID, d.ReceivedAt)
	d.Outcome, d.HTTPStatus = inbound.DeliveryAccepted, http.StatusOK
	pctx, cancel := context.WithTimeout(ctx, PublishTimeout)
	err = s.publisher.PublishDelivery(pctx, *d, &cmd)
	cancel()
	if err != nil {
		s.unavailable(w, d, err)
		return
	}
	// Remembered before the answer: once the platform has its 200, a
	// repeat finds the key (when Redis is up). A lost Remember only lets a
	// repeat through to the ledger, which applies it once.
	s.remember(ctx, fastKey)
	s.metrics.observe(d.Provider, inbound.DeliveryAccepted)
	msg := "sale accepted"
	if ev.Kind == inbound.KindRefund {
		msg = "refund accepted"
	}
	if ce := s.check(msg); ce != nil {
		ce.Write(zap.String("merchant", d.MerchantID.String()), zap.String("provider", d.Provider),
			zap.String("order", ev.OrderID), zap.String("member", ids.Format(ids.Member, memberID)),
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
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retryAfter.Seconds())))))
	s.metrics.observe(mux.Vars(r)["provider"], "rate_limited")
	respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.RateLimited, "too many deliveries for this merchant, retry later"))
	return true
}

func (s *Service) remember(ctx context.Context, key string) {
	if s.dedupe == nil {
		return
	}
	if err := s.dedupe.Remember(ctx, key, DedupeTTL); err != nil {
		s.log.Debug("dedupe fast path unavailable", zap.Error(err))
	}
}

// ok answers 200 for a delivery that carries no command (duplicate,
// ignored, unattributed) once its record is acknowledged; a record the
// broker does not take turns the answer into 503, so the platform retries
// and the retry is recorded.
func (s *Service) ok(ctx context.Context, w http.ResponseWriter, d *inbound.Delivery, outcome, reason string) {
	d.Outcome, d.HTTPStatus, d.Error = outcome, http.StatusOK, reason
	if err := s.publishRecord(ctx, *d); err != nil {
		s.unavailable(w, d, err)
		return
	}
	s.metrics.observe(d.Provider, outcome)
	if ce := s.check(outcomeMessages[outcome]); ce != nil {
		ce.Write(zap.String("merchant", d.MerchantID.String()), zap.String("provider", d.Provider),
			zap.String("dedupe_key", d.DedupeKey), zap.String("reason", reason), zap.String("delivery", d.ID.String()))
	}
	respond.JSON(w, http.StatusOK, answer{Status: outcome, DeliveryID: d.ID.String(), Reason: reason})
}

// publishRecord publishes the record of a delivery without a command.
// While the background queue finds the broker down it fails at once
// rather than wait for it.
func (s *Service) publishRecord(ctx context.Context, d inbound.Delivery) error {
	if s.pending.brokerDown() {
		return errBrokerBehind
	}
	ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
	defer cancel()
	return s.publisher.PublishDelivery(ctx, d, nil)
}

// keepRecord publishes the record of a refused delivery, or queues it for
// the background when the broker does not take it: the answer does not
// depend on the record. A 503's record is queued at once: most 503s mean
// the broker just failed, and the queue tries again without delaying the
// answer. It uses a context of its own, since the record must be kept even
// when the client hung up.
func (s *Service) keepRecord(d inbound.Delivery) {
	if d.HTTPStatus != http.StatusServiceUnavailable {
		ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
		err := s.publishRecord(ctx, d)
		cancel()
		if err == nil {
			return
		}
	}
	s.pending.add(d)
}

// outcomeMessages are the log messages of the 200 outcomes but accepted.
var outcomeMessages = map[string]string{
	inbound.DeliveryDuplicate:    "delivery duplicate",
	inbound.DeliveryIgnored:      "delivery ignored",
	inbound.DeliveryUnattributed: "delivery unattributed",
}

// check returns the entry of an info line of an outcome, nil when info is
// off: the fields are built only for a line that is written.
func (s *Service) check(msg string) *zapcore.CheckedEntry {
	return s.lines.Check(zapcore.InfoLevel, msg)
}

func (s *Service) unavailable(w http.ResponseWriter, d *inbound.Delivery, err error) {
	s.log.Warn("ingest dependency unavailable", zap.Error(err))
	if d != nil {
		d.Outcome, d.HTTPStatus = inbound.DeliveryUnavailable, http.StatusServiceUnavailable
	}
	s.fail(w, d, apperr.Wrap(apperr.Unavailable, err, "temporarily unavailable, retry later"))
}

// fail answers err and records the delivery when d is not nil.
func (s *Service) fail(w http.ResponseWriter, d *inbound.Delivery, err error) {
	status := respond.Status(apperr.CodeOf(err))
	if status == http.StatusInternalServerError {
		err = apperr.Wrap(apperr.Unavailable, err, "temporarily unavailable, retry later")
		status = http.StatusServiceUnavailable
	}
	if d != nil {
		if d.Outcome == "" {
			d.Outcome = outcomeOf(apperr.CodeOf(err))
		}
		d.HTTPStatus = status
		d.Error = apperr.MessageOf(err)
		s.keepRecord(*d)
		s.metrics.observe(d.Provider, d.Outcome)
		if ce := s.check("delivery rejected"); ce != nil {
			ce.Write(zap.String("merchant", d.MerchantID.String()), zap.String("provider", d.Provider),
				zap.Int("status", status), zap.String("outcome", d.Outcome), zap.String("reason", d.Error),
				zap.String("delivery", d.ID.String()))
		}
	}
	respond.Error(w, s.log, respond.Admin, err)
}

func outcomeOf(code apperr.Code) string {
	switch code {
	case apperr.Unauthorized:
		return inbound.DeliveryUnauthorized
	case apperr.PayloadTooLarge:
		return inbound.DeliveryTooLarge
	case apperr.Unavailable, apperr.Internal:
		return inbound.DeliveryUnavailable
	}
	return inbound.DeliveryUnprocessable
}

func parseUUID(s string) (uuid.UUID, bool) {
	id, err := uuid.Parse(s)
	return id, err == nil && len(s) == 36
}

func keptHeaders(h http.Header) map[string]string {
	kept := map[string]string{}
	for _, k := range []string{"Content-Type", "User-Agent", inbound.YampiSignatureHeader, "X-Forwarded-For"} {
		if v := h.Get(k); v != "" {
			kept[k] = v
		}
	}
	return kept
}

// redact hides Guru's account token, which travels in the body, before the
// body is stored. A delivery that authenticated carries the merchant's own
// token, so only the others are parsed to find theirs.
func redact(provider string, body []byte, creds inbound.Credentials, authenticated bool) []byte {
	if provider != inbound.ProviderGuru {
		return body
	}
	token := creds.GuruAccountToken
	if !authenticated {
		var probe struct {
			APIToken string `json:"api_token"`
		}
		if json.Unmarshal(body, &probe) != nil {
			return body
		}
		token = probe.APIToken
	}
	if len(token) < 4 {
		return body
	}
	return bytes.ReplaceAll(body, []byte(token), []byte("[REDACTED]"))
}

// MaxRecordedBody is the most of a body a delivery record keeps. The record
// travels as one message, base64 inside JSON, and the broker refuses
// messages over 1 MB; the platforms' bodies are a few KiB.
const MaxRecordedBody = 512 << 10

// HeaderBodyTruncated, among a record's kept headers, gives the length of
// a body cut to MaxRecordedBody.
const HeaderBodyTruncated = "X-Convida-Body-Truncated"

// keptBody returns the part of body a record keeps, noting a cut in
// headers.
func keptBody(body []byte, headers map[string]string) []byte {
	if len(body) <= MaxRecordedBody {
		return body
	}
	headers[HeaderBodyTruncated] = strconv.Itoa(len(body))
	return body[:MaxRecordedBody]
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	return "\"" + s + "\""
}

// credentials of a provider's settings.
func (s providerSettings) credentials() inbound.Credentials {
	if s.integration == nil {
		return inbound.Credentials{}
	}
	return inbound.Credentials{GuruAccountToken: s.integration.AccountToken, YampiWebhookSecret: s.integration.WebhookSecret}
}

type providerSettings struct {
	integration *merchant.Integration // nil when not configured
}
