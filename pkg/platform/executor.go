package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/retry"
)

// Executor carries out redemptions against the platform of the merchant's
// settings: Guru for subscription discounts, Yampi for store credit, through
// the clients of package  Its zero value is usable (default
// client, policy and sleep); it is safe for concurrent use and must not be
// copied after its first call.
type Executor struct {
	// HTTP sends the requests; nil means a netguard client with private
	// networks refused, never a plain one: the API URL is the merchant's
	// to choose, and must not reach the operator's network. Execute never
	// follows redirects (it answers a 3xx as a refusal), so that the
	// credentials of a merchant never travel to another host.
	HTTP *http.Client
	// Retry is the policy for transient failures; zero fields take the
	// values of DefaultRetryPolicy.
	Retry redemption.RetryPolicy
	// Sleep waits d or until ctx ends, returning ctx.Err() then; nil means a
	// real timer. Tests inject it to record the pauses without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// RequestTimeout bounds each request (through its context); zero means
	// DefaultTimeout.
	RequestTimeout time.Duration
	// CouponKey keys the codes of Yampi coupons (redemption.CouponCodeFor); production
	// derives it from SECRETS_KEY (CouponKeyInfo). Without it no store
	// credit is carried out.
	CouponKey []byte
	// Platform, when set, sends the requests instead of a client built
	// from HTTP and RequestTimeout: one shared by the roles of a process
	// lets their identical requests meet (Client).
	Platform *Client

	once   sync.Once
	client *Client
}

// NewExecutor returns an Executor that sends its requests with client (nil
// means the guarded default, see Executor.HTTP) and retries by policy.
func NewExecutor(client *http.Client, policy redemption.RetryPolicy) *Executor {
	return &Executor{HTTP: client, Retry: policy}
}

// Execute carries out req with settings — the Guru integration for
// redemption.TypeSubscriptionDiscount, the Yampi one for redemption.TypeStoreCredit — and returns
// what the platform did. Settings come decrypted; an empty APIURL means
// the platform's public API (DefaultGuruAPIURL,
// DefaultYampiAPIURL).
//
// One attempt runs all the requests of the platform (Guru: read the
// subscription, then add the discount; Yampi: create the coupon, and confirm
// it on a 422). A 5xx, a 429 or a network error (including the per-request
// timeout) ends the attempt and, while the policy allows, the whole attempt
// runs again after a pause. A 3xx or any other 4xx fails at once.
//
// Repeating Execute for the same redemption is safe with Yampi: the coupon
// code derives from the redemption id, so a repeat cannot create a second
// coupon and finds the first. With Guru it is safe only if Guru honours the
// Idempotency-Key header sent on every request: a discount whose answer was
// lost may be added twice.
//
// Every error is an *apperr.Error whose message names the platform and the
// request, and carries the platform's status and at most 200 characters of
// its answer, never a credential:
//   - apperr.Unprocessable: the platform refused (3xx/4xx other than 429, or
//     an answer Execute cannot use), the API URL is refused by netguard (a
//     non-public address or plain http: netguard.ErrNotPublic's or
//     ErrNotHTTPS's words, never the address), or the settings or req lack what the
//     platform needs (user token, secret key, store alias, subscription id,
//     a valid API URL, a positive amount, a redemption id); no request is
//     sent for the latter.
//   - apperr.Unavailable: the platform failed transiently on every attempt.
//     When ctx ends first, the error is Unavailable too and also wraps
//     ctx.Err() (errors.Is(err, context.Canceled)): the outcome is unknown,
//     so the caller should leave the redemption pending rather than fail it.
func (e *Executor) Execute(ctx context.Context, settings merchant.Integration, req redemption.Request) (redemption.Result, error) {
	var (
		op  operation
		err error
	)
	switch req.Type {
	case redemption.TypeSubscriptionDiscount:
		op, err = e.newGuru(settings, req)
	case redemption.TypeStoreCredit:
		op, err = e.newYampi(settings, req)
	default:
		return redemption.Result{}, apperr.Errorf(apperr.Unprocessable, "unknown redemption type %q", clip(req.Type, 40))
	}
	if err != nil {
		return redemption.Result{}, err
	}
	return e.run(ctx, op)
}

// operation is the platform-specific part of a redemption: one attempt at
// it. A *TransientError means the attempt may be repeated.
type operation interface {
	platformName() string
	attempt(ctx context.Context) (redemption.Result, error)
}

