// Package respond writes JSON answers and the error envelope
// {"error": {"code", "message"}} of every HTTP interface, translating
// apperr codes to statuses and wire codes in one place (decision 9).
package respond

import (
	"encoding/json"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
)

// Style selects the wire spelling of error codes.
type Style int

const (
	// Admin codes are lowercase (admin, webhook management, ingest).
	Admin Style = iota
	// Member codes are uppercase (the member-facing operations).
	Member
)

var statuses = map[apperr.Code]int{
	apperr.Invalid:             http.StatusBadRequest,
	apperr.MissingFields:       http.StatusBadRequest,
	apperr.Unauthorized:        http.StatusUnauthorized,
	apperr.NotFound:            http.StatusNotFound,
	apperr.MemberNotFound:      http.StatusNotFound,
	apperr.EmailExists:         http.StatusConflict,
	apperr.Conflict:            http.StatusConflict,
	apperr.InvalidState:        http.StatusConflict,
	apperr.IdempotencyInUse:    http.StatusConflict,
	apperr.IdempotencyReused:   http.StatusUnprocessableEntity,
	apperr.InsufficientBalance: http.StatusUnprocessableEntity,
	apperr.BelowMinRedemption:  http.StatusUnprocessableEntity,
	apperr.RedemptionFailed:    http.StatusUnprocessableEntity,
	apperr.Unprocessable:       http.StatusUnprocessableEntity,
	apperr.PayloadTooLarge:     http.StatusRequestEntityTooLarge,
	apperr.RateLimited:         http.StatusTooManyRequests,
	apperr.Unavailable:         http.StatusServiceUnavailable,
	apperr.ServiceUnavailable:  http.StatusServiceUnavailable,

	apperr.IntegrationNotConfigured: http.StatusUnprocessableEntity,
	apperr.MemberUnavailable:        http.StatusConflict,
	apperr.PortalDisabled:           http.StatusConflict,
}

// Status returns the HTTP status of an error code (500 for unknown codes).
func Status(code apperr.Code) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// WireCode spells code for the style: the member-facing API says
// MEMBER_NOT_FOUND where the admin API says not_found.
func WireCode(code apperr.Code, style Style) string {
	if style == Admin {
		if code == apperr.MemberNotFound {
			code = apperr.NotFound
		}
		if code == apperr.MissingFields {
			code = apperr.Invalid
		}
		if code == apperr.Unprocessable {
			return "invalid_payload"
		}
		return string(code)
	}
	return strings.ToUpper(string(code))
}

// ErrorBody is the error envelope.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of the error envelope.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// JSON writes v with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// RetryAfter is the Retry-After, in seconds, of a 503 whose handler set
// none: a dependency that does not answer is usually back within seconds
// (a database restart, a broker's failover).
const RetryAfter = "2"

// Error writes err in the envelope. An error without an apperr code is an
// internal error: it is logged (once, here) and its text is not shown. A
// 503 always carries Retry-After (RetryAfter unless the handler set one);
// apperr.ServiceUnavailable, an outage of a dependency and not a defect,
// only at debug: one warning per request would flood the log for as long
// as the outage lasts, so the edge warns once in a while instead.
func Error(w http.ResponseWriter, log *zap.Logger, style Style, err error) {
	code := apperr.CodeOf(err)
	status := Status(code)
	msg := apperr.MessageOf(err)
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", RetryAfter)
	}
	switch {
	case log == nil:
	case code == apperr.ServiceUnavailable: // the edge warns once in a while (retry.Every), not per request
		log.Debug("request failed: a dependency is unavailable", zap.Error(err))
	case status >= 500:
		log.Error("request failed", zap.Error(err))
	}
	JSON(w, status, ErrorBody{Error: ErrorDetail{Code: WireCode(code, style), Message: msg}})
}

// Starting answers every request 503 service_unavailable, in style, with
// Retry-After: what a server says while its program waits for PostgreSQL
// and the brokers.
func Starting(style Style) http.Handler {
	return StartingBy(func(*http.Request) Style { return style })
}

// StartingBy is Starting with the style of each request's route.
func StartingBy(styleOf func(*http.Request) Style) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Error(w, nil, styleOf(r), apperr.Errorf(apperr.ServiceUnavailable,
			"the service is starting (waiting for its database and brokers); try again shortly"))
	})
}
