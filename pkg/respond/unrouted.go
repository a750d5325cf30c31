package respond

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
)

// Unrouted returns the answers of a router for a path it has no route for
// (404 not_found) and for a method its path does not take (405
// method_not_allowed, with Allow), both in the error envelope, each passed
// through wrap (the access log). A 404 whose path is a route of r once
// their "api" and "v1" prefixes are set aside names where that route
// lives: GET /api/v1/webhooks says the webhooks API is at /v1/webhooks.
// r is read at the first unrouted request, when every route is added.
func Unrouted(r *mux.Router, wrap func(http.Handler) http.Handler) (notFound, methodNotAllowed http.Handler) {
	routes := sync.OnceValue(func() []routeShape { return shapesOf(r) })
	notFound = wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		msg := "no such route"
		if elsewhere := relocated(routes(), req.URL.Path); elsewhere != "" {
			msg = "no such route: this operation lives at " + elsewhere
		}
		Error(w, nil, Admin, apperr.Errorf(apperr.NotFound, "%s", msg))
	}))
	methodNotAllowed = wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if allow := allowed(routes(), req.URL.Path); allow != "" {
			w.Header().Set("Allow", allow)
		}
		JSON(w, http.StatusMethodNotAllowed, ErrorBody{Error: ErrorDetail{
			Code: "method_not_allowed", Message: "method not allowed on this route"}})
	}))
	return notFound, methodNotAllowed
}

// routeShape is a route's path template cut into segments, "{…}" standing
// for any one segment, and the methods it takes.
type routeShape struct {
	segments []string
	methods  []string
}

func shapesOf(r *mux.Router) []routeShape {
	var shapes []routeShape
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil || tpl == "" {
			return nil // a subrouter without a path of its own
		}
		methods, _ := route.GetMethods()
		shapes = append(shapes, routeShape{segments: segmentsOf(tpl), methods: methods})
		return nil
	})
	return shapes
}

func segmentsOf(path string) []string {
	return strings.Split(strings.Trim(path, "/"), "/")
}

func isVar(segment string) bool { return strings.HasPrefix(segment, "{") }

// fits reports whether a request's segments fill a template's.
func fits(template, segments []string) bool {
	if len(template) != len(segments) {
		return false
	}
	for i, t := range template {
		if !isVar(t) && t != segments[i] {
			return false
		}
	}
	return true
}

// allowed is the Allow header of a path: the methods of every route it fits.
func allowed(shapes []routeShape, path string) string {
	segments := segmentsOf(path)
	var methods []string
	for _, s := range shapes {
		if fits(s.segments, segments) {
			methods = append(methods, s.methods...)
		}
	}
	slices.Sort(methods)
	return strings.Join(slices.Compact(methods), ", ")
}

// versionPrefix tells the leading segments set aside when a 404 looks for
// its route under another prefix.
func versionPrefix(segments []string) int {
	n := 0
	for n < len(segments) && (segments[n] == "api" || segments[n] == "v1") {
		n++
	}
	return n
}

// relocated is the path where a 404's operation lives, or "": a route
// whose segments after its prefix are the request's after its own, named
// with the request's values for the route's variables.
func relocated(shapes []routeShape, path string) string {
	segments := segmentsOf(path)
	rest := segments[versionPrefix(segments):]
	if len(rest) == 0 {
		return ""
	}
	for _, s := range shapes {
		p := versionPrefix(s.segments)
		if p == versionPrefix(segments) && slices.Equal(s.segments[:p], segments[:p]) {
			continue // same prefix: not a route elsewhere
		}
		if literal := slices.ContainsFunc(s.segments[p:], func(t string) bool { return !isVar(t) }); literal && fits(s.segments[p:], rest) {
			return "/" + strings.Join(append(slices.Clone(s.segments[:p]), rest...), "/")
		}
	}
	return ""
}
