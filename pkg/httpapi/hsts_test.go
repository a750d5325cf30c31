package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/httpapi"
)

// TestStrictTransportWhenPublicURLIsHTTPS (issue 29): with an https
// PUBLIC_URL every answer of the API's router carries
// Strict-Transport-Security — its routes, a route added to it as the
// dashboard's is, an unrouted 404 and 405 —; with an http one, none does.
func TestStrictTransportWhenPublicURLIsHTTPS(t *testing.T) {
	t.Parallel()
	for publicURL, want := range map[string]string{
		"https://api.loja.test":  "max-age=31536000",
		"HTTPS://api.loja.test":  "max-age=31536000",
		"http://localhost:8080":  "",
		"http://api.loja.test/x": "",
	} {
		_, r := httpapi.New(httpapi.Config{Log: zap.NewNop(), PublicURL: publicURL})
		r.PathPrefix("/dashboard").Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
		for _, req := range []*http.Request{
			httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil),
			httptest.NewRequest(http.MethodGet, "/dashboard/sign-in", nil),
			httptest.NewRequest(http.MethodGet, "/nowhere", nil),
			httptest.NewRequest(http.MethodDelete, "/api/v1/openapi.json", nil),
		} {
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			if got := rec.Header().Get("Strict-Transport-Security"); got != want {
				t.Errorf("PUBLIC_URL %s: %s %s (%d): Strict-Transport-Security %q, want %q",
					publicURL, req.Method, req.URL.Path, rec.Code, got, want)
			}
		}
	}
}
