package ids

import (
	"bytes"
	"testing"

	"github.com/google/uuid"
)

func TestFormatParse(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("0b5c3e9e-2f4a-4c1e-9d1a-7e2f0c9a1b2c")
	s := Format(Member, id)
	if want := "mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c"; s != want {
		t.Fatalf("Format = %q, want %q", s, want)
	}
	for _, in := range []string{s, "mem_0B5C3E9E2F4A4C1E9D1A7E2F0C9A1B2C", id.String()} {
		got, ok := Parse(Member, in)
		if !ok || got != id {
			t.Errorf("Parse(%q) = %v, %v; want %v, true", in, got, ok, id)
		}
	}
	for _, bad := range []string{"", "mem_", "camp_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c", "mem_zz5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c", "mem_0b5c", "../etc"} {
		if _, ok := Parse(Member, bad); ok {
			t.Errorf("Parse(%q) ok, want refused", bad)
		}
	}
}

func TestNewIsTimeOrdered(t *testing.T) {
	prev := New()
	for range 1000 {
		id := New()
		if id.Version() != 7 {
			t.Fatalf("version %d, want 7", id.Version())
		}
		if bytes.Compare(prev[:], id[:]) >= 0 {
			t.Fatalf("%s then %s: ids made later must sort after", prev, id)
		}
		prev = id
	}
}
