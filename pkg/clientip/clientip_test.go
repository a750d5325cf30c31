package clientip_test

import (
	"net/http"
	"testing"

	"github.com/convida/convida/pkg/clientip"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	proxies := clientip.MustParse("10.0.0.0/8, 192.168.1.7, fd00::/8")
	tests := []struct {
		name     string
		resolver clientip.Resolver
		remote   string
		xff      []string
		want     string
	}{
		{"no proxy trusted: the peer, whatever the header says", clientip.Resolver{}, "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"an untrusted peer's header is ignored", proxies, "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"a trusted proxy's hop", proxies, "10.1.2.3:443", []string{"198.51.100.1"}, "198.51.100.1"},
		{"the rightmost untrusted hop, not a forged one further left", proxies, "10.1.2.3:443", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"through two trusted proxies", proxies, "10.1.2.3:443", []string{"198.51.100.1, 192.168.1.7"}, "198.51.100.1"},
		{"several header lines are one list", proxies, "10.1.2.3:443", []string{"198.51.100.1", "10.9.9.9"}, "198.51.100.1"},
		{"a malformed hop stops at the last trusted one", proxies, "10.1.2.3:443", []string{"198.51.100.1, bogus"}, "10.1.2.3"},
		{"no header: the proxy itself", proxies, "10.1.2.3:443", nil, "10.1.2.3"},
		{"IPv6 proxy", proxies, "[fd00::5]:443", []string{"2001:db8::1"}, "2001:db8::1"},
		{"IPv4-mapped peer", proxies, "[::ffff:10.1.2.3]:443", []string{"198.51.100.1"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tt.remote
		for _, v := range tt.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := tt.resolver.String(r); got != tt.want {
			t.Errorf("%s: Addr = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestKeyCountsIPv6PerSlash64(t *testing.T) {
	t.Parallel()
	key := func(remote string) string {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		return clientip.Resolver{}.Key(r)
	}
	if a, b := key("[2001:db8:1:2:aaaa::1]:1"), key("[2001:db8:1:2:ffff::9]:1"); a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("two addresses of one /64: keys %q and %q, want both 2001:db8:1:2::/64", a, b)
	}
	if a, b := key("[2001:db8:1:2::1]:1"), key("[2001:db8:1:3::1]:1"); a == b {
		t.Errorf("two /64s share the key %q", a)
	}
	if got := key("198.51.100.7:9"); got != "198.51.100.7" {
		t.Errorf("IPv4 key = %q", got)
	}
	if got := key("pipe"); got != "unknown" {
		t.Errorf("no address: key %q, want unknown", got)
	}
}

func TestParseRefusesGarbage(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"10.0.0.0/33", "nope", "10.0.0.1/8/2"} {
		if _, err := clientip.Parse(bad); err == nil {
			t.Errorf("Parse(%q) = nil error", bad)
		}
	}
	if _, err := clientip.Parse(" "); err != nil {
		t.Errorf("Parse(blank) = %v", err)
	}
}
