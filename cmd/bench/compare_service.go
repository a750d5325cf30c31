package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
)

// service is a build of cmd/standalone running as its own process.
type service struct {
	cmd      *exec.Cmd
	dataDir  string
	log      string // its stdout and stderr
	api      string // base URLs
	ingest   string
	done     chan struct{}
	mu       sync.Mutex
	exitErr  error
	hasEnded bool
}

// startStandalone starts binary on free loopback ports with a fresh data
// directory, the bench database and Redis, logging warnings only: what a
// deployment's ingest, ledger and dispatcher do, in one process.
func startStandalone(ctx context.Context, binary string, o options) (*service, error) {
	dir, err := os.MkdirTemp("", "convida-bench-service-")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	s := &service{dataDir: dir, log: filepath.Join(dir, "service.log"), done: make(chan struct{}),
		api: "http://127.0.0.1:" + ports[0], ingest: "http://127.0.0.1:" + ports[1]}
	logFile, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.CommandContext(ctx, binary)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.Env = append(os.Environ(),
		"DATABASE_URL="+o.Database, "REDIS_URL="+o.Redis, "KAFKA_BROKERS=", "DATA_DIR="+filepath.Join(dir, "data"),
		"HTTP_ADDR=127.0.0.1:"+ports[0], "INGEST_ADDR=127.0.0.1:"+ports[1], "METRICS_ADDR=127.0.0.1:"+ports[2],
		"PUBLIC_URL="+s.api, "INGEST_PUBLIC_URL="+s.ingest, "LOG_LEVEL=warn", "SECRETS_KEY=")
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	go func() {
		err := s.cmd.Wait()
		logFile.Close()
		s.mu.Lock()
		s.exitErr, s.hasEnded = err, true
		s.mu.Unlock()
		close(s.done)
	}()
	return s, nil
}

// freePorts returns n loopback ports free a moment ago.
func freePorts(n int) ([]string, error) {
	var ports []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ports = append(ports, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		defer ln.Close()
	}
	return ports, nil
}

// exited says how the service ended if it did, "" while it runs.
func (s *service) exited() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hasEnded {
		return ""
	}
	return fmt.Sprintf("exited during the run (%v)", s.exitErr)
}

// stop ends the service with SIGTERM (SIGKILL after 30 s) and removes its
// data directory.
func (s *service) stop(stderr io.Writer) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		fmt.Fprintf(stderr, "the service did not stop within 30 s; killed\n")
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = os.RemoveAll(s.dataDir)
}

// logTail is the end of the service's log, for an error.
func (s *service) logTail() string {
	raw, _ := os.ReadFile(s.log)
	if len(raw) > 2000 {
		raw = raw[len(raw)-2000:]
	}
	return string(bytes.TrimSpace(raw))
}

// seedThroughAPI waits for the service's demo merchant, lifts its API rate
// limit (merchants.rate_limit_per_second, as an operator does), then
// through the API — the one interface both trees share — configures Guru,
// creates a fixed-reward campaign and o.Members+1 members.
func seedThroughAPI(ctx context.Context, svc *service, o options) (*stack, *tenant, error) {
	creds, err := waitDemoMerchant(ctx, svc, 3*time.Minute)
	if err != nil {
		return nil, nil, err
	}
	s := &stack{ingestURL: svc.ingest}
	if s.pool, err = postgres.Open(ctx, o.Database, 8); err != nil {
		return nil, nil, err
	}
	ropt, err := redis.ParseURL(o.Redis)
	if err != nil {
		s.close()
		return nil, nil, fmt.Errorf("-redis: %w", err)
	}
	s.rdb = redis.NewClient(ropt)
	t, err := seedTenant(ctx, s, svc, creds, o.Members)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, t, nil
}

