package program

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestInstrumentCountsAnswersByCode: the public servers' answers are
// counted by status code and server, /healthz is not, and a second
// instrumentation of one server on one registry adds to the same series.
func TestInstrumentCountsAnswersByCode(t *testing.T) {
	t.Parallel()
	d := &Deps{Registry: prometheus.NewRegistry()}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	for _, step := range []struct{ server, path string }{
		{"api", "/down"}, {"api", "/down"}, {"api", "/up"}, {"api", "/healthz"}, {"ingest", "/down"},
	} {
		d.instrument(step.server, h).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, step.path, nil))
	}
	families, err := d.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "convida_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + " "
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{"code=503 server=api ": 2, "code=200 server=api ": 1, "code=503 server=ingest ": 1}
	if len(got) != len(want) {
		t.Errorf("convida_http_requests_total = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("convida_http_requests_total{%s} = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
