package httpapi_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/dashboard"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/portal"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/testenv"
)

// TestContractParity fails when an operation the programs serve is missing
// from the OpenAPI document, or the document has an operation no program
// serves. It walks the routers exactly as the programs build them
// (program.APIRouter, program.IngestRouter, and every program's operator
// router on METRICS_ADDR, Deps.OpsRouter), on dependencies that are never
// dialled: building a router connects to nothing.
func TestContractParity(t *testing.T) {
	t.Parallel()
	served := map[string]string{} // "METHOD /path/{}" → the route's own template
	for name, build := range map[string]func(*program.Deps) *mux.Router{
		"api": program.APIRouter, "ingest": program.IngestRouter, "ops": (*program.Deps).OpsRouter,
	} {
		r := buildRouter(t, name, build)
		for _, rt := range walk(t, name, r) {
			for _, expanded := range expandProvider(t, rt.path) {
				served[rt.method+" "+normalize(expanded)] = rt.method + " " + expanded
			}
		}
	}
	documented := map[string]openapitest.Operation{}
	for _, op := range openapitest.Operations(t) {
		documented[op.Method+" "+normalize(op.Path)] = op
	}

	var undocumented, unserved []string
	for k, route := range served {
		if _, ok := documented[k]; !ok {
			undocumented = append(undocumented, route)
		}
	}
	for k, op := range documented {
		if _, ok := served[k]; !ok {
			unserved = append(unserved, fmt.Sprintf("%s %s (%s)", op.Method, op.Path, op.ID))
		}
	}
	sort.Strings(undocumented)
	sort.Strings(unserved)
	if len(undocumented) > 0 {
		t.Errorf("served but missing from the OpenAPI document (pkg/openapi/openapi.yaml):\n\t%s",
			strings.Join(undocumented, "\n\t"))
	}
	if len(unserved) > 0 {
		t.Errorf("in the OpenAPI document but served by no program:\n\t%s", strings.Join(unserved, "\n\t"))
	}
}

// buildRouter builds a program's router on inert dependencies: a pool that
// is nil, a Redis client of a port nothing listens on, a fresh metrics
// registry. A panic is reported as the program's wiring needing a live
// dependency to build its router, which this test cannot give.
func buildRouter(t *testing.T, name string, build func(*program.Deps) *mux.Router) (r *mux.Router) {
	t.Helper()
	cfg, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatalf("program.LoadConfig with the defaults: %v", err)
	}
	box := testenv.MustBox(t)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	d := &program.Deps{Config: cfg, Log: zap.NewNop(), Redis: rdb, Box: box,
		Registry: prometheus.NewRegistry(), Now: time.Now}
	defer func() {
		if v := recover(); v != nil {
			t.Fatalf("building the %s router on inert dependencies panicked: %v", name, v)
		}
	}()
	return build(d)
}

// route is a method and path template of a router.
type route struct{ method, path string }

// walk lists the routes of r. A route with a path but no method matcher
// serves every method, which the document cannot say: it is an error.
func walk(t *testing.T, name string, r *mux.Router) []route {
	t.Helper()
	var out []route
	err := r.Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := rt.GetPathTemplate()
		if err != nil {
			return nil // a subrouter without a path of its own
		}
		if strings.HasPrefix(tpl, dashboard.Prefix) || tpl == dashboard.Favicon || strings.HasPrefix(tpl, portal.Prefix) ||
			strings.HasPrefix(tpl, portal.EmbedPrefix) {
			return nil // HTML pages for people and their icon, not the JSON API (docs/dashboard.md, docs/portal.md)
		}
		methods, err := rt.GetMethods()
		if err != nil {
			t.Errorf("%s router: route %s serves every method; restrict it with Methods()", name, tpl)
			return nil
		}
		for _, m := range methods {
			out = append(out, route{method: m, path: tpl})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the %s router: %v", name, err)
	}
	if len(out) == 0 {
		t.Fatalf("the %s router has no routes", name)
	}
	return out
}

// receiverProviders are the platforms the ingest receiver accepts in
// {provider}: the document has one operation per provider, since their
// bodies and authentication differ. A new inbound adapter is added here and
// to the document.
var receiverProviders = []string{provider.Guru, provider.Yampi, provider.Hotmart, provider.Kiwify, provider.Eduzz}

// expandProvider writes the receiver route once per provider.
func expandProvider(t *testing.T, path string) []string {
	t.Helper()
	const receiver = "/api/webhooks/{provider}/"
	if !strings.HasPrefix(path, receiver) {
		return []string{path}
	}
	var out []string
	for _, p := range receiverProviders {
		if _, ok := inbound.Lookup(p); !ok {
			t.Errorf("inbound.Lookup(%q) refuses a provider this test expects", p)
		}
		out = append(out, "/api/webhooks/"+p+"/"+strings.TrimPrefix(path, receiver))
	}
	return out
}

var pathVariable = regexp.MustCompile(`\{[^}]*\}`)

// normalize blanks the names (and patterns) of path variables, which the
// router and the document may spell differently.
func normalize(path string) string { return pathVariable.ReplaceAllString(path, "{}") }
