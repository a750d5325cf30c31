package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/httpapi"
)

// The served document names the deployment's public URLs as its servers.
func TestOpenAPIServersFromPublicURL(t *testing.T) {
	t.Parallel()
	_, r := httpapi.New(httpapi.Config{Log: zap.NewNop(), PublicURL: "https://api.loja.test", IngestPublicURL: "https://hooks.loja.test"})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json = %d, %v", rec.Code, err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "https://api.loja.test" {
		t.Errorf("servers = %+v, want PUBLIC_URL", doc.Servers)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
}
