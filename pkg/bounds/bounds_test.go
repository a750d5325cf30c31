package bounds

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
)

func TestCheckCountsCharacters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value string
		max   int
		want  string // the message; "" for accepted
	}{
		{"empty", "", Name, ""},
		{"at the bound", strings.Repeat("a", Name), Name, ""},
		{"over the bound", strings.Repeat("a", Name+1), Name, "name: must be at most 200 characters"},
		{"two-byte characters at the bound", strings.Repeat("ç", Name), Name, ""},
		{"four-byte characters at the bound", strings.Repeat("😀", Name), Name, ""},
		{"four-byte characters over it", strings.Repeat("😀", Name+1), Name, "name: must be at most 200 characters"},
		{"180,000 angle brackets", strings.Repeat("<", 180_000), Name, "name: must be at most 200 characters"},
	}
	for _, tt := range tests {
		err := Check("name", tt.value, tt.max)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: Check = %v, want nil", tt.name, err)
			}
			continue
		}
		if !apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != tt.want {
			t.Errorf("%s: Check = %v, want Invalid %q", tt.name, err, tt.want)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	// {"k":"…"} is 8 bytes around the value.
	at := map[string]any{"k": strings.Repeat("x", Metadata-8)}
	if err := CheckJSON("metadata", at, Metadata); err != nil {
		t.Errorf("16 KiB exactly: %v, want nil", err)
	}
	over := map[string]any{"k": strings.Repeat("x", Metadata-7)}
	err := CheckJSON("metadata", over, Metadata)
	if !apperr.Is(err, apperr.Invalid) || !strings.HasPrefix(apperr.MessageOf(err), "metadata: ") {
		t.Errorf("16 KiB + 1: %v, want Invalid naming metadata", err)
	}
	// Escapes count as encoded: "<" is \u003c, six bytes.
	escaped := map[string]any{"k": strings.Repeat("<", Metadata/6)}
	if err := CheckJSON("metadata", escaped, Metadata); err == nil {
		t.Error("escaped text over 16 KiB once encoded was accepted")
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"çãõé", 3, "çãõ"},
		{"a😀b😀", 2, "a😀"},
		{"ab\xffcd", 3, "ab\xff"},
	}
	for _, tt := range tests {
		if got := Cut(tt.in, tt.max); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	long := strings.Repeat("João ", 100_000)
	got := Cut(long, Name)
	if utf8.RuneCountInString(got) != Name || !utf8.ValidString(got) || !strings.HasPrefix(long, got) {
		t.Errorf("Cut of a long name: %d characters, valid %v", utf8.RuneCountInString(got), utf8.ValidString(got))
	}
}
