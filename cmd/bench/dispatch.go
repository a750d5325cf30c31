package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/webhook"
)

// receiverCAFile writes the certificate of httptest's TLS servers (one for
// all of them) to dir, for WEBHOOK_CA_FILE: the dispatcher then trusts the
// bench's receiver the way a deployment trusts a merchant's.
func receiverCAFile(dir string) (string, error) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	path := filepath.Join(dir, "receiver-ca.pem")
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
}

// benchReceiver is a merchant's HTTPS endpoint: it reads each request's
// body, answers 200 and counts. It keeps the first requests whole, so
// their signatures can be checked after the measured window.
type benchReceiver struct {
	srv   *httptest.Server
	count atomic.Int64
	mu    sync.Mutex
	kept  []keptRequest
}

type keptRequest struct {
	header http.Header
	body   []byte
}

const keptRequests = 100

func newBenchReceiver() *benchReceiver {
	rc := &benchReceiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.count.Add(1)
		if r.Header.Get(webhook.HeaderServiceSignature) != "" { // the dispatcher's, not the bare loop's
			rc.mu.Lock()
			if len(rc.kept) < keptRequests {
				rc.kept = append(rc.kept, keptRequest{header: r.Header.Clone(), body: body})
			}
			rc.mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}))
	return rc
}

// dispatchReport is what the dispatch phase prints.
type dispatchReport struct {
	Deliveries, Concurrency int
	Loop, Bare, Dispatch    time.Duration // one worker, Concurrency workers, the dispatcher
	BareCPU, DispatchCPU    cpuUse
	Problems                []string
}

