package httpapi

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/merchant"
)

// authenticator resolves API keys to merchants, caching answers for at most
// ttl (decision 2: a revoked key stops working within 5 s). The cache is
// keyed by the key's SHA-256, never by the key itself.
type authenticator struct {
	src Merchants
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]authEntry
}

type authEntry struct {
	merchant *merchant.Merchant // nil: the key was refused
	key      merchant.Key       // its id and display prefix, for the audit trail
	expires  time.Time
}

func newAuthenticator(src Merchants, ttl time.Duration, now func() time.Time) *authenticator {
	return &authenticator{src: src, ttl: ttl, now: now, cache: map[[32]byte]authEntry{}}
}

// presentedKey reads X-API-Key, else Authorization: Bearer.
func presentedKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-Key")); k != "" {
		return k
	}
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// entryFor returns the cache entry of key, read from the store when the
// cache holds none fresh; apperr.Unauthorized for a refused key.
func (a *authenticator) entryFor(ctx context.Context, key string) (authEntry, error) {
	unauthorized := apperr.Errorf(apperr.Unauthorized, "missing or invalid API key")
	if key == "" || len(key) > 200 {
		return authEntry{}, unauthorized
	}
	h := sha256.Sum256([]byte(key))
	now := a.now()
	if e, ok := a.lookup(h, now); ok {
		if e.merchant == nil {
			return authEntry{}, unauthorized
		}
		return e, nil
	}
	e := authEntry{expires: now.Add(a.ttl)}
	k, err := a.src.Authenticate(ctx, key)
	switch {
	case apperr.Is(err, apperr.Unauthorized):
	case err != nil:
		return authEntry{}, err
	default:
		if e.merchant, err = a.src.FindMerchantByID(ctx, k.MerchantID); err != nil {
			return authEntry{}, err
		}
		e.key = k
	}
	a.mu.Lock()
	if len(a.cache) > 100_000 {
		a.cache = map[[32]byte]authEntry{}
	}
	a.cache[h] = e
	a.mu.Unlock()
	if e.merchant == nil {
		return authEntry{}, unauthorized
	}
	return e, nil
}

// lookup returns the cache entry of the key whose SHA-256 is h while it
// is fresh at now.
func (a *authenticator) lookup(h [32]byte, now time.Time) (authEntry, bool) {
	a.mu.Lock()
	e, ok := a.cache[h]
	a.mu.Unlock()
	return e, ok && now.Before(e.expires)
}

// cached returns the entry of key when the cache holds it fresh and
// valid, false otherwise (an unknown key, or one to read again): no
// database read.
func (a *authenticator) cached(key string) (authEntry, bool) {
	if key == "" || len(key) > 200 {
		return authEntry{}, false
	}
	e, fresh := a.lookup(sha256.Sum256([]byte(key)), a.now())
	return e, fresh && e.merchant != nil
}

// authenticate is the middleware: 401 unless a valid key is presented. It
// puts the merchant and the key's SHA-256 (see keyHashOf) in the context,
// and the key as the actor of the audit events the request's changes
// write (its id and display prefix, the client's address).
//
// A missing, unknown or revoked key is a failed authentication of the
// client (ProtectionConfig.AuthFailures). A client blocked for its
// failures is answered 429 before any database work, unless its key is
// one the cache holds valid: a client sharing its address with a guesser
// (behind one NAT) keeps its service.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := presentedKey(r)
		client := s.cfg.TrustedProxies.Key(r)
		var e authEntry
		if wait := s.cfg.Protection.AuthFailures.Blocked(client); wait > 0 {
			var ok bool
			if e, ok = s.auth.cached(key); !ok {
				s.refuseBlocked(w, r, wait)
				return
			}
		} else {
			var err error
			if e, err = s.auth.entryFor(r.Context(), key); err != nil {
				err = s.classify(err)
				if apperr.Is(err, apperr.Unauthorized) && s.authFailed(w, r, client) {
					return
				}
				if apperr.Is(err, apperr.Internal) { // the store did not answer: an outage, not the client's fault
					w.Header().Set("Retry-After", "1")
					err = apperr.Wrap(apperr.Unavailable, err, "temporarily unavailable, retry later")
				}
				s.fail(w, r, err)
				return
			}
		}
		ctx := context.WithValue(r.Context(), merchantKey, e.merchant)
		ctx = context.WithValue(ctx, keyHashKey{}, sha256.Sum256([]byte(key)))
		ctx = audit.WithActor(ctx, audit.Actor{Type: audit.ActorAPIKey, ID: e.key.ID.String(), Label: e.key.Prefix},
			s.cfg.TrustedProxies.String(r))
		ctx = audit.WithClock(ctx, s.cfg.Now)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// keyHashKey is the context key of the authenticated API key's SHA-256.
type keyHashKey struct{}

// keyHashOf returns the SHA-256 of the API key that authenticated r, which
// identifies the key (the rate limit is per key) without holding the secret;
// ok is false outside authenticated routes.
func keyHashOf(r *http.Request) (sum [32]byte, ok bool) {
	sum, ok = r.Context().Value(keyHashKey{}).([32]byte)
	return sum, ok
}

// noteMerchant passes the merchant that authenticate put in the context to
// the access log, whose context is the caller's.
func noteMerchant(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := merchantOf(r); m != nil {
			accesslog.Merchant(r, m.ID.String())
		}
		next.ServeHTTP(w, r)
	})
}
