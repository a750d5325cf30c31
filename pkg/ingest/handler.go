package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/clientip"
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
		coupons:   newCouponCache(cfg.Coupons, 10*time.Minute, cfg.Now),
		dedupe:    cfg.Dedupe, publisher: cfg.Publisher, pending: newPendingRecords(cfg.Publisher, cfg.Log),
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

// answer is the body of a 200: what became of the delivery.
type answer struct {
	Status     string `json:"status"`
	DeliveryID string `json:"delivery_id"`
	Reason     string `json:"reason,omitempty"`
}

// ServeWebhook handles one delivery. Answers (decision 23): 200 once the
// command and the delivery's record are acknowledged by the broker, or for
// a duplicate, ignored or unattributed event once its record is; 401 for
// every authentication failure, with one message; 404 unknown provider or
// merchant; 413 body over 1 MiB; 422 unmappable body; 429 over the
// merchant's ceiling, or from a client blocked for its failed
// authentications; 503 when the broker (or, with cold caches, the
// database) cannot be reached (the platform retries). Every answer is
// written last: nothing runs on the request goroutine after it.
//
// A blocked client costs no database work: its delivery is answered 429
// unless it authenticates with settings already in memory (a platform
// sharing its address with a forger keeps being served).
func (s *Service) ServeWebhook(w http.ResponseWriter, r *http.Request) {
	vars := mux.Vars(r)
	src := source{key: s.clients.Key(r)}
	src.blocked = s.failures.Blocked(src.key)
	d := &inbound.Delivery{ID: uuid.New(), Provider: vars["provider"], ReceivedAt: s.now(), Headers: keptHeaders(r.Header)}
	adapter, ok := inbound.Lookup(d.Provider)
	merchantID, okID := parseUUID(vars["merchant_id"])
	switch {
	case src.blocked > 0 && !(ok && okID):
		s.refuseBlocked(w, src.blocked)
		return
	case !ok || !okID:
		respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.NotFound, "unknown provider or merchant"))
		return
	}
	ctx := r.Context()
	settings, err := s.settingsFor(ctx, merchantID, d.Provider, src)
	if err != nil {
		s.failSettings(w, r, src, err)
		return
	}
	if s.overLimit(w, r, merchantID) {
		return
	}
	d.MerchantID = merchantID
	creds := settings.credentials()
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
	out, err := adapter.Handle(body, adapterHeader(r), creds)
	if errors.Is(err, inbound.ErrNotAuthenticated) {
		s.refuse(w, r, src, d, refusal{raw: body, kept: redact(d.Provider, body, creds, false), err: err})
		return
	}
	d.Body = keptBody(redact(d.Provider, body, creds, true), d.Headers)
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
// request's, and for Kiwify, which signs in the URL's query, that
// signature under inbound.KiwifySignatureHeader, set only from the query
// (a client's own header of that name is dropped).
func adapterHeader(r *http.Request) http.Header {
	if mux.Vars(r)["provider"] != inbound.ProviderKiwify {
		return r.Header
	}
	h := r.Header.Clone()
	h.Del(inbound.KiwifySignatureHeader)
	if sig := r.URL.Query().Get(inbound.KiwifySignatureParam); sig != "" {
		h.Set(inbound.KiwifySignatureHeader, sig)
	}
	return h
}

// source is the client of a request as the failed-authentication limit
// counts it, and how long it stays blocked (0: it is not).
type source struct {
	key     string
	blocked time.Duration
}

// settingsFor returns the merchant's settings of provider. A blocked
// client gets only settings already in memory, errBlocked otherwise: it
// costs no database read.
func (s *Service) settingsFor(ctx context.Context, merchantID uuid.UUID, provider string, src source) (providerSettings, error) {
	if src.blocked > 0 {
		if settings, ok := s.merchants.fresh(merchantID, provider); ok {
			return settings, nil
		}
		return providerSettings{}, errBlocked
	}
	return s.merchants.get(ctx, merchantID, provider)
}

