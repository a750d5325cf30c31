package httpapi

import (
	"net/http"

	"github.com/convida/convida/pkg/respond"
)

// Protected puts h behind the middleware chain of the interface of style,
// so that a test can serve a handler of its own (a slow one, a failing one)
// exactly as the API's routes are served.
func (s *Server) Protected(style respond.Style, h http.Handler) http.Handler {
	return s.withStyle(style)(s.authenticate(s.checkQuery(s.rateLimit(s.idempotency(h)))))
}
