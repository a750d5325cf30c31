package apperr

import (
	"errors"
	"fmt"
	"testing"
)

// The API keeps its message ("field: problem"); the field and rule ride
// beside it, through wrapping.
func TestInvalidf(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	err := fmt.Errorf("saving: %w", Invalidf("tiers[2].name", RuleTooLong, "must be at most %d characters", 100).WithLimit(100).WithCause(cause))
	if got := MessageOf(err); got != "tiers[2].name: must be at most 100 characters" {
		t.Errorf("message %q", got)
	}
	if CodeOf(err) != Invalid || !errors.Is(err, cause) {
		t.Errorf("code %s, cause kept %v", CodeOf(err), errors.Is(err, cause))
	}
	v, ok := ViolationOf(err)
	if want := (Violation{Field: "tiers[2].name", Rule: RuleTooLong, Limit: 100}); !ok || v != want {
		t.Errorf("ViolationOf = %+v %v, want %+v", v, ok, want)
	}
	if _, ok := ViolationOf(Errorf(Invalid, "no field")); ok {
		t.Error("an error made by Errorf names a field")
	}
}
