package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/openapi/openapitest"
)

// TestOperationsOffThePublicPorts: the API and ingest ports answer only a
// plain /healthz; /readyz, which names the dependencies and their state,
// and /metrics, which counts every merchant's traffic, are on the
// operator's address (METRICS_ADDR) alone.
func TestOperationsOffThePublicPorts(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true})
	for name, base := range map[string]string{"api": s.apiURL, "ingest": s.ingestURL} {
		for _, path := range []string{"/metrics", "/readyz"} {
			res := do(t, http.MethodGet, base+path, nil, nil)
			if res.Status != http.StatusNotFound {
				t.Errorf("%s port: GET %s = %d, want 404", name, path, res.Status)
			}
			if strings.Contains(string(res.Body), "go_goroutines") || strings.Contains(string(res.Body), "postgres") {
				t.Errorf("%s port: GET %s leaks the operator's view: %s", name, path, res.Body)
			}
		}
	}
	v := openapitest.New(t)
	for _, base := range []string{s.apiURL, s.ingestURL, s.opsURL} {
		resp, err := v.Client(base).Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("GET %s/healthz = %d %s, want 200 text/plain", base, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	ops := v.Client(s.opsURL)
	for _, path := range []string{"/readyz", "/metrics"} {
		resp, err := ops.Get(s.opsURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("operator's GET %s = %d, want 200", path, resp.StatusCode)
		}
	}
	v.WantExercised(t, openapitest.Exercise{Operation: "getHealthz", Status: 200},
		openapitest.Exercise{Operation: "getReadyz", Status: 200}, openapitest.Exercise{Operation: "getMetrics", Status: 200})
}