// errBlocked: the client is blocked and its delivery cannot be
// authenticated from memory.
var errBlocked = errors.New("client blocked for its failed authentications")

// failSettings answers a delivery whose settings could not be had: 429 for
// a blocked client; 404 for an unknown merchant, which is a failed
// authentication too (merchant ids are random: one that does not exist was
// guessed, and each guess cost a database read), or 429 when that failure
// is beyond the client's allowance; 503 otherwise.
func (s *Service) failSettings(w http.ResponseWriter, r *http.Request, src source, err error) {
	switch {
	case errors.Is(err, errBlocked):
		s.refuseBlocked(w, src.blocked)
		return
	case apperr.Is(err, apperr.NotFound):
		if wait, over := s.failures.Failed(r.Context(), src.key); over {
			s.refuseBlocked(w, wait)
			return
		}
	}
	s.fail(w, nil, err)
}

// refusal is a delivery refused before it authenticated: the body
// received, the part of it a record may keep (already redacted), and why.
type refusal struct {
	raw, kept []byte
	err       error
}

// UnauthenticatedMessage answers every delivery that failed to
// authenticate (a wrong token or signature, none sent, a provider the
// merchant has not configured): telling them apart would tell an outsider
// which platforms a merchant uses. The record keeps the reason.
const UnauthenticatedMessage = "the webhook could not be authenticated"

// refuse answers a delivery refused before it authenticated, which anyone
// who knows the merchant's URL may send. Its failure is counted against
// the client; one beyond the client's allowance is answered 429 and not
// recorded, so that a client's records are bounded by its allowance. The
// others are recorded with the digest and length of their body and at
// most MaxRefusedBody of it.
func (s *Service) refuse(w http.ResponseWriter, r *http.Request, src source, d *inbound.Delivery, ref refusal) {
	if src.blocked > 0 {
		s.refuseBlocked(w, src.blocked)
		return
	}
	if wait, over := s.failures.Failed(r.Context(), src.key); over {
		s.refuseBlocked(w, wait)
		return
	}
	keepRefused(d, ref.raw, ref.kept)
	answer := ref.err
	if apperr.Is(answer, apperr.Unauthorized) {
		answer = apperr.Errorf(apperr.Unauthorized, UnauthenticatedMessage)
	}
	s.failAs(w, d, ref.err, answer)
}

// refuseBlocked answers 429 to a client blocked for its failed
// authentications. It is counted (AuthFailures.Refused), not recorded:
// recording would cost what the block saves.
func (s *Service) refuseBlocked(w http.ResponseWriter, wait time.Duration) {
	s.failures.Refused()
	w.Header().Set("Retry-After", retryAfterHeader(wait))
	respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.RateLimited,
		"too many failed authentications from this address, retry later"))
}

