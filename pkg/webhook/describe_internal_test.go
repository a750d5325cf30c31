package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/netguard"
)

// TestDescribeTellsNoDNSApart (issue 29): a host that does not resolve,
// whose lookup fails, and one that resolves to an address that is not
// public are one sentence in the delivery log and the test-send answer,
// naming neither the host nor the address, so that registering endpoints
// cannot be used to ask the operator's DNS which internal names exist.
func TestDescribeTellsNoDNSApart(t *testing.T) {
	t.Parallel()
	c := NewClient(ClientConfig{})
	const host = "db.internal.example"
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "https://" + host + "/hooks", Err: err} }
	for name, err := range map[string]error{
		"no such host": wrap(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}),
		"lookup failed": wrap(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: host,
			Server: "10.0.0.53:53", IsTemporary: true}}),
		"not public": wrap(&net.OpError{Op: "dial", Net: "tcp",
			Err: &netguard.NonPublicAddressError{Addr: netip.MustParseAddr("10.1.2.3")}}),
	} {
		got := c.describe(context.Background(), context.Background(), host, err)
		if got != NoPublicAddress {
			t.Errorf("%s: %q, want %q", name, got, NoPublicAddress)
		}
		for _, leak := range []string{host, "10.1.2.3", "10.0.0.53", "no such host", "not public"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: %q names %q", name, got, leak)
			}
		}
	}
	// Other failures keep their own sentences.
	if got := c.describe(context.Background(), context.Background(), host, wrap(errors.New("boom"))); got != "boom" {
		t.Errorf("another error: %q, want boom", got)
	}
}