// runDispatch is the dispatch benchmark (-mode dispatch): against one
// local HTTPS receiver, first a bare Go HTTP client loop (as many
// keep-alive workers as the dispatcher has per endpoint, the same body),
// then the real dispatcher delivering as many referral.created events from
// the events topic, signed both ways and logged; it prints both rates and
// their ratio.
func runDispatch(ctx context.Context, s *stack, t *tenant, o options, stdout, stderr io.Writer) (bool, error) {
	rc := newBenchReceiver()
	defer rc.srv.Close()
	conc := s.deps.Config.WebhookConcurrency
	rep := &dispatchReport{Deliveries: o.Deliveries, Concurrency: conc}
	sample, err := outbox.NewRecord(t.MerchantID, uuid.New(), "referral.created", benchReferral(0), time.Now())
	if err != nil {
		return false, err
	}

	fmt.Fprintf(stderr, "dispatch: a bare HTTP loop of %d requests, one at a time\n", o.Deliveries)
	start := time.Now()
	if err := bareLoop(ctx, rc.srv, sample.Payload, o.Deliveries, 1); err != nil {
		return false, err
	}
	rep.Loop = time.Since(start)
	fmt.Fprintf(stderr, "dispatch: a bare HTTP loop of %d requests, %d workers\n", o.Deliveries, conc)
	cpu0, start := sampleCPU(), time.Now()
	if err := bareLoop(ctx, rc.srv, sample.Payload, o.Deliveries, conc); err != nil {
		return false, err
	}
	rep.Bare = time.Since(start)
	rep.BareCPU = cpuBetween(cpu0, sampleCPU(), rep.Bare)

	ep := &webhook.Endpoint{MerchantID: t.MerchantID, URL: rc.srv.URL + "/convida", Events: []string{"referral.created"},
		IsActive: true, Secret: webhook.NewSecret()}
	store := postgres.NewWebhookStore(s.pool, s.box)
	if err := store.CreateWebhook(ctx, ep); err != nil {
		return false, fmt.Errorf("create endpoint: %w", err)
	}
	base := rc.count.Load()
	recs := make([]outbox.Record, o.Deliveries)
	for i := range recs {
		if recs[i], err = outbox.NewRecord(t.MerchantID, t.MemberIDs[i%len(t.MemberIDs)], "referral.created", benchReferral(i), time.Now()); err != nil {
			return false, err
		}
	}
	fmt.Fprintf(stderr, "dispatch: %d events through the events topic to the dispatcher\n", o.Deliveries)
	profile := ""
	if !o.Phases.Sales {
		profile = o.CPUProfile
	}
	stop, err := startProfile(profile)
	if err != nil {
		return false, err
	}
	cpu0, start = sampleCPU(), time.Now()
	go func() {
		for i := 0; i < len(recs); i += 500 {
			if err := s.deps.Events.PublishEvents(ctx, recs[i:min(i+500, len(recs))]); err != nil {
				fmt.Fprintf(stderr, "dispatch: publish: %v\n", err)
				return
			}
		}
	}()
	deadline := time.Now().Add(o.Timeout)
	for rc.count.Load()-base < int64(o.Deliveries) {
		if time.Now().After(deadline) {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%d of %d deliveries after %v", rc.count.Load()-base, o.Deliveries, o.Timeout))
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	rep.Dispatch = time.Since(start)
	rep.DispatchCPU = cpuBetween(cpu0, sampleCPU(), rep.Dispatch)
	stop()
	rep.Problems = append(rep.Problems, verifyDispatch(ctx, s, rc, ep, o.Deliveries)...)
	rep.print(stdout)
	return len(rep.Problems) == 0, nil
}

// benchReferral is the data of a bench event: the size of a real referral.
func benchReferral(i int) map[string]any {
	return map[string]any{"id": fmt.Sprintf("ref_%032x", i), "member": map[string]any{"id": "mem_00000000000000000000000000000001",
		"name": "Ana Bench", "email": "membro@bench.example.com"}, "order_id": fmt.Sprintf("bench-%d", i), "order_value": 19790,
		"reward_amount": 500, "status": "pending", "coupon_used": "BENCH-ANA1", "created_at": "2026-11-22T10:00:00.000Z"}
}

// bareLoop posts n copies of body to srv from workers keep-alive clients.
func bareLoop(ctx context.Context, srv *httptest.Server, body []byte, n, workers int) error {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: workers, ForceAttemptHTTP2: true}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/bare", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// verifyDispatch checks what the receiver got and what the dispatcher
// recorded: the kept requests verify with the endpoint's secret under both
// schemes, every delivery is logged as a success, and none is owed.
func verifyDispatch(ctx context.Context, s *stack, rc *benchReceiver, ep *webhook.Endpoint, want int) []string {
	var problems []string
	rc.mu.Lock()
	kept := rc.kept
	rc.mu.Unlock()
	if len(kept) == 0 {
		problems = append(problems, "no signed delivery arrived")
	}
	for _, k := range kept {
		if !webhook.VerifyServiceSignature(ep.Secret, k.body, k.header.Get(webhook.HeaderServiceSignature)) ||
			webhook.VerifyStandard(ep.Secret, k.header, k.body, time.Hour, time.Now()) != nil {
			problems = append(problems, "a delivery's signature does not verify")
			break
		}
	}
	var logged, owed int
	deadline := time.Now().Add(30 * time.Second)
	for {
		_ = s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_attempts WHERE merchant_id = $1 AND webhook_id = $2 AND status = 'success'),
  (SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1 AND webhook_id = $2)`, ep.MerchantID, ep.ID).Scan(&logged, &owed)
		if (logged >= want && owed == 0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if logged != want || owed != 0 {
		problems = append(problems, fmt.Sprintf("%d successes logged and %d deliveries owed, want %d and 0", logged, owed, want))
	}
	if got := int(rc.count.Load()); got != 3*want {
		problems = append(problems, fmt.Sprintf("the receiver got %d requests, want %d (two bare loops and the dispatcher): a delivery was repeated or lost", got, 3*want))
	}
	return problems
}

func (r *dispatchReport) print(w io.Writer) {
	loop := float64(r.Deliveries) / r.Loop.Seconds()
	bare := float64(r.Deliveries) / r.Bare.Seconds()
	disp := float64(r.Deliveries) / r.Dispatch.Seconds()
	fmt.Fprintf(w, "\nConvida dispatch bench — %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "  receiver              one local HTTPS endpoint, answers 200 at once\n")
	fmt.Fprintf(w, "  requests              %d in each run\n", r.Deliveries)
	fmt.Fprintf(w, "  bare Go HTTP loop     %.0f requests/s, one at a time (%v)\n", loop, r.Loop.Round(time.Millisecond))
	fmt.Fprintf(w, "  bare, %2d workers      %.0f requests/s (%v)   CPU %.2f cores busy\n", r.Concurrency, bare, r.Bare.Round(time.Millisecond), r.BareCPU.Machine)
	fmt.Fprintf(w, "  dispatcher            %.0f signed deliveries/s (%v, events topic → receiver, every attempt logged, %d per endpoint in flight)   CPU %.2f cores busy\n",
		disp, r.Dispatch.Round(time.Millisecond), r.Concurrency, r.DispatchCPU.Machine)
	fmt.Fprintf(w, "  ratio                 %.2f of the one-at-a-time loop, %.2f of the %d-worker loop (goal: at least 0.5)\n", disp/loop, disp/bare, r.Concurrency)
	if len(r.Problems) == 0 {
		fmt.Fprintf(w, "  verification          PASS (signatures verify, every delivery logged once, nothing owed)\n")
		return
	}
	fmt.Fprintf(w, "  verification          FAIL\n")
	for _, p := range r.Problems {
		fmt.Fprintf(w, "    - %s\n", p)
	}
}