// run tries op by the retry policy.
func (e *Executor) run(ctx context.Context, op operation) (redemption.Result, error) {
	policy := e.Retry.WithDefaults()
	var last *TransientError
	for failed := 0; ; {
		if err := ctx.Err(); err != nil {
			return redemption.Result{}, stopped(op.platformName(), last, err)
		}
		res, err := op.attempt(ctx)
		if err == nil {
			return res, nil
		}
		if !errors.As(err, &last) {
			return redemption.Result{}, err
		}
		if err := ctx.Err(); err != nil {
			return redemption.Result{}, stopped(op.platformName(), last, err)
		}
		failed++
		if failed >= policy.Attempts {
			return redemption.Result{}, apperr.Wrap(apperr.Unavailable, last.Cause,
				fmt.Sprintf("%s (gave up after %d attempts)", last.Msg, failed))
		}
		if err := e.sleep(ctx, policy.Pause(failed, last.Wait)); err != nil {
			return redemption.Result{}, stopped(op.platformName(), last, err)
		}
	}
}

// stopped is the error of a run whose context ended.
func stopped(provider string, last *TransientError, ctxErr error) error {
	msg := provider + ": stopped before the platform confirmed the redemption"
	if last != nil {
		msg += "; last try: " + last.Msg
	}
	return apperr.Wrap(apperr.Unavailable, ctxErr, msg)
}

func (e *Executor) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}

// checkRequest refuses, before any request, a redemption that settings of
// another provider, no id or no positive amount make impossible.
func checkRequest(provider string, settings merchant.Integration, req redemption.Request) error {
	switch {
	case settings.Provider != "" && settings.Provider != provider:
		return apperr.Errorf(apperr.Unprocessable, "a %s redemption needs the %s settings, got those of %q",
			req.Type, provider, clip(settings.Provider, 40))
	case req.RedemptionID == uuid.Nil:
		return apperr.Errorf(apperr.Unprocessable, "the redemption has no id")
	case req.Amount <= 0:
		return apperr.Errorf(apperr.Unprocessable, "the redemption amount must be more than zero")
	}
	return nil
}

// platforms is the client of the platforms' APIs: Platform, or one built
// from HTTP and RequestTimeout on the first call.
func (e *Executor) platforms() *Client {
	e.once.Do(func() {
		e.client = e.Platform
		if e.client == nil {
			e.client = &Client{HTTP: e.HTTP, Timeout: e.RequestTimeout}
		}
	})
	return e.client
}

// guruAccount and yampiAccount are settings as the platform clients take
// them; every credential of the merchant is kept out of messages.
func guruAccount(settings merchant.Integration, idempotencyKey string) GuruAccount {
	return GuruAccount{APIURL: settings.APIURL, UserToken: settings.UserToken, IdempotencyKey: idempotencyKey,
		Secrets: []string{settings.UserSecretKey, settings.AccountToken, settings.WebhookSecret}}
}

func yampiAccount(settings merchant.Integration, idempotencyKey string) YampiAccount {
	return YampiAccount{APIURL: settings.APIURL, UserToken: settings.UserToken, UserSecretKey: settings.UserSecretKey,
		StoreAlias: settings.StoreAlias, IdempotencyKey: idempotencyKey, Secrets: []string{settings.AccountToken, settings.WebhookSecret}}
}

// clip shortens s to n runes for an error message.
func clip(s string, n int) string { return Clip(s, n) }

// guruCycles is how many cycles one redemption discounts (decision 19).
const guruCycles = 1

// guru adds a one-cycle discount to a Guru subscription.
type guru struct {
	g     *Guru
	subID string
	cents int64
}

func (e *Executor) newGuru(settings merchant.Integration, req redemption.Request) (*guru, error) {
	switch missing := redemption.MissingSetting(redemption.TypeSubscriptionDiscount, settings); {
	case missing != "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the guru %s is not set in the merchant's settings", missing)
	case strings.TrimSpace(req.SubscriptionID) == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the redemption has no guru subscription id")
	}
	if err := checkRequest(provider.Guru, settings, req); err != nil {
		return nil, err
	}
	g, err := e.platforms().Guru(guruAccount(settings, req.RedemptionID.String()))
	if err != nil {
		return nil, err
	}
	return &guru{g: g, subID: req.SubscriptionID, cents: req.Amount}, nil
}

func (*guru) platformName() string { return provider.Guru }

// attempt discounts the next cycle not billed yet; the platform client
// reads the subscription anew each time, so that a retry after a charge
// that happened meanwhile still discounts the next cycle.
func (g *guru) attempt(ctx context.Context) (redemption.Result, error) {
	if err := g.g.DiscountNextCycles(ctx, g.subID, g.cents, guruCycles); err != nil {
		return redemption.Result{}, err
	}
	return redemption.Result{AppliedCycles: guruCycles}, nil
}

// yampi creates a single-use coupon in a Yampi store.
type yampi struct {
	y      *Yampi
	credit StoreCredit
}

