package respond

import (
	"net/http"
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
