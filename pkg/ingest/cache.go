package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/referral"
)

// settingsCache keeps merchant settings in memory for a short TTL: a sale
// burst must not turn into a database read per request, and a changed
// secret must take effect within seconds. While PostgreSQL cannot be
// reached, an expired entry keeps serving (stale if error): the request path
// of a sale needs no database, and an outage must not turn a known
// merchant's sales into 503s.
type settingsCache struct {
	src Merchants
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[settingsKey]settingsEntry
	// found holds the merchants this process has found to exist: merchants
	// are never deleted (migration 00024), so an id found once is a
	// merchant's for good, and its deliveries never spend the allowance of
	// the ids that do not exist (failures.go).
	found map[uuid.UUID]struct{}
}

type settingsKey struct {
	merchant uuid.UUID
	provider string
}

type settingsEntry struct {
	settings providerSettings
	err      error
	expires  time.Time
}

func newSettingsCache(src Merchants, ttl time.Duration, now func() time.Time) *settingsCache {
	return &settingsCache{src: src, ttl: ttl, now: now, entries: map[settingsKey]settingsEntry{}, found: map[uuid.UUID]struct{}{}}
}

// get returns the provider settings of the merchant; apperr.NotFound for an
// unknown merchant, nil integration when the provider is not configured.
func (c *settingsCache) get(ctx context.Context, merchantID uuid.UUID, provider string) (providerSettings, error) {
	k := settingsKey{merchantID, provider}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.settings, e.err
	}
	fresh, err := c.load(ctx, merchantID, provider)
	switch {
	case err == nil:
		e = fresh
	case ok:
		// Stale if error: the last settings keep serving, and the next
		// refresh is a TTL away, so an outage costs one read per TTL.
	default:
		return providerSettings{}, err // not cached: transient
	}
	e.expires = now.Add(c.ttl)
	c.mu.Lock()
	if len(c.entries) > 100_000 {
		c.entries = map[settingsKey]settingsEntry{}
	}
	c.entries[k] = e
	if e.err == nil {
		if len(c.found) > 100_000 {
			c.found = map[uuid.UUID]struct{}{}
		}
		c.found[merchantID] = struct{}{}
	}
	c.mu.Unlock()
	return e.settings, e.err
}

// known reports whether merchantID was found to exist by this process.
func (c *settingsCache) known(merchantID uuid.UUID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.found[merchantID]
	return ok
}

// fresh returns the settings of merchantID's provider when memory holds
// them within their TTL, without a read; false otherwise, and for an
// unknown merchant.
func (c *settingsCache) fresh(merchantID uuid.UUID, provider string) (providerSettings, bool) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[settingsKey{merchantID, provider}]
	c.mu.Unlock()
	if !ok || e.err != nil || !now.Before(e.expires) {
		return providerSettings{}, false
	}
	return e.settings, true
}

// load reads the settings of merchantID's provider. An unknown merchant is
// an entry (apperr.NotFound, cached like settings); any other error is
// transient and returned.
func (c *settingsCache) load(ctx context.Context, merchantID uuid.UUID, provider string) (settingsEntry, error) {
	var e settingsEntry
	if _, err := c.src.FindMerchantByID(ctx, merchantID); err != nil {
		if !apperr.Is(err, apperr.NotFound) {
			return e, err
		}
		e.err = apperr.Errorf(apperr.NotFound, "unknown provider or merchant")
		return e, nil
	}
	in, err := c.src.FindIntegration(ctx, merchantID, provider)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return e, err
	}
	e.settings.integration = in
	return e, nil
}

// couponCache remembers resolved coupons, for the intake's ladder (it is
// the intake's Coupons). Codes never change owner, so a hit is always
// right; misses are not cached (the member may be created a moment
// later).
type couponCache struct {
	src intake.Coupons
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[couponKey]couponEntry
}

type couponKey struct {
	merchant uuid.UUID
	code     string
}

type couponEntry struct {
	member  uuid.UUID
	expires time.Time
}

func newCouponCache(src intake.Coupons, ttl time.Duration, now func() time.Time) *couponCache {
	return &couponCache{src: src, ttl: ttl, now: now, entries: map[couponKey]couponEntry{}}
}

// FindMemberByCoupon returns the member whose referral code is code,
// apperr.NotFound when none (or when code is empty).
func (c *couponCache) FindMemberByCoupon(ctx context.Context, merchantID uuid.UUID, code string) (uuid.UUID, error) {
	code = referral.CouponKey(code)
	if code == "" {
		return uuid.Nil, apperr.Errorf(apperr.NotFound, "no coupon")
	}
	k := couponKey{merchantID, code}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.member, nil
	}
	id, err := c.src.FindMemberByCoupon(ctx, merchantID, code)
	switch {
	case err == nil:
	case ok && !apperr.Is(err, apperr.NotFound):
		id = e.member // stale if error: a code never changes owner
	default:
		return uuid.Nil, err
	}
	c.mu.Lock()
	if len(c.entries) > 500_000 {
		c.entries = map[couponKey]couponEntry{}
	}
	c.entries[k] = couponEntry{member: id, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return id, nil
}

// Metrics counts deliveries by provider and outcome.
type Metrics struct{ deliveries *prometheus.CounterVec }

// NewMetrics registers the ingest metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convida_ingest_deliveries_total", Help: "Inbound webhook deliveries by provider and outcome.",
	}, []string{"provider", "outcome"})}
	reg.MustRegister(m.deliveries)
	return m
}

func (m *Metrics) observe(provider, outcome string) {
	if m != nil {
		m.deliveries.WithLabelValues(provider, outcome).Inc()
	}
}
