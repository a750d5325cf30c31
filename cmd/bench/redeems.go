package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
)

// approveClients is how many concurrent API calls approve the funding
// referrals.
const approveClients = 64

// redeemReport is everything the redeem report prints.
type redeemReport struct {
	Options  options
	Members  int // distinct members redeeming
	Funding  time.Duration
	Approval time.Duration
	Load     *redeemLoad
	CPU      cpuUse
	Verified verification
	Redis    int
}

// redeemLoad is what the measured redemptions got.
type redeemLoad struct {
	Start, End time.Time
	Lat        []time.Duration // round trips answered 200 with the completed redemption
	Coupons    []string        // redemption j's coupon code; "" when refused
	Failures   map[string]int  // other answers, counted
}

// runRedeems is the redeem round-trip benchmark (-mode redeems). The
// merchant's Yampi integration points at a fake Yampi on loopback.
// Redemption j, of rewardCents, is member j % members's; each is funded
// first with one sale, credited by the ledger and approved through the API
// (so its reward is available). Then -redeem-concurrency clients send the
// -redemptions POST /api/v1/wallet/redeem (destination store_coupon), each
// timed from the request to the 200 carrying the completed redemption, and
// verifyRedeems checks that each amount left its wallet exactly once.
func runRedeems(ctx context.Context, s *stack, t *tenant, o options, stdout, stderr io.Writer) (bool, error) {
	yampi, err := startFakeYampi(o.PlatformDelay, s.box.DeriveKey(redemption.CouponKeyInfo))
	if err != nil {
		return false, err
	}
	defer yampi.close()
	c := newAPIClient(s.apiURL, t.APIKey, max(o.RedeemConcurrency, approveClients))
	defer c.close()
	if err := configureYampi(ctx, c, yampi.url); err != nil {
		return false, err
	}
	rep := &redeemReport{Options: o}
	members := make([]int, o.Redemptions) // redemption j's member
	perMember := map[uuid.UUID]int64{}    // redemptions of each member
	for j := range members {
		members[j] = j % len(t.MemberIDs)
		perMember[t.MemberIDs[members[j]]]++
	}
	rep.Members = len(perMember)
	if rep.Funding, err = postSales(ctx, s, t, o, redeemOrderPrefix, 2_000_000, members, stderr); err != nil {
		return false, err
	}
	start := time.Now()
	if err := approveFunding(ctx, s, t, c, len(members), stderr); err != nil {
		return false, err
	}
	rep.Approval = time.Since(start)
	before, err := walletFigures(ctx, s.pool, t.MerchantID)
	if err != nil {
		return false, err
	}
	for id, k := range perMember {
		if before[id].Available < k*rewardCents {
			return false, fmt.Errorf("member %s has %d cents available after funding, want at least %d", id, before[id].Available, k*rewardCents)
		}
	}

	cpu0 := sampleCPU()
	rep.Load = redeemAll(ctx, c, t, members, o.RedeemConcurrency, stderr)
	rep.CPU = cpuBetween(cpu0, sampleCPU(), rep.Load.End.Sub(rep.Load.Start))

	if rep.Verified, err = verifyRedeems(ctx, s.pool, t.MerchantID, before, perMember, rep.Load, yampi); err != nil {
		return false, fmt.Errorf("verify: %w", err)
	}
	rep.Redis = forgetDedupeKeys(ctx, s, t.MerchantID) + forgetKeys(ctx, s, "idem:"+t.MerchantID.String()+":*") +
		forgetKeys(ctx, s, "idem-index:"+t.MerchantID.String())
	if err := s.err(); err != nil {
		rep.Verified.Problems = append(rep.Verified.Problems, "pipeline: "+err.Error())
	}
	rep.print(stdout)
	return rep.pass(), nil
}

// configureYampi points the merchant's Yampi integration at the fake,
// through the API (PUT /api/v1/integrations/yampi) as a merchant would.
func configureYampi(ctx context.Context, c *apiClient, apiURL string) error {
	body, _ := json.Marshal(httpapi.IntegrationRequest{"user_token": yampiUserToken, "user_secret_key": yampiSecretKey,
		"store_alias": yampiAlias, "api_url": apiURL})
	status, raw, err := c.call(ctx, http.MethodPut, "/api/v1/integrations/"+provider.Yampi, body, "")
	if err != nil {
		return fmt.Errorf("PUT /integrations/%s: %w", provider.Yampi, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("PUT /integrations/%s answered %s", provider.Yampi, answerFailure(status, raw))
	}
	return nil
}

// approveFunding approves the funding referrals through the API (POST
// /api/v1/referrals/{id}/approve, which waits for the ledger): their
// credits move to the available balance.
func approveFunding(ctx context.Context, s *stack, t *tenant, c *apiClient, want int, stderr io.Writer) error {
	rows, err := s.pool.Query(ctx, `SELECT id FROM referrals WHERE merchant_id = $1 AND starts_with(order_id, $2)`,
		t.MerchantID, redeemOrderPrefix)
	if err != nil {
		return err
	}
	var refs []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		refs = append(refs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(refs) != want {
		return fmt.Errorf("%d funding referrals, want %d", len(refs), want)
	}
	bar := newBar(stderr, "approved", len(refs))
	defer func() { _ = bar.Finish() }()
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range approveClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(refs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				status, raw, err := c.call(ctx, http.MethodPost, "/api/v1/referrals/"+ids.Format(ids.Referral, refs[i])+"/approve",
					[]byte(`{"notes":"bench funding"}`), "")
				var got struct {
					Data struct {
						Status string `json:"status"`
					} `json:"data"`
				}
				_ = json.Unmarshal(raw, &got)
				if err == nil && (status != http.StatusOK || got.Data.Status != "approved") {
					err = fmt.Errorf("approve answered %s", answerFailure(status, raw))
				}
				if err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
				_ = bar.Add(1)
			}
		}()
	}
	wg.Wait()
	return cmp.Or(firstErr, ctx.Err())
}

