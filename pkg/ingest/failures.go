package ingest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/respond"
)

// The failed-authentication limit at the ingest counts per address and
// merchant (issue 29): the platforms post every merchant's webhooks
// from the same few addresses, so a count per address let one
// merchant's wrong token (the commonest set-up mistake) or a
// forger of one merchant's deliveries get every other merchant's genuine
// sales from those addresses answered 429. Each (address, merchant) spends
// an allowance of its own; the merchant ids that do not exist, which are
// guessed, spend one more allowance per address, apart from every real
// merchant's.

// source is the client of a delivery as the limit counts it: its address
// (clientip.Resolver.Key), the count this delivery's failures spend (the
// address with the merchant the URL names), and how long that count stays
// blocked (0: it is not).
type source struct {
	addr, key string
	blocked   time.Duration
}

// sourceOf returns the source of r, a delivery for rawMerchantID as the
// URL wrote it (36 characters, parsed). The id is lowered, not re-encoded: its
// upper-case spelling is the same merchant and must spend the same count.
// Blocked reads only memory.
func (s *Service) sourceOf(r *http.Request, rawMerchantID string) source {
	addr := s.clients.Key(r)
	key := addr + "|" + strings.ToLower(rawMerchantID)
	return source{addr: addr, key: key, blocked: s.failures.Blocked(key)}
}

// guessKey is the count of an address's deliveries for merchants that do
// not exist.
func guessKey(addr string) string { return addr + "|unknown-merchant" }

// settingsFor returns the merchant's settings of provider, from memory
// when they are there. Otherwise they are read, unless the read is what
// the limit saves: a blocked (address, merchant) gets errBlocked, and a
// merchant this process has never found, from an address whose guesses
// are blocked, a guessBlocked. Neither costs a database read.
func (s *Service) settingsFor(ctx context.Context, merchantID uuid.UUID, provider string, src source) (providerSettings, error) {
	if settings, ok := s.merchants.fresh(merchantID, provider); ok {
		return settings, nil
	}
	if src.blocked > 0 {
		return providerSettings{}, errBlocked
	}
	if !s.merchants.known(merchantID) {
		if wait := s.failures.Blocked(guessKey(src.addr)); wait > 0 {
			return providerSettings{}, guessBlocked{wait}
		}
	}
	return s.merchants.get(ctx, merchantID, provider)
}

// errBlocked: the (address, merchant) is blocked and its delivery cannot
// be authenticated from memory.
var errBlocked = errors.New("client blocked for its failed authentications")

// guessBlocked: the address is blocked for the merchant ids it guessed,
// and the merchant is not known to exist.
type guessBlocked struct{ wait time.Duration }

func (guessBlocked) Error() string { return "address blocked for the merchant ids it guessed" }

// failSettings answers a delivery whose settings could not be had, but a
// blocked pair's (ServeWebhook refuses it unread): 404 for an unknown
// merchant, which is a failed authentication of the address's guesses
// (merchant ids are random: one that does not exist was guessed, and each
// guess cost a database read), or 429 when that failure is beyond the
// allowance or the guesses are blocked, not recorded (there is no merchant
// to record it for); 503 otherwise.
func (s *Service) failSettings(w http.ResponseWriter, r *http.Request, src source, err error) {
	var guess guessBlocked
	switch {
	case errors.As(err, &guess):
		s.refuseGuesses(w, guess.wait)
		return
	case apperr.Is(err, apperr.NotFound):
		if wait, over := s.failures.Failed(r.Context(), guessKey(src.addr)); over {
			s.refuseGuesses(w, wait)
			return
		}
	}
	s.fail(w, nil, err)
}

// refuseUnread answers 429 to a delivery of a blocked (address, merchant)
// that could not be authenticated from memory, and records it with what
// refuse keeps of a refusal: the digest and length of the body and at
// most MaxRefusedBody of it (none of a body over MaxBody, whose cut could
// hide a token).
func (s *Service) refuseUnread(w http.ResponseWriter, r *http.Request, d *inbound.Delivery, wait time.Duration) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var kept []byte
	if err == nil {
		kept = redact(d.Provider, body, "", false)
	}
	s.refuseBlocked(w, d, wait, refusal{raw: body, kept: kept})
}

// refuseBlocked answers 429 to a delivery whose (address, merchant) spent
// its allowance of failed authentications, and records it as refused
// before it authenticated (rate_limited): the record travels through the
// broker like every refusal's, so the block costs no database work on the
// request path, and the merchant sees every delivery its platform sent.
func (s *Service) refuseBlocked(w http.ResponseWriter, d *inbound.Delivery, wait time.Duration, ref refusal) {
	s.failures.Refused()
	keepRefused(d, ref.raw, ref.kept)
	d.Outcome = inbound.DeliveryRateLimited
	w.Header().Set("Retry-After", retryAfterHeader(wait))
	s.fail(w, d, apperr.Errorf(apperr.RateLimited,
		"too many failed authentications from this address for this merchant, retry later"))
}

// refuseGuesses answers 429 to an address blocked for the merchant ids it
// guessed. It is counted (AuthFailures.Refused), not recorded: no merchant
// is known to record it for.
func (s *Service) refuseGuesses(w http.ResponseWriter, wait time.Duration) {
	s.failures.Refused()
	w.Header().Set("Retry-After", retryAfterHeader(wait))
	respond.Error(w, s.log, respond.Admin, apperr.Errorf(apperr.RateLimited,
		"too many failed authentications from this address, retry later"))
}