func (e *Executor) newYampi(settings merchant.Integration, req redemption.Request) (*yampi, error) {
	if missing := redemption.MissingSetting(redemption.TypeStoreCredit, settings); missing != "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the yampi %s is not set in the merchant's settings", missing)
	}
	if len(e.CouponKey) == 0 {
		return nil, errors.New("redemption: the executor has no coupon key (Executor.CouponKey)")
	}
	if err := checkRequest(provider.Yampi, settings, req); err != nil {
		return nil, err
	}
	y, err := e.platforms().Yampi(yampiAccount(settings, req.RedemptionID.String()))
	if err != nil {
		return nil, err
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	start := now.Truncate(time.Second).UTC()
	desc := "Convida " + ids.Format(ids.Redemption, req.RedemptionID)
	if req.MemberEmail != "" {
		desc += " " + req.MemberEmail
	}
	return &yampi{y: y, credit: StoreCredit{Code: redemption.CouponCodeFor(e.CouponKey, req.RedemptionID), Description: desc,
		Cents: req.Amount, Start: start, End: start.Add(redemption.CouponValidity)}}, nil
}

func (*yampi) platformName() string { return provider.Yampi }

// attempt creates the coupon; the code derives from the redemption, so a
// repeat finds the coupon of an earlier attempt whose answer was lost
// instead of creating a second one.
func (y *yampi) attempt(ctx context.Context) (redemption.Result, error) {
	if err := y.y.CreateStoreCredit(ctx, y.credit); err != nil {
		return redemption.Result{}, err
	}
	return redemption.Result{CouponCode: y.credit.Code, ExpiresAt: y.credit.End}, nil
}

// RetryAfter is the Retry-After a platform sent with a transient failure
// of ProvisionCoupon (zero when it sent none).
func RetryAfter(err error) time.Duration { return RetryAfter(err) }

// ProvisionCoupon makes one try at putting req's coupon at provider with
// settings (decrypted; an empty APIURL means the public API), through the
// platform's client (Guru.ProvisionCoupon,
// Yampi.ProvisionCoupon): with a CouponID the coupon is updated
// (created again when the platform no longer has it, unless req.Inactive);
// otherwise it is created, and a code that exists already is adopted
// rather than duplicated, so that repeating a creation whose answer was
// lost never makes a second coupon. The validity runs redemption.RefereeCouponYears
// from req.Now.
//
// It does not retry. The error is an *apperr.Error: Unavailable for a 5xx,
// a 429 or a network error (worth another try later; see RetryAfter),
// Unprocessable for a refusal or settings that lack something (the
// message names the platform, the request and at most 200 characters of
// its answer, never a credential).
func (e *Executor) ProvisionCoupon(ctx context.Context, platform string, settings merchant.Integration, req redemption.CouponRequest) (redemption.CouponResult, error) {
	coupon, err := couponOf(platform, settings, req)
	if err != nil {
		return redemption.CouponResult{}, err
	}
	var res CouponResult
	switch platform {
	case provider.Guru:
		var g *Guru
		if g, err = e.platforms().Guru(guruAccount(settings, req.IdempotencyKey)); err == nil {
			res, err = g.ProvisionCoupon(ctx, coupon)
		}
	default:
		var y *Yampi
		if y, err = e.platforms().Yampi(yampiAccount(settings, req.IdempotencyKey)); err == nil {
			res, err = y.ProvisionCoupon(ctx, coupon)
		}
	}
	var t *TransientError
	if errors.As(err, &t) {
		return redemption.CouponResult{}, apperr.Wrap(apperr.Unavailable, t, t.Msg)
	}
	if err != nil {
		return redemption.CouponResult{}, err
	}
	return redemption.CouponResult{CouponID: res.ID, Adopted: res.Adopted}, nil
}

// couponOf checks req and returns the coupon to put at the platform: the
// member's code with the referee discount, valid redemption.RefereeCouponYears.
func couponOf(platform string, settings merchant.Integration, req redemption.CouponRequest) (Coupon, error) {
	if missing := redemption.MissingCouponSetting(platform, settings); missing != "" {
		return Coupon{}, apperr.Errorf(apperr.Unprocessable, "the %s %s is not set in the merchant's settings", platform, missing)
	}
	if strings.TrimSpace(req.Code) == "" {
		return Coupon{}, apperr.Errorf(apperr.Unprocessable, "the member has no referral code")
	}
	if err := (campaign.Rules{RefereeDiscountType: req.Discount.Type, RefereeDiscountValue: req.Discount.Value}).Validate(); err != nil || req.Discount.Type == "" {
		return Coupon{}, apperr.Errorf(apperr.Unprocessable, "the referee discount is not a valid percentage or fixed amount")
	}
	if req.Inactive && strings.TrimSpace(req.CouponID) == "" {
		return Coupon{}, apperr.Errorf(apperr.Unprocessable, "no coupon to switch off")
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	start := now.Truncate(time.Second)
	return Coupon{Code: req.Code, Percentage: req.Discount.Type == campaign.RewardPercentage, Value: req.Discount.Value,
		Start: start, End: start.AddDate(redemption.RefereeCouponYears, 0, 0), ID: strings.TrimSpace(req.CouponID), Inactive: req.Inactive}, nil
}