// redeemAll sends redemption j of rewardCents for member members[j], with
// Idempotency-Key bench-redeem-j, from clients concurrent clients, and
// returns when every one is answered.
func redeemAll(ctx context.Context, c *apiClient, t *tenant, members []int, clients int, stderr io.Writer) *redeemLoad {
	l := &redeemLoad{Coupons: make([]string, len(members)), Failures: map[string]int{}}
	lat := make([]time.Duration, len(members))
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	bar := newBar(stderr, "redeemed", len(members))
	l.Start = time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1) - 1); j < len(members) && ctx.Err() == nil; j = int(next.Add(1) - 1) {
				m := members[j]
				body, _ := json.Marshal(map[string]any{"email": t.Emails[m], "amount": rewardCents, "destination": redemption.DestinationStoreCoupon})
				t0 := time.Now()
				status, raw, err := c.call(ctx, http.MethodPost, "/api/v1/wallet/redeem", body, fmt.Sprintf("%s%07d", redeemOrderPrefix, j))
				lat[j] = time.Since(t0)
				coupon, failure := redeemAnswer(status, raw, err, t.MemberIDs[m])
				l.Coupons[j] = coupon
				if failure != "" {
					mu.Lock()
					l.Failures[failure]++
					mu.Unlock()
				}
				_ = bar.Add(1)
			}
		}()
	}
	wg.Wait()
	l.End = time.Now()
	_ = bar.Finish()
	for j, code := range l.Coupons {
		if code != "" {
			l.Lat = append(l.Lat, lat[j])
		}
	}
	if n := len(members) - len(l.Lat) - sumCounts(l.Failures); n > 0 {
		l.Failures["not sent"] += n
	}
	return l
}

// redeemAnswer returns the coupon code of an answer 200 carrying the
// completed redemption of rewardCents for member, or what was wrong.
func redeemAnswer(status int, raw []byte, err error, member uuid.UUID) (coupon, failure string) {
	if err != nil {
		return "", "transport error"
	}
	if status != http.StatusOK {
		return "", answerFailure(status, raw)
	}
	var got httpapi.MemberRedeemResponse
	if json.Unmarshal(raw, &got) != nil {
		return "", "200 undecodable"
	}
	d := got.Data
	if !got.Success || d.MemberID != member.String() || d.AmountRedeemed != rewardCents || d.Destination != redemption.DestinationStoreCoupon ||
		d.Integration == nil || d.Integration.Provider != provider.Yampi || d.Integration.CouponCode == nil || *d.Integration.CouponCode == "" {
		return "", "200 without the completed redemption"
	}
	return *d.Integration.CouponCode, ""
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (r *redeemReport) pass() bool {
	return r.Verified.pass() && len(r.Load.Failures) == 0
}

func (r *redeemReport) print(w io.Writer) {
	o, l := r.Options, r.Load
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	platform := "answers at once"
	if o.PlatformDelay > 0 {
		platform = "answers after " + o.PlatformDelay.String()
	}
	p("")
	p("Convida redeem bench: POST /api/v1/wallet/redeem — %s", time.Now().Format("2006-01-02 15:04 MST"))
	p("  pipeline              API router on loopback → ledger → dispatcher → fake Yampi on loopback (%s) → ledger", platform)
	p("  redemptions           %d of %d cents, destination store_coupon, by %d members", o.Redemptions, rewardCents, r.Members)
	p("  concurrency           %d API clients (keep-alive), Idempotency-Key on each", o.RedeemConcurrency)
	p("  funding               one sale per redemption credited in %v, its referral approved through the API in %v (not measured)",
		r.Funding.Round(time.Millisecond), r.Approval.Round(time.Millisecond))
	d := l.End.Sub(l.Start)
	p("  duration              %v (first request → last answer)", d.Round(time.Millisecond))
	p("  throughput            %.0f redemptions/s completed", float64(len(l.Lat))/d.Seconds())
	p50, p99, pmax := percentiles(l.Lat)
	p("  round trip            p50 %v  p99 %v  max %v (request → 200 with the completed redemption)", ms(p50), ms(p99), ms(pmax))
	p("  not completed         %d%s", o.Redemptions-len(l.Lat), failuresSuffix(l.Failures))
	if r.CPU.Cores > 0 {
		p("  CPU (measured window) %.2f of %.0f cores busy: bench process %.2f, postgres %.2f, redis %.2f, rest %.2f",
			r.CPU.Machine, r.CPU.Cores, r.CPU.Bench, r.CPU.ByName["postgres"], r.CPU.ByName["redis-server"],
			max(r.CPU.Others-r.CPU.ByName["postgres"]-r.CPU.ByName["redis-server"], 0))
	}
	p("  redis keys removed    %d", r.Redis)
	p("  go                    %s, GOMAXPROCS %d, %d CPUs", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	if r.pass() {
		p("  verification          PASS (each redemption debited once: wallets −%d × their redemptions, %d redemptions and debits completed, one coupon each at Yampi, CheckLedger ok)",
			rewardCents, o.Redemptions)
		return
	}
	p("  verification          FAIL")
	for _, problem := range r.Verified.Problems {
		p("    %s", problem)
	}
}
