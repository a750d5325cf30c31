// Package apperr is the one error type of Convida: an error carries a Code
// that each edge (HTTP API, ingest, ledger) translates once into its own
// vocabulary. Codes are stable identifiers, never matched by message text.
package apperr

import (
	"errors"
	"fmt"
)

// Code classifies an error. pkg/respond, shared by every HTTP edge (the API
// and ingest), maps each code to a status and to the lowercase (admin) or
// uppercase (member-facing) wire code.
type Code string

// The codes. Their HTTP status and wire spelling live in pkg/respond.
const (
	Internal            Code = "internal"
	Invalid             Code = "validation_error"
	MissingFields       Code = "missing_fields"
	Unauthorized        Code = "unauthorized"
	NotFound            Code = "not_found"
	MemberNotFound      Code = "member_not_found"
	EmailExists         Code = "email_exists"
	Conflict            Code = "conflict"
	InvalidState        Code = "invalid_state"
	InsufficientBalance Code = "insufficient_balance"
	BelowMinRedemption  Code = "below_min_redemption"
	RedemptionFailed    Code = "redemption_failed"
	IdempotencyReused   Code = "idempotency_key_reused"
	IdempotencyInUse    Code = "idempotency_key_in_use"
	RateLimited         Code = "rate_limited"
	PayloadTooLarge     Code = "payload_too_large"
	Unprocessable       Code = "unprocessable"
	Unavailable         Code = "unavailable"

	// ServiceUnavailable: a dependency every request needs (PostgreSQL)
	// does not answer. Nothing was done; the same request may be sent
	// again after Retry-After (503, never 500).
	ServiceUnavailable Code = "service_unavailable"

	// IntegrationNotConfigured: a redemption needs a platform whose
	// credentials the merchant has not set; refused before the ledger.
	IntegrationNotConfigured Code = "integration_not_configured"

	// MemberUnavailable: the member is blocked or erased, so gets no
	// portal session (409).
	MemberUnavailable Code = "member_unavailable"
	// PortalDisabled: the merchant turned the member's portal off (409).
	PortalDisabled Code = "portal_disabled"
)

// Error is an error with a Code and a message safe to show to the caller.
type Error struct {
	Code    Code
	Message string
	Err     error // optional cause, never shown to the caller
	// Violation says, for an Invalid error made by Invalidf, which input
	// is refused and why, so that an edge can word the refusal in its
	// reader's language (the dashboard); the API's envelope carries only
	// Code and Message.
	Violation Violation
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the code and a formatted caller-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the code and message whose cause is err.
func Wrap(code Code, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// CodeOf returns the code of the first *Error in err's chain, Internal for
// any other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the caller-safe message of err: the message of its
// *Error, or a generic text for anything else (whose details must not leak).
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// Is reports whether err carries the code.
func Is(err error, code Code) bool { return CodeOf(err) == code }
