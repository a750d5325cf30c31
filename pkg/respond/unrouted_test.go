package respond_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/respond"
)

func unroutedRouter() *mux.Router {
	r := mux.NewRouter()
	ok := func(http.ResponseWriter, *http.Request) {}
	r.HandleFunc("/api/v1/members", ok).Methods(http.MethodGet, http.MethodPost)
	r.HandleFunc("/api/v1/members/{id}", ok).Methods(http.MethodGet, http.MethodPatch)
	r.HandleFunc("/v1/webhooks", ok).Methods(http.MethodGet, http.MethodPost)
	r.HandleFunc("/v1/webhooks/{id}", ok).Methods(http.MethodGet, http.MethodDelete)
	r.HandleFunc("/api/webhooks/{provider}/{merchant_id}", ok).Methods(http.MethodPost)
	same := func(h http.Handler) http.Handler { return h }
	r.NotFoundHandler, r.MethodNotAllowedHandler = respond.Unrouted(r, same)
	return r
}

func TestUnroutedNamesWhereTheRouteLives(t *testing.T) {
	r := unroutedRouter()
	for _, tc := range []struct {
		method, path string
		status       int
		code, msg    string
		allow        string
	}{
		{"GET", "/api/v1/webhooks", 404, "not_found", "no such route: this operation lives at /v1/webhooks", ""},
		{"DELETE", "/api/v1/webhooks/we_1", 404, "not_found", "no such route: this operation lives at /v1/webhooks/we_1", ""},
		{"GET", "/v1/members/m_1", 404, "not_found", "no such route: this operation lives at /api/v1/members/m_1", ""},
		{"POST", "/webhooks/guru/abc", 404, "not_found", "no such route: this operation lives at /api/webhooks/guru/abc", ""},
		{"GET", "/api/v1/nothing", 404, "not_found", "no such route", ""},
		{"GET", "/api/v1", 404, "not_found", "no such route", ""},
		{"GET", "/", 404, "not_found", "no such route", ""},
		{"PUT", "/api/v1/members/m_1", 405, "method_not_allowed", "method not allowed on this route", "GET, PATCH"},
		{"PUT", "/v1/webhooks", 405, "method_not_allowed", "method not allowed on this route", "GET, POST"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var body respond.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if body.Error.Code != tc.code || body.Error.Message != tc.msg {
				t.Errorf("error %+v, want %s %q", body.Error, tc.code, tc.msg)
			}
			if got := rec.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}
