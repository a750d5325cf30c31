package platform

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
)

// notAddress fails t when msg repeats anything of the address of rawURL,
// or a Go dial error.
func notAddress(t *testing.T, msg, rawURL string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{u.Host, u.Hostname(), ":" + u.Port(), "127.0.0.1", "dial tcp", "connect:"} {
		if strings.Contains(msg, leak) {
			t.Errorf("message %q repeats %q", msg, leak)
		}
	}
}

// An Executor without a client of its own refuses the operator's network:
// a stored API URL on loopback (a row saved before the address check, or
// a name that resolves there) fails at once, permanently, in words that
// do not name the address, and the server there sees no connection.
func TestExecutorRefusesPrivateNetworksByDefault(t *testing.T) {
	t.Parallel()
	// Canaries: fake platforms that would answer every request well.
	routes := map[string][]answer{}
	for _, tg := range targets() {
		routes[tg.route] = []answer{tg.success}
		for r, a := range tg.others {
			routes[r] = []answer{a}
		}
	}
	tlsCanary, plainCanary := startFakePlatform(t, routes, true), startFakePlatform(t, routes, false)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"https on loopback", tlsCanary.srv.URL, netguard.NoPublicAddress},
		{"https on loopback, IPv4-mapped", strings.Replace(tlsCanary.srv.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1), netguard.NoPublicAddress},
		{"plain http", plainCanary.srv.URL, "only https URLs are allowed"},
	} {
		for _, tg := range targets() {
			t.Run(tc.name+"/"+tg.name, func(t *testing.T) {
				t.Parallel()
				rec := &sleepRecorder{}
				e := &Executor{Retry: fastPolicy(), Sleep: rec.sleep, CouponKey: testCouponKey}
				_, err := e.Execute(context.Background(), tg.settings(tc.url+tg.prefix), tg.req)
				msg := apperr.MessageOf(err)
				if !apperr.Is(err, apperr.Unprocessable) || !strings.Contains(msg, tc.want) {
					t.Fatalf("err = %v, want unprocessable saying %q", err, tc.want)
				}
				notAddress(t, msg, tc.url)
				if p := rec.recorded(); len(p) != 0 {
					t.Errorf("slept %v: a refused address is not retried", p)
				}
			})
		}
		for _, platformName := range redemption.CouponPlatforms {
			t.Run(tc.name+"/"+platformName+" coupon", func(t *testing.T) {
				t.Parallel()
				settings := guruCouponSettings(tc.url)
				if platformName == provider.Yampi {
					settings = yampiCouponSettings(tc.url)
				}
				_, err := (&Executor{}).ProvisionCoupon(context.Background(), platformName, settings,
					redemption.CouponRequest{Code: "LOJ-ANA-7KQ2", Discount: redemption.Discount{Type: "percentage", Value: 10}, Now: couponNow})
				msg := apperr.MessageOf(err)
				if !apperr.Is(err, apperr.Unprocessable) || !strings.Contains(msg, tc.want) {
					t.Fatalf("err = %v, want unprocessable saying %q", err, tc.want)
				}
				notAddress(t, msg, tc.url)
			})
		}
	}
	t.Cleanup(func() {
		if n := tlsCanary.conns.Load() + plainCanary.conns.Load(); n != 0 {
			t.Errorf("the canaries accepted %d connections, want 0", n)
		}
	})
}
