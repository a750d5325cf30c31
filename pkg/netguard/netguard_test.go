package netguard_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convida/convida/pkg/netguard"
)

func TestIsPublicAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"172.32.0.1", true},  // just outside 172.16/12
		{"100.128.0.1", true}, // just outside 100.64/10
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"::1", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"ff0e::1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"255.255.255.255", false},
		{"240.0.0.1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::a00:1", false},  // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"::127.0.0.1", false},
	}
	for _, tt := range tests {
		if got := netguard.IsPublicAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsPublicAddr(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url          string
		allowPrivate bool
		want         error // nil, ErrNotPublic, ErrNotHTTPS, or errMalformed
	}{
		{"https://digitalmanager.guru/api/v2", false, nil},
		{"https://api.dooki.com.br/v2", false, nil},
		{"https://8.8.8.8/v2", false, nil},
		{"https://[2606:4700:4700::1111]/x", false, nil},
		{"http://digitalmanager.guru/api/v2", false, netguard.ErrNotHTTPS},
		{"http://127.0.0.1:8080/api", false, netguard.ErrNotHTTPS},
		{"https://127.0.0.1:8080/api", false, netguard.ErrNotPublic},
		{"https://10.1.2.3/api", false, netguard.ErrNotPublic},
		{"https://192.168.0.10/api", false, netguard.ErrNotPublic},
		{"https://169.254.169.254/latest/meta-data", false, netguard.ErrNotPublic},
		{"https://[::1]:9000/", false, netguard.ErrNotPublic},
		{"https://[::ffff:127.0.0.1]/", false, netguard.ErrNotPublic},
		{"https://[fd00::1]/", false, netguard.ErrNotPublic},
		{"https://localhost:8443/", false, netguard.ErrNotPublic},
		{"https://LOCALHOST./", false, netguard.ErrNotPublic},
		{"https://api.localhost/", false, netguard.ErrNotPublic},
		{"https://metadata/computeMetadata", false, netguard.ErrNotPublic},
		{"https://2130706433/", false, netguard.ErrNotPublic},
		{"https://0x7f.1/", false, netguard.ErrNotPublic},
		{"https://0x7f.0x0.0x0.0x1/", false, netguard.ErrNotPublic},
		{"https://127.1/", false, netguard.ErrNotPublic},
		{"http://127.0.0.1:8080/api", true, nil},
		{"https://localhost/", true, nil},
		{"ftp://example.com/", false, errMalformed},
		{"example.com/api", false, errMalformed},
		{"https://", false, errMalformed},
		{"", false, errMalformed},
	}
	for _, tt := range tests {
		err := netguard.CheckURL(tt.url, tt.allowPrivate)
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("CheckURL(%q, %v) = %v, want nil", tt.url, tt.allowPrivate, err)
		case tt.want == errMalformed && (err == nil || errors.Is(err, netguard.ErrNotPublic)):
			t.Errorf("CheckURL(%q, %v) = %v, want a malformed-URL error", tt.url, tt.allowPrivate, err)
		case tt.want != nil && tt.want != errMalformed && !errors.Is(err, tt.want):
			t.Errorf("CheckURL(%q, %v) = %v, want %v", tt.url, tt.allowPrivate, err, tt.want)
		}
		if err != nil && tt.url != "" && strings.Contains(err.Error(), tt.url) {
			t.Errorf("CheckURL(%q) error %q repeats the URL", tt.url, err)
		}
	}
}

var errMalformed = errors.New("malformed")

// canary is a loopback server that counts the connections it accepts.
type canary struct {
	*httptest.Server
	conns atomic.Int64
}

func newCanary(t *testing.T, tls bool, h http.HandlerFunc) *canary {
	t.Helper()
	c := &canary{}
	c.Server = httptest.NewUnstartedServer(h)
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	if tls {
		c.StartTLS()
	} else {
		c.Start()
	}
	t.Cleanup(c.Close)
	return c
}

func TestClientRefusesPrivateAddressesBeforeConnecting(t *testing.T) {
	t.Parallel()
	c := newCanary(t, true, func(w http.ResponseWriter, _ *http.Request) {})
	client := netguard.NewClient(netguard.Config{}, 0)
	for _, u := range []string{c.URL, strings.Replace(c.URL, "127.0.0.1", "localhost", 1)} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s: answered %d, want a refusal", u, resp.StatusCode)
		}
		if !errors.Is(err, netguard.ErrNotPublic) {
			t.Errorf("GET %s: %v, want ErrNotPublic", u, err)
		}
		if got := netguard.Describe(t.Context(), err); got != netguard.NoPublicAddress {
			t.Errorf("Describe = %q, want the sentence without the address", got)
		}
	}
	if n := c.conns.Load(); n != 0 {
		t.Errorf("the canary accepted %d connections, want 0", n)
	}
}

func TestClientRefusesPlainHTTP(t *testing.T) {
	t.Parallel()
	c := newCanary(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	_, err := netguard.NewClient(netguard.Config{}, 0).Get(c.URL)
	if !errors.Is(err, netguard.ErrNotHTTPS) {
		t.Errorf("GET over http: %v, want ErrNotHTTPS", err)
	}
	if n := c.conns.Load(); n != 0 {
		t.Errorf("the canary accepted %d connections, want 0", n)
	}
	resp, err := netguard.NewClient(netguard.Config{AllowPrivateNetworks: true}, 0).Get(c.URL)
	if err != nil {
		t.Fatalf("GET with private networks allowed: %v", err)
	}
	resp.Body.Close()
}

func TestClientFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	target := newCanary(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	bouncer := newCanary(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/internal", http.StatusFound)
	})
	resp, err := netguard.NewClient(netguard.Config{AllowPrivateNetworks: true}, 0).Get(bouncer.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status = %d, want the 302 itself", resp.StatusCode)
	}
	if n := target.conns.Load(); n != 0 {
		t.Errorf("the redirect's target got %d connections, want 0", n)
	}
}

func TestClientIgnoresTheEnvironmentsProxy(t *testing.T) {
	proxy := newCanary(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	server := newCanary(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	resp, err := netguard.NewClient(netguard.Config{AllowPrivateNetworks: true}, 0).Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if proxy.conns.Load() != 0 || server.conns.Load() != 1 {
		t.Errorf("proxy got %d connections and server %d, want 0 and 1", proxy.conns.Load(), server.conns.Load())
	}
}