func waitDemoMerchant(ctx context.Context, svc *service, timeout time.Duration) (merchant.Credentials, error) {
	deadline := time.Now().Add(timeout)
	file := filepath.Join(svc.dataDir, "data", "demo-merchant.json")
	for {
		if c, err := merchant.ReadCredentials(file); err == nil {
			return c, nil
		}
		if ended := svc.exited(); ended != "" {
			return merchant.Credentials{}, fmt.Errorf("the service %s: %s", ended, svc.logTail())
		}
		if time.Now().After(deadline) {
			return merchant.Credentials{}, fmt.Errorf("no demo merchant after %v: %s", timeout, svc.logTail())
		}
		select {
		case <-ctx.Done():
			return merchant.Credentials{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func seedTenant(ctx context.Context, s *stack, svc *service, creds merchant.Credentials, members int) (*tenant, error) {
	t := &tenant{APIKey: creds.APIKey, GuruToken: guruToken()}
	var err error
	if t.MerchantID, err = uuid.Parse(creds.MerchantID); err != nil {
		return nil, fmt.Errorf("demo merchant id: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE merchants SET rate_limit_per_second = $2, rate_limit_burst = $2 WHERE id = $1`,
		t.MerchantID, apiRateLimit); err != nil {
		return nil, fmt.Errorf("lift the API rate limit: %w", err)
	}
	api := newAPIClient(svc.api, t.APIKey, seedWorkers)
	defer api.close()
	if _, err := apiCall(ctx, api, http.MethodPut, "/api/v1/integrations/"+provider.Guru, map[string]any{"account_token": t.GuruToken}); err != nil {
		return nil, err
	}
	var c struct{ ID string }
	if err := apiData(ctx, api, http.MethodPost, "/api/v1/campaigns", map[string]any{"name": "Bench", "reward_type": "fixed",
		"reward_value": rewardCents, "is_active": true}, &c); err != nil {
		return nil, err
	}
	all := make([]struct {
		ID         string `json:"id"`
		CouponCode string `json:"coupon_code"`
		Email      string `json:"email"`
	}, members+1)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(seedWorkers)
	for i := range all {
		g.Go(func() error {
			return apiData(gctx, api, http.MethodPost, "/api/v1/members", map[string]any{"campaign_id": c.ID,
				"name": firstNames[i%len(firstNames)] + " Bench", "email": fmt.Sprintf("membro-%06d@example.com", i)}, &all[i])
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, m := range all {
		id, err := memberUUID(m.ID)
		if err != nil {
			return nil, err
		}
		if i == members {
			t.Warmup, t.WarmupID = m.CouponCode, id
			break
		}
		t.Coupons, t.MemberIDs, t.Emails = append(t.Coupons, m.CouponCode), append(t.MemberIDs, id), append(t.Emails, m.Email)
	}
	_, err = s.pool.Exec(ctx, "ANALYZE") // see seed
	return t, err
}

// memberUUID reads a member id as the API spells it: a UUID, bare or
// after a prefix ("mem_…").
func memberUUID(id string) (uuid.UUID, error) {
	if u, err := uuid.Parse(id); err == nil {
		return u, nil
	}
	if len(id) > 32 {
		if u, err := uuid.Parse(id[len(id)-32:]); err == nil {
			return u, nil
		}
	}
	return uuid.UUID{}, fmt.Errorf("member id %q is not a UUID", id)
}

// apiCall sends body as JSON and returns the answer, an error unless 2xx.
func apiCall(ctx context.Context, api *apiClient, method, path string, body any) ([]byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	status, answer, err := api.call(ctx, method, path, raw, "")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status < 200 || status > 299 {
		return nil, fmt.Errorf("%s %s answered %d: %s", method, path, status, bytes.TrimSpace(answer))
	}
	return answer, nil
}

// apiData is apiCall decoding the answer's data into out.
func apiData(ctx context.Context, api *apiClient, method, path string, body, out any) error {
	answer, err := apiCall(ctx, api, method, path, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, &struct{ Data any }{out}); err != nil {
		return errors.Join(fmt.Errorf("%s %s: decode %s", method, path, answer), err)
	}
	return nil
}
