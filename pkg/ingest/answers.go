package ingest

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/respond"
)

// answer is the body of a 200: what became of the delivery.
type answer struct {
	Status     string `json:"status"`
	DeliveryID string `json:"delivery_id"`
	Reason     string `json:"reason,omitempty"`
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
// the (address, merchant); one beyond the allowance is answered 429
// (refuseBlocked). Each is recorded with the digest and length of its body
// and at most MaxRefusedBody of it, so that a client's records cost little
// however many it sends.
func (s *Service) refuse(w http.ResponseWriter, r *http.Request, src source, d *inbound.Delivery, ref refusal) {
	if src.blocked > 0 {
		s.refuseBlocked(w, d, src.blocked, ref)
		return
	}
	if wait, over := s.failures.Failed(r.Context(), src.key); over {
		s.refuseBlocked(w, d, wait, ref)
		return
	}
	keepRefused(d, ref.raw, ref.kept)
	answer := ref.err
	if apperr.Is(answer, apperr.Unauthorized) {
		answer = apperr.Errorf(apperr.Unauthorized, UnauthenticatedMessage)
	}
	s.failAs(w, d, ref.err, answer)
}

// retryAfterHeader is d in whole seconds, at least 1.
func retryAfterHeader(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
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
	case apperr.RateLimited:
		return inbound.DeliveryRateLimited
	case apperr.Unavailable, apperr.Internal:
		return inbound.DeliveryUnavailable
	}
	return inbound.DeliveryUnprocessable
}
