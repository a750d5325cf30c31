// Package accesslog writes one line per HTTP request for every edge (the
// API, the ingest, the dashboard): what was asked, of which route, by whom,
// with which answer, and never a header, query or body, which may hold a
// credential.
package accesslog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/clientip"
)

// RequestIDHeader carries a request's id: taken from the request when it is
// sane (see validRequestID), generated otherwise, and returned on every
// answer so that a client can quote it and an operator find the log line.
const RequestIDHeader = "X-Request-Id"

// Middleware returns middleware that writes one info line per request to
// log, "request", after the answer: method, route (the mux path template,
// e.g. /api/v1/members/{id}, or the one an inner router gave LogRoute;
// empty for a path no route matched), status, duration, the authenticated
// merchant (see Merchant), the dashboard user when there is one
// (User), the request id,
// which it also sets as X-Request-Id on the answer, and client_ip, the
// client's address as clients tells it (X-Forwarded-For only from
// TRUSTED_PROXIES). It logs nothing of
// the request's headers, query or body, so no key, token or secret reaches
// the log. Probes and scrapes (/healthz, /readyz, /metrics) are logged at
// debug level. Installed with Router.Use, it runs for matched routes only;
// wrap the router's NotFoundHandler and MethodNotAllowedHandler in it too.
func Middleware(log *zap.Logger, clients clientip.Resolver) mux.MiddlewareFunc {
	if log == nil {
		log = zap.NewNop()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get(RequestIDHeader)
			if !validRequestID(id) {
				id = newRequestID()
			}
			w.Header().Set(RequestIDHeader, id)
			if !log.Core().Enabled(zapcore.InfoLevel) && !log.Core().Enabled(zapcore.DebugLevel) {
				next.ServeHTTP(w, r) // no line to write: nothing to measure
				return
			}
			e := &accessEntry{}
			sw := &StatusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), accessKey{}, e)))

			route := e.route
			if route == "" {
				route = RouteTemplate(r)
			}
			level := zapcore.InfoLevel
			if route == "/healthz" || route == "/readyz" || route == "/metrics" {
				level = zapcore.DebugLevel
			}
			// Check first: with the level off, no field is built.
			if ce := log.Check(level, "request"); ce != nil {
				fields := []zap.Field{zap.String("method", r.Method), zap.String("route", route),
					zap.Int("status", sw.Status()), zap.Duration("duration", time.Since(start)),
					zap.String("merchant", e.merchant), zap.String("request_id", id), zap.String("client_ip", clients.String(r))}
				if e.user != "" {
					fields = append(fields, zap.String("user", e.user))
				}
				ce.Write(fields...)
			}
		})
	}
}

// RouteTemplate returns the mux path template of r's route
// (/api/v1/creators/{token}), empty when no route matched: what logs say of
// a path, which may hold a credential.
func RouteTemplate(r *http.Request) string {
	if cr := mux.CurrentRoute(r); cr != nil {
		route, _ := cr.GetPathTemplate()
		return route
	}
	return ""
}

// Merchant records, for r's access-log line, the merchant that r
// authenticated as. It does nothing outside Middleware.
func Merchant(r *http.Request, merchantID string) {
	if e := entryOf(r); e != nil {
		e.merchant = merchantID
	}
}

// User records, for r's access-log line, the dashboard user that r was
// made by (its id). It does nothing outside Middleware.
func User(r *http.Request, userID string) {
	if e := entryOf(r); e != nil {
		e.user = userID
	}
}

// Route records, for r's access-log line, the route template of a
// handler that routes on its own under a mux prefix (the dashboard's
// /dashboard/members/{id} under /dashboard): a template, never a path,
// which may hold a credential (/dashboard/invite/{token}). It does nothing
// outside Middleware.
func Route(r *http.Request, template string) {
	if e := entryOf(r); e != nil {
		e.route = template
	}
}

func entryOf(r *http.Request) *accessEntry {
	e, _ := r.Context().Value(accessKey{}).(*accessEntry)
	return e
}

type accessKey struct{}

// accessEntry is what inner handlers add to a request's log line.
type accessEntry struct{ merchant, user, route string }

// validRequestID accepts 1 to 128 characters of letters, digits and
// "-_.:" (a UUID, a trace id, a load balancer's id): anything else could
// forge log content or carry a secret, and is replaced.
func validRequestID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// newRequestID returns 32 random hex digits.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// StatusWriter remembers the status of an answer (Status).
type StatusWriter struct {
	http.ResponseWriter
	status int
}

func (w *StatusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the answer's status: 200 when nothing set another.
func (w *StatusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// ServeMuxRoutes serves routes and gives the access log the route template
// it chose ("/dashboard/members/{id}"), which it sets on the request as it
// routes: the mux router in front only knows the prefix it is mounted at. A
// template, never the path: /portal/s/{token} hides the token.
func ServeMuxRoutes(routes *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		routes.ServeHTTP(w, r)
		if _, path, ok := strings.Cut(r.Pattern, " "); ok {
			Route(r, path)
		} else if r.Pattern != "" {
			Route(r, r.Pattern)
		}
	})
}
