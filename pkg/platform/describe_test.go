package platform

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/netguard"
)

// The credentials a failing call must never repeat, some with characters
// that a query, a form or a path escapes: a platform may echo the request
// in its answer, escaped.
var planted = struct {
	guruUser, guruAccount, yampiToken, yampiKey, yampiHook string
	hmSecret, hmBasic, hottok, kwSecret, kwHook, access    string
}{
	guruUser: "guru-user/TOKEN+1=", guruAccount: "guru-account-XYZ9",
	yampiToken: "yampi-token&one", yampiKey: "yampi key/2+3", yampiHook: "yampi-webhook-secret",
	hmSecret: "hm-secret&=/+x", hmBasic: "aG0tYmFzaWMtdG9rZW4=", hottok: "hottok-abcdef-123",
	kwSecret: "kw-secret?&=+y", kwHook: "kiwify-token-zz9", access: "access-PLANTED-token",
}

func plantedSecrets() []string {
	p := planted
	return []string{p.guruUser, p.guruAccount, p.yampiToken, p.yampiKey, p.yampiHook, p.hmSecret, p.hmBasic,
		p.hottok, p.kwSecret, p.kwHook, p.access}
}

// echoing is a platform that refuses every call with status, its body
// repeating the request whole (URL with its query, headers, body), and
// issues the planted access token at any path ending in oauth/token when
// tokens is set.
func echoing(t *testing.T, status int, tokens bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if tokens && strings.HasSuffix(r.URL.Path, "oauth/token") {
			writeJSON(w, 200, map[string]any{"access_token": planted.access, "expires_in": 3600})
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":"refused","url":%q,"authorization":%q,"user_token":%q,"secret_key":%q,"body":%q}`,
			r.URL.String(), r.Header.Get("Authorization"), r.Header.Get("User-Token"), r.Header.Get("User-Secret-Key"), body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// closedPort is a loopback URL where nothing listens.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestDescribeEveryFailure: for every call of every platform (Guru's pull,
// discount and coupon; Yampi's pull, store credit and coupon; Hotmart's
// and Kiwify's token request and pull) and every way it fails — an
// address the guard refuses, a host that does not exist, a refused
// connection, 401, 5xx — Describe says which call failed and how, and
// neither it nor the error's text (what zap.Error logs) holds a
// credential, the request's query or the address.
func TestDescribeEveryFailure(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	guarded := &Client{HTTP: netguard.NewClient(netguard.Config{}, 0), Sleep: (&pauses{}).sleep}
	open, _ := testClient(t)
	failures := []struct {
		name   string
		client *Client
		url    string // the API's base; a token endpoint besides it works when tokens
		says   string
		tokens bool
	}{
		{"refused address", guarded, tlsSrv.URL, netguard.NoPublicAddress, false},
		{"no such host", open, "http://convida-platform.invalid", netguard.NoPublicAddress, false},
		{"connection refused", open, closedPort(t), "connection refused", false},
		{"401", open, echoing(t, 401, false).URL, "answered 401", false},
		{"503", open, echoing(t, 503, false).URL, "answered 503", false},
		{"401 after a token", open, echoing(t, 401, true).URL, "answered 401", true},
		{"503 after a token", open, echoing(t, 503, true).URL, "answered 503", true},
	}
	noop := func([]inbound.Sale) error { return nil }
	coupon := Coupon{Code: "LOJ-ANA-7KQ2", Percentage: true, Value: 10, Start: window.From, End: window.To}
	type call struct {
		name, step string
		run        func(c *Client, base string) error
		afterToken bool // only meaningful when the token endpoint answers
	}
	guru := func(c *Client, base string) *Guru {
		g, err := c.Guru(GuruAccount{APIURL: base, UserToken: planted.guruUser, Secrets: []string{planted.guruAccount}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	yampi := func(c *Client, base string) *Yampi {
		y, err := c.Yampi(YampiAccount{APIURL: base, UserToken: planted.yampiToken, UserSecretKey: planted.yampiKey, StoreAlias: "loja",
			Secrets: []string{planted.yampiHook}})
		if err != nil {
			t.Fatal(err)
		}
		return y
	}
	hotmart := func(c *Client, api, auth string) *Hotmart {
		h, err := c.Hotmart(HotmartAccount{APIURL: api, AuthURL: auth, ClientID: "hm-client-id", ClientSecret: planted.hmSecret,
			BasicToken: "Basic " + planted.hmBasic, Secrets: []string{planted.hottok}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	kiwify := func(c *Client, base string) *Kiwify {
		k, err := c.Kiwify(KiwifyAccount{APIURL: base, ClientID: "kw-client-id", ClientSecret: planted.kwSecret, AccountID: "kw-account",
			Secrets: []string{planted.kwHook}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	calls := []call{
		{"guru pull", "guru GET transactions", func(c *Client, b string) error { return guru(c, b).Sales(context.Background(), window, noop) }, false},
		{"guru discount", "guru GET subscription", func(c *Client, b string) error {
			return guru(c, b).DiscountNextCycles(context.Background(), "sub_1", 500, 1)
		}, false},
		{"guru coupon", "guru POST coupons", func(c *Client, b string) error {
			_, err := guru(c, b).ProvisionCoupon(context.Background(), coupon)
			return err
		}, false},
		{"yampi pull", "yampi GET orders", func(c *Client, b string) error { return yampi(c, b).Sales(context.Background(), window, noop) }, false},
		{"yampi store credit", "yampi POST promocodes", func(c *Client, b string) error {
			return yampi(c, b).CreateStoreCredit(context.Background(), StoreCredit{Code: "CRED-1", Cents: 500, Start: window.From, End: window.To})
		}, false},
		{"yampi coupon", "yampi POST promocodes", func(c *Client, b string) error {
			_, err := yampi(c, b).ProvisionCoupon(context.Background(), coupon)
			return err
		}, false},
		{"hotmart token", "hotmart POST oauth token", func(c *Client, b string) error {
			return hotmart(c, b+"/api", b+"/security/oauth/token").Sales(context.Background(), window, noop)
		}, false},
		{"kiwify token", "kiwify POST oauth token", func(c *Client, b string) error {
			return kiwify(c, b).Sales(context.Background(), window, noop)
		}, false},
		{"hotmart pull", "hotmart GET sales price details", func(c *Client, b string) error {
			return hotmart(c, b+"/api", b+"/security/oauth/token").Sales(context.Background(), window, noop)
		}, true},
		{"kiwify pull", "kiwify GET sales", func(c *Client, b string) error {
			return kiwify(c, b).Sales(context.Background(), window, noop)
		}, true},
	}
	host := func(base string) string { return strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://") }
	for _, f := range failures {
		for _, c := range calls {
			if c.afterToken != f.tokens && (c.afterToken || f.tokens && strings.Contains(c.name, "token")) {
				continue // a token call where the token works, or a pull after a token that fails first
			}
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				err := c.run(f.client, f.url)
				if err == nil {
					t.Fatal("the call succeeded")
				}
				got := Describe(err)
				if !strings.HasPrefix(got, c.step+": "+f.says) && !strings.HasPrefix(got, c.step+" "+f.says) {
					t.Errorf("Describe = %q, want %q then %q", got, c.step, f.says)
				}
				leaks := append(plantedSecrets(), host(f.url), "127.0.0.1")
				if !strings.Contains(f.says, "answered") {
					// No answer to excerpt: nothing may name the request.
					leaks = append(leaks, "client_secret", "grant_type", "hm-client-id", "convida-platform.invalid")
				}
				for what, text := range map[string]string{"Describe": got, "Error": err.Error(), "%+v": fmt.Sprintf("%+v", err)} {
					for _, leak := range leaks {
						if strings.Contains(text, leak) {
							t.Errorf("%s repeats %q: %s", what, leak, text)
						}
					}
				}
			})
		}
	}
}

// TestDescribeOthers: an error that did not come from a platform call is
// not repeated.
func TestDescribeOthers(t *testing.T) {
	t.Parallel()
	if got := Describe(fmt.Errorf("dial tcp 10.0.0.1:5432: secret-dsn")); got != "internal error" {
		t.Errorf("Describe(a foreign error) = %q, want internal error", got)
	}
	if got := Describe(nil); got != "" {
		t.Errorf("Describe(nil) = %q", got)
	}
}
