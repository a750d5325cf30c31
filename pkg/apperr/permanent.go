package apperr

import "errors"

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as permanent: the message that caused it can never be
// processed, however often it is retried (it cannot be decoded, it breaks an
// invariant). Domain code marks its errors with it; a consumer runner
// (kafkabus.RunGroup) finds the offending message of a batch that failed
// with it and moves that message to the dead-letter topic. Permanent(nil)
// is nil; the result still matches err with errors.Is and errors.As, and
// keeps err's Code.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked by
// Permanent. Any other non-nil error is transient.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
