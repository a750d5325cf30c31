package accesslog_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gorilla/mux"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/clientip"
)

func TestAccessLog(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	accessLog := accesslog.Middleware(zap.New(core), clientip.Resolver{})
	r := mux.NewRouter()
	r.Use(accessLog)
	r.NotFoundHandler = accessLog(http.NotFoundHandler())
	r.HandleFunc("/things/{id}", func(w http.ResponseWriter, req *http.Request) {
		accesslog.Merchant(req, "m-1")
		w.WriteHeader(http.StatusTeapot)
	})
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, c := range []struct {
		name, path, sentID string
		keepID             bool
		route, merchant    string
		status             int
	}{
		{"a sane id is kept", "/things/42?api_key=secret", "trace-1:abc_DEF.9", true, "/things/{id}", "m-1", http.StatusTeapot},
		{"a forged id is replaced", "/things/43", "x\ninjected", false, "/things/{id}", "m-1", http.StatusTeapot},
		{"no id is generated", "/things/44", "", false, "/things/{id}", "m-1", http.StatusTeapot},
		{"an unrouted path has no route", "/nowhere", "", false, "", "", http.StatusNotFound},
	} {
		logs.TakeAll()
		req := httptest.NewRequest(http.MethodGet, c.path, nil)
		if c.sentID != "" {
			req.Header.Set("X-Request-Id", c.sentID)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		id := rec.Header().Get("X-Request-Id")
		if c.keepID && id != c.sentID || !c.keepID && !generated.MatchString(id) {
			t.Errorf("%s: X-Request-Id = %q (sent %q)", c.name, id, c.sentID)
		}
		lines := logs.TakeAll()
		if len(lines) != 1 {
			t.Fatalf("%s: %d log lines, want 1", c.name, len(lines))
		}
		f := lines[0].ContextMap()
		if lines[0].Message != "request" || f["method"] != "GET" || f["route"] != c.route || f["status"] != int64(c.status) ||
			f["merchant"] != c.merchant || f["request_id"] != id || f["duration"] == nil || f["client_ip"] != "192.0.2.1" {
			t.Errorf("%s: log line %q %v", c.name, lines[0].Message, f)
		}
		for k, v := range f {
			if s, ok := v.(string); ok && regexp.MustCompile(`secret|api_key`).MatchString(s) {
				t.Errorf("%s: the log line's %s holds the query: %q", c.name, k, s)
			}
		}
	}
}

// With info off no line is built, and the answer still has its id.
func TestAccessLogOff(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.WarnLevel)
	h := accesslog.Middleware(zap.New(core), clientip.Resolver{})(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if logs.Len() != 0 || rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("%d lines, X-Request-Id %q: want none and one", logs.Len(), rec.Header().Get("X-Request-Id"))
	}
}

// The line's client_ip is the peer, or the address a trusted proxy
// forwarded; a header from anyone else is ignored.
func TestAccessLogClientIP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		trusted string
		peer    string
		want    string
	}{
		{"no proxy trusted: the peer", "", "192.0.2.1:1234", "192.0.2.1"},
		{"a trusted proxy: the forwarded address", "192.0.2.0/24", "192.0.2.1:1234", "198.51.100.9"},
		{"an untrusted peer's header is ignored", "192.0.2.0/24", "203.0.113.5:1234", "203.0.113.5"},
	} {
		core, logs := observer.New(zapcore.InfoLevel)
		h := accesslog.Middleware(zap.New(core), clientip.MustParse(c.trusted))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = c.peer
		req.Header.Set("X-Forwarded-For", "198.51.100.9")
		h.ServeHTTP(httptest.NewRecorder(), req)
		lines := logs.TakeAll()
		if len(lines) != 1 || lines[0].ContextMap()["client_ip"] != c.want {
			t.Errorf("%s: lines %v, want one with client_ip %s", c.name, lines, c.want)
		}
	}
}
