package httpapi_test

import (
	"strings"
	"testing"
)

// TestUnstorableInput: decision 9, no input may produce a 500. These are
// values PostgreSQL cannot store (NUL in text or jsonb, invalid UTF-8,
// numbers jsonb's numeric overflows on, an external id too long for its
// index); each is a 400 naming the field.
func TestUnstorableInput(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	tn.mustMember(t, "ana@example.com", "Ana Souza")
	long := strings.Repeat("0123456789abcdef", 16) // 256 bytes
	tests := []struct {
		name, method, path string
		body               string
		status             int
		code, field        string
	}{
		{"NUL in name", "POST", "/api/v1/members", `{"email": "n1@example.com", "name": "A\u0000B"}`, 400, "validation_error", "name"},
		{"NUL in external_id", "POST", "/api/v1/members", `{"email": "n2@example.com", "name": "A", "external_id": "x\u0000"}`, 400, "validation_error", "external_id"},
		{"NUL in metadata value", "POST", "/api/v1/members", `{"email": "n3@example.com", "name": "A", "metadata": {"k": ["ok", "\u0000"]}}`, 400, "validation_error", "metadata.k[1]"},
		{"NUL in metadata key", "POST", "/api/v1/members", `{"email": "n4@example.com", "name": "A", "metadata": {"k\u0000": 1}}`, 400, "validation_error", "metadata"},
		{"NUL in campaign name", "POST", "/api/v1/campaigns", `{"name": "x\u0000", "reward_type": "fixed", "reward_value": 1}`, 400, "validation_error", "name"},
		{"NUL in store_alias", "PUT", "/api/v1/integrations/yampi", `{"store_alias": "a\u0000"}`, 400, "validation_error", "store_alias"},
		{"metadata number too big", "POST", "/api/v1/members", `{"email": "n5@example.com", "name": "A", "metadata": {"n": 1e1000000}}`, 400, "validation_error", "metadata.n"},
		{"metadata number too small", "POST", "/api/v1/members", `{"email": "n6@example.com", "name": "A", "metadata": {"n": 1e-1000000}}`, 400, "validation_error", "metadata.n"},
		{"metadata number too long", "POST", "/api/v1/members", `{"email": "n7@example.com", "name": "A", "metadata": {"n": 1.` + strings.Repeat("0", 20000) + `}}`, 400, "validation_error", "metadata.n"},
		{"external_id too long", "POST", "/api/v1/members", `{"email": "n8@example.com", "name": "A", "external_id": "` + long + `"}`, 400, "validation_error", "external_id"},
		{"external_id of 255 bytes", "POST", "/api/v1/members", `{"email": "n9@example.com", "name": "A", "external_id": "` + long[1:] + `"}`, 201, "", ""},
		{"escaped backslash is not NUL", "POST", "/api/v1/members", `{"email": "n10@example.com", "name": "A\\u0000B"}`, 201, "", ""},
		{"plain numbers", "POST", "/api/v1/members", `{"email": "n11@example.com", "name": "A", "metadata": {"a": 1e300, "b": -0.0e-5000, "c": 12.75}}`, 201, "", ""},
		{"autoCreate externalId too long", "GET", "/api/v1/member/me?email=n12@example.com&name=A&autoCreate=true&externalId=" + long, "", 400, "VALIDATION_ERROR", "externalId"},
		{"NUL in externalId", "GET", "/api/v1/member/me?externalId=%00", "", 400, "VALIDATION_ERROR", "externalId"},
		{"invalid UTF-8 in externalId", "GET", "/api/v1/member/me?externalId=%ff", "", 400, "VALIDATION_ERROR", "externalId"},
		{"NUL in name query", "GET", "/api/v1/member/me?email=n13@example.com&name=A%00&autoCreate=true", "", 400, "VALIDATION_ERROR", "name"},
		{"invalid UTF-8 in cpf", "GET", "/api/v1/member/me?email=n14@example.com&name=A&cpf=%ff&autoCreate=true", "", 400, "VALIDATION_ERROR", "cpf"},
		{"invalid UTF-8 in email", "GET", "/api/v1/wallet/balance?email=%ff%40example.com", "", 400, "VALIDATION_ERROR", "email"},
		{"NUL in admin query", "GET", "/api/v1/members/mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c/transactions?type=%00", "", 400, "validation_error", "type"},
	}
	t.Run("requests", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				var body any
				if tt.body != "" {
					body = tt.body
				}
				r := tn.do(t, tt.method, tt.path, body)
				if tt.status < 300 {
					wantStatus(t, r, tt.status)
					return
				}
				wantError(t, r, tt.status, tt.code, tt.field)
			})
		}
	})
	// Nothing refused was stored.
	var n int
	if err := env.pool.QueryRow(t.Context(), `SELECT count(*) FROM members`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := 4; n != want {
		t.Errorf("members = %d, want %d (ana and the three accepted)", n, want)
	}
}
