package apperr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

func TestPermanent(t *testing.T) {
	t.Parallel()
	if apperr.Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
	errBoom := errors.New("boom")
	wrapped := fmt.Errorf("apply: %w", apperr.Permanent(errBoom))
	coded := apperr.Permanent(apperr.Errorf(apperr.Invalid, "cannot decode"))
	tests := []struct {
		err  error
		want bool
	}{
		{errBoom, false},
		{apperr.Permanent(errBoom), true},
		{wrapped, true},
		{coded, true},
		{nil, false},
	}
	for _, tt := range tests {
		if got := apperr.IsPermanent(tt.err); got != tt.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if !errors.Is(wrapped, errBoom) {
		t.Error("a Permanent error no longer matches its cause with errors.Is")
	}
	if got := apperr.CodeOf(coded); got != apperr.Invalid {
		t.Errorf("CodeOf(Permanent(invalid)) = %q, want %q", got, apperr.Invalid)
	}
}
