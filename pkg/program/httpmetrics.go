package program

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// instrument counts the answers of the public server name (api, ingest)
// by status code in convida_http_requests_total, the figure of the 5xx and
// 503 alerts of docs/operations.md. The load balancer's /healthz probes
// are left out, so that they do not dilute the share of errors. Neither
// route nor merchant is a label: the access log has both for each request.
func (d *Deps) instrument(name string, h http.Handler) http.Handler {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "convida_http_requests_total",
		Help:        "Requests answered by the public API and ingest servers (not /healthz), by status code.",
		ConstLabels: prometheus.Labels{"server": name},
	}, []string{"code"})
	if err := d.Registry.Register(vec); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if !errors.As(err, &dup) {
			panic(err) // an invalid metric: a bug
		}
		vec = dup.ExistingCollector.(*prometheus.CounterVec)
	}
	counted := promhttp.InstrumentHandlerCounter(vec, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			h.ServeHTTP(w, r)
			return
		}
		counted.ServeHTTP(w, r)
	})
}