// retryAfterHeader is d in whole seconds, at least 1.
func retryAfterHeader(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

func (s *Service) accept(ctx context.Context, w http.ResponseWriter, d *inbound.Delivery, ev *inbound.OrderEvent) {
	d.DedupeKey = ev.DedupeKey
	fastKey := inbound.FastDedupeKey(d.MerchantID, ev.DedupeKey)
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
	cmd := ev.Command(d.MerchantID, memberID, d.ReceivedAt)
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
	w.Header().Set("Retry-After", retryAfterHeader(retryAfter))
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
	s.failAs(w, d, err, err)
}

// failAs answers answer and records the delivery, when d is not nil, with
// the reason recorded, which may say more than the answer.
func (s *Service) failAs(w http.ResponseWriter, d *inbound.Delivery, recorded, answer error) {
	status := respond.Status(apperr.CodeOf(answer))
	if status == http.StatusInternalServerError {
		answer = apperr.Wrap(apperr.Unavailable, answer, "temporarily unavailable, retry later")
		recorded, status = answer, http.StatusServiceUnavailable
	}
	if d != nil {
		if d.Outcome == "" {
			d.Outcome = outcomeOf(apperr.CodeOf(answer))
		}
		d.HTTPStatus = status
		d.Error = apperr.MessageOf(recorded)
		s.keepRecord(*d)
		s.metrics.observe(d.Provider, d.Outcome)
		if ce := s.check("delivery rejected"); ce != nil {
			ce.Write(zap.String("merchant", d.MerchantID.String()), zap.String("provider", d.Provider),
				zap.Int("status", status), zap.String("outcome", d.Outcome), zap.String("reason", d.Error),
				zap.String("delivery", d.ID.String()))
		}
	}
	respond.Error(w, s.log, respond.Admin, answer)
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
// token; the others are parsed to find theirs (another account's, perhaps)
// and lose the merchant's too, should it be in a body that did not parse.
// Hotmart's hottok travels in a header, which is not kept; it is hidden
// from the body too, should a platform ever put it there (its older
// postbacks did).
func redact(provider string, body []byte, creds inbound.Credentials, authenticated bool) []byte {
	var tokens []string
	switch provider {
	case inbound.ProviderGuru:
		tokens = []string{creds.GuruAccountToken}
		if !authenticated {
			var probe struct {
				APIToken string `json:"api_token"`
			}
			if json.Unmarshal(body, &probe) == nil {
				tokens = append(tokens, probe.APIToken)
			}
		}
	case inbound.ProviderHotmart:
		tokens = []string{creds.HotmartHottok}
	}
	for _, token := range tokens {
		if len(token) >= 4 {
			body = bytes.ReplaceAll(body, []byte(token), []byte("[REDACTED]"))
		}
	}
	return body
}

// MaxRecordedBody is the most of a body a delivery record keeps. The record
// travels as one message, base64 inside JSON, and the broker refuses
// messages over 1 MB; the platforms' bodies are a few KiB.
const MaxRecordedBody = 512 << 10

// HeaderBodyTruncated, among a record's kept headers, gives the length of
// a body cut to MaxRecordedBody.
const HeaderBodyTruncated = "X-Convida-Body-Truncated"

// MaxRefusedBody is the most of its body the record of a delivery refused
// before it authenticated keeps. Anyone may post to a merchant's webhook
// URL, so such a record must cost little; the digest and length of the
// whole body identify it (a flood of one forged body shows as one digest).
const MaxRefusedBody = 4 << 10

// keepRefused sets the record of a delivery refused before it
// authenticated: the SHA-256 and length of raw, the body received, and at
// most MaxRefusedBody of kept, its redacted form, cut at a UTF-8
// boundary; a cut is noted in the headers, with the length received.
func keepRefused(d *inbound.Delivery, raw, kept []byte) {
	sum := sha256.Sum256(raw)
	d.BodyLength, d.BodySHA256 = len(raw), sum[:]
	d.Body = cutUTF8(kept, MaxRefusedBody)
	if len(d.Body) < len(kept) {
		d.Headers[HeaderBodyTruncated] = strconv.Itoa(len(raw))
	}
}

// cutUTF8 returns at most the first n bytes of b, without splitting a
// UTF-8 sequence at the cut.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := n
	for i > 0 && i > n-(utf8.UTFMax-1) && !utf8.RuneStart(b[i]) {
		i--
	}
	if !utf8.RuneStart(b[i]) {
		i = n // not UTF-8 here: cut where asked
	}
	return b[:i]
}

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
	in := s.integration
	switch in.Provider {
	case merchant.ProviderHotmart:
		return inbound.Credentials{HotmartHottok: in.AccountToken}
	case merchant.ProviderKiwify:
		return inbound.Credentials{KiwifyWebhookToken: in.WebhookSecret}
	}
	return inbound.Credentials{GuruAccountToken: in.AccountToken, YampiWebhookSecret: in.WebhookSecret}
}

type providerSettings struct {
	integration *merchant.Integration // nil when not configured
}
