package retry

import (
	"errors"
	"time"
)

// Transient is a failure worth another try (a 5xx, a 429, a network
// error), as an adapter reports it: the domain asks for the behaviour,
// never for the adapter's type.
type Transient interface {
	error
	// RetryAfter is the pause the other side asked for; zero when none.
	RetryAfter() time.Duration
}

// AsTransient returns the transient failure err wraps, if any.
func AsTransient(err error) (Transient, bool) {
	var t Transient
	ok := errors.As(err, &t)
	return t, ok
}

// RetryAfter is the pause a transient failure err wraps asked for; zero
// when none, or when err is not transient.
func RetryAfter(err error) time.Duration {
	if t, ok := AsTransient(err); ok {
		return t.RetryAfter()
	}
	return 0
}
