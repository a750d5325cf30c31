package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/convida/convida/pkg/respond"
)

// apiRateLimit is the per-merchant API rate limit the read and redeem
// phases set (requests per second and burst): far above what the machine
// can serve, so that the limiter still runs on every request (one Redis
// call, as in a deployment) but never refuses one.
const apiRateLimit = 1_000_000

// openAPI lifts the merchant's API rate limit and starts the API router.
// The limit is the per-merchant override an operator sets in
// merchants.rate_limit_per_second and rate_limit_burst (README, decision
// 13); the default of 100 requests/s per key would answer 429 to a load.
// It is set before the first API request, so no cached merchant predates
// it.
func openAPI(ctx context.Context, s *stack, t *tenant) error {
	if _, err := s.pool.Exec(ctx, `UPDATE merchants SET rate_limit_per_second = $2, rate_limit_burst = $2 WHERE id = $1`,
		t.MerchantID, apiRateLimit); err != nil {
		return fmt.Errorf("lift the API rate limit: %w", err)
	}
	return s.startAPI()
}

// apiClient calls the API with the merchant's key over keep-alive
// connections.
type apiClient struct {
	http *http.Client
	base string
	key  string
}

func newAPIClient(base, key string, conns int) *apiClient {
	return &apiClient{http: keepAliveClient(conns), base: base, key: key}
}

func (c *apiClient) close() { c.http.CloseIdleConnections() }

// call sends one request (body nil for none) with X-API-Key and, when
// idempotencyKey is set, Idempotency-Key, and returns the status and the
// body.
func (c *apiClient) call(ctx context.Context, method, path string, body []byte, idempotencyKey string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("User-Agent", "convida-bench")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, raw, err
}

// answerFailure names a refused answer for the failure counts: the status
// and the error code of its envelope.
func answerFailure(status int, raw []byte) string {
	var e respond.ErrorBody
	_ = json.Unmarshal(raw, &e)
	return fmt.Sprintf("%d %s", status, e.Error.Code)
}
