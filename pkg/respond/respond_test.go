package respond

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

func TestWireCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code  apperr.Code
		style Style
		want  string
		stat  int
	}{
		{apperr.MemberNotFound, Member, "MEMBER_NOT_FOUND", 404},
		{apperr.MemberNotFound, Admin, "not_found", 404},
		{apperr.MissingFields, Member, "MISSING_FIELDS", 400},
		{apperr.Invalid, Member, "VALIDATION_ERROR", 400},
		{apperr.InsufficientBalance, Admin, "insufficient_balance", 422},
		{apperr.EmailExists, Admin, "email_exists", http.StatusConflict},
		{apperr.Internal, Admin, "internal", 500},
		{apperr.IntegrationNotConfigured, Admin, "integration_not_configured", 422},
		{apperr.IntegrationNotConfigured, Member, "INTEGRATION_NOT_CONFIGURED", 422},
		{apperr.ServiceUnavailable, Admin, "service_unavailable", 503},
		{apperr.ServiceUnavailable, Member, "SERVICE_UNAVAILABLE", 503},
	}
	for _, tt := range tests {
		if got := WireCode(tt.code, tt.style); got != tt.want {
			t.Errorf("WireCode(%s, %d) = %q, want %q", tt.code, tt.style, got, tt.want)
		}
		if got := Status(tt.code); got != tt.stat {
			t.Errorf("Status(%s) = %d, want %d", tt.code, got, tt.stat)
		}
	}
}

// TestErrorRetryAfter: every 503 tells the client when to come back, the
// handler's own Retry-After winning; other statuses get none.
func TestErrorRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err     error
		preset  string
		status  int
		code    string
		retryIn string
	}{
		{apperr.Errorf(apperr.ServiceUnavailable, "down"), "", 503, "service_unavailable", RetryAfter},
		{apperr.Errorf(apperr.Unavailable, "ledger"), "", 503, "unavailable", RetryAfter},
		{apperr.Errorf(apperr.Unavailable, "ledger"), "7", 503, "unavailable", "7"},
		{apperr.Errorf(apperr.NotFound, "nope"), "", 404, "not_found", ""},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		if tt.preset != "" {
			w.Header().Set("Retry-After", tt.preset)
		}
		Error(w, nil, Admin, tt.err)
		var body ErrorBody
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != tt.status || body.Error.Code != tt.code || w.Header().Get("Retry-After") != tt.retryIn {
			t.Errorf("Error(%v) = %d %q Retry-After %q, want %d %q Retry-After %q", tt.err, w.Code, body.Error.Code,
				w.Header().Get("Retry-After"), tt.status, tt.code, tt.retryIn)
		}
	}
}
