package member

import (
	"regexp"
	"testing"
)

func TestNewCode(t *testing.T) {
	t.Parallel()
	tests := []struct{ prefix, name, want string }{
		{"LOJ", "João da Silva", `^LOJ-JOAO-[2-9A-HJ-NP-Z]{4}$`},
		{"AB", "", `^AB-MEMBER-[2-9A-HJ-NP-Z]{4}$`},
		{"AB", "Maximiliano-Alexandre Souza", `^AB-MAXIMILIANOA-[2-9A-HJ-NP-Z]{4}$`},
		{"AB", "   Ana   ", `^AB-ANA-[2-9A-HJ-NP-Z]{4}$`},
	}
	for _, tt := range tests {
		got := NewCode(tt.prefix, tt.name)
		if !regexp.MustCompile(tt.want).MatchString(got) {
			t.Errorf("NewCode(%q, %q) = %q, want match %s", tt.prefix, tt.name, got, tt.want)
		}
	}
}

func TestLink(t *testing.T) {
	t.Parallel()
	tests := []struct{ store, param, want string }{
		{"https://loja.example.com", "", "https://loja.example.com?cupom=LOJ-ANA-K7PX"},
		{"https://loja.example.com/p?utm=x", "ref", "https://loja.example.com/p?ref=LOJ-ANA-K7PX&utm=x"},
	}
	for _, tt := range tests {
		if got := Link(tt.store, tt.param, "LOJ-ANA-K7PX"); got != tt.want {
			t.Errorf("Link(%q, %q) = %q, want %q", tt.store, tt.param, got, tt.want)
		}
	}
}
