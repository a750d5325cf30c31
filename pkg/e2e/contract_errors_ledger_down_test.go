package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/embeddedbroker"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/testenv"
)

// ledgerDown runs a second deployment on the same database whose ledger
// is not running (wallet actions are not taken within ACTION_TIMEOUT) and
// whose ingest has an operator ceiling of 1 delivery per second; then its
// broker goes away, and comes back.
func (s *stack) ledgerDown(t *testing.T, fx *errorsFixture) {
	t.Parallel()
	dir := t.TempDir()
	broker, err := embeddedbroker.Start(embeddedbroker.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Closed after the stack (cleanups run last first), so that what its
	// writers still retry reaches the broker that came back.
	t.Cleanup(func() { broker.Close() })
	b := startStack(t, stackOptions{brokers: broker.Addrs(), databaseURL: s.deps.Config.DatabaseURL, noLedger: true,
		env: map[string]string{"ACTION_TIMEOUT": "1s", "INGEST_RATE_LIMIT": "1", "SECRETS_KEY": s.deps.Config.SecretsKey}})
	api, ingest := newChecker(t, b.apiURL), newChecker(t, b.ingestURL)
	// The platforms' secrets are sealed with this deployment's SECRETS_KEY:
	// its own tenants for the ingest.
	fixed := testenv.FixedCampaign(500, 30)
	busy := b.withEduzz(b.withHotmartKiwify(b.newTenant(fixed), ""), "")
	// One merchant per platform: at 1 delivery a second each, the
	// concurrent deliveries must not meet the ceiling.
	var down [5]*tenant
	var coupons [5]string
	for i := range down {
		down[i] = b.withEduzz(b.withHotmartKiwify(b.newTenant(fixed), ""), "")
		coupons[i] = b.newMember(down[i], "queda"+strconv.Itoa(i)+"@example.com", "Queda").CouponCode
	}
	key := fx.main.apiKey
	approve := probe{"POST", "/api/v1/referrals/" + fx.referrals["ce-late-approve"] + "/approve", []byte(`{"notes":"late"}`), keyed(key)}
	reject := probe{"POST", "/api/v1/referrals/" + fx.referrals["ce-late-reject"] + "/reject", []byte(`{"reason":"test_order"}`), keyed(key)}
	// A redemption reads its platform's settings first: a tenant of this
	// deployment, whose SECRETS_KEY opens them.
	redeemer := b.newTenant(fixed)
	bia := b.newMember(redeemer, "bia@example.com", "Bia")
	redeemAdmin := probe{"POST", "/api/v1/members/" + ids.Format(ids.Member, bia.ID) + "/redeem",
		[]byte(`{"amount":100,"type":"store_credit"}`), keyed(redeemer.apiKey)}
	redeemMember := probe{"POST", "/api/v1/wallet/redeem", jsonBody(map[string]any{"email": bia.Email, "amount": 100,
		"destination": "store_coupon"}), keyed(redeemer.apiKey)}

	// The ledger does not answer within ACTION_TIMEOUT.
	t.Run("ledger slow", func(t *testing.T) {
		for name, p := range map[string]probe{"approve": approve, "reject": reject} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				if st := api.expect(t, p, 202, "").data()["status"]; st != "pending" {
					t.Errorf("%s: referral status %v, want pending (as it stands)", name, st)
				}
			})
		}
		for name, p := range map[string]probe{"redeem admin": redeemAdmin, "redeem member": redeemMember} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				api.expect(t, p, 503, styled(p.path, "unavailable"))
			})
			// The same redemption twice at once with one Idempotency-Key:
			// the one that is not waiting for the ledger is 409.
			t.Run(name+" twice", func(t *testing.T) {
				t.Parallel()
				p := probe{p.method, p.path, p.body, keyed(redeemer.apiKey, "Idempotency-Key", "twice-"+name)}
				got := make(chan reply, 2)
				for range 2 {
					go func() { got <- api.send(t, p) }()
				}
				if r := <-got; r.status != 409 || r.code() != styled(p.path, "idempotency_key_in_use") {
					t.Errorf("%s: first answer %d %v, want 409 idempotency_key_in_use", name, r.status, r.body)
				}
				if r := <-got; r.status != 503 {
					t.Errorf("%s: second answer %d %v, want 503", name, r.status, r.body)
				}
			})
		}
		// The operator's ceiling: the second delivery of a second is 429.
		guru := guruSale(t, busy, "busy-1", "", 50, "approved")
		yampi := yampiOrder(t, yampiPaid, 660001, "", 50)
		path := func(p string) string { return "/api/webhooks/" + p + "/" + busy.merchant.ID.String() }
		ingest.expect(t, probe{"POST", path("guru"), guru, nil}, 200, "")
		hotmart := fixture(t, hotmartPaid, map[string]any{"data.purchase.transaction": "busy-h-1"})
		kiwify := fixture(t, kiwifyPaid, map[string]any{"order_id": "busy-k-1"})
		eduzz := fixture(t, eduzzPaid, map[string]any{"data.id": "busy-e-1"})
		for _, p := range []probe{
			{"POST", path("guru"), guru, nil},
			{"POST", path("yampi"), yampi, map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(busy.yampiSecret, yampi)}},
			{"POST", path("hotmart"), hotmart, hotmartHeader(busy.hottok)},
			{"POST", kiwifyPath(busy, kiwifySign(busy.kiwifyToken, kiwify)), kiwify, nil},
			{"POST", path("eduzz"), eduzz, eduzzHeader(eduzzSign(busy.eduzzSecret, eduzz))},
		} {
			if r := ingest.expect(t, p, 429, "rate_limited"); r.status == 429 && r.header.Get("Retry-After") == "" {
				t.Errorf("%s: 429 without Retry-After", p.path)
			}
		}
	})

	// The broker is gone: nothing can be published. The ingest answers 503
	// once its publisher gave up; the API within ACTION_TIMEOUT.
	broker.Close()
	t.Run("broker gone", func(t *testing.T) {
		t.Run("ingest", func(t *testing.T) {
			guru := guruSale(t, down[0], "down-1", coupons[0], 50, "approved")
			yampi := yampiOrder(t, yampiPaid, 660002, coupons[1], 50)
			hotmart := fixture(t, hotmartPaid, map[string]any{"data.purchase.transaction": "down-h-1",
				"data.purchase.offer.coupon_code": coupons[2]})
			kiwify := fixture(t, kiwifyPaid, map[string]any{"order_id": "down-k-1", "TrackingParameters.sck": coupons[3]})
			eduzz := fixture(t, eduzzPaid, map[string]any{"data.id": "down-e-1", "data.utm.content": coupons[4]})
			for name, p := range map[string]probe{
				"guru": {"POST", "/api/webhooks/guru/" + down[0].merchant.ID.String(), guru, nil},
				"yampi": {"POST", "/api/webhooks/yampi/" + down[1].merchant.ID.String(), yampi,
					map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(down[1].yampiSecret, yampi)}},
				"hotmart": {"POST", "/api/webhooks/hotmart/" + down[2].merchant.ID.String(), hotmart, hotmartHeader(down[2].hottok)},
				"kiwify":  {"POST", kiwifyPath(down[3], kiwifySign(down[3].kiwifyToken, kiwify)), kiwify, nil},
				"eduzz": {"POST", "/api/webhooks/eduzz/" + down[4].merchant.ID.String(), eduzz,
					eduzzHeader(eduzzSign(down[4].eduzzSecret, eduzz))},
			} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					start := time.Now()
					ingest.expect(t, p, 503, "unavailable")
					// Yampi gives up after 5 s; its retry needs our answer first.
					if took := time.Since(start); took >= 5*time.Second {
						t.Errorf("503 after %v, want it within Yampi's 5 s", took)
					}
				})
			}
		})
		t.Run("api", func(t *testing.T) {
			for name, p := range map[string]probe{"approve": approve, "reject": reject} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					api.expect(t, p, 503, "unavailable")
				})
			}
		})
	})
	// The broker comes back on its address with its data.
	port, _ := strconv.Atoi(broker.Addrs()[0][strings.LastIndex(broker.Addrs()[0], ":")+1:])
	if broker, err = embeddedbroker.Start(embeddedbroker.Config{DataDir: dir, Port: port}); err != nil {
		t.Fatal(err)
	}

	api.v.WantExercised(t, ex("approveReferral", 202), ex("rejectReferral", 202), ex("approveReferral", 503), ex("rejectReferral", 503),
		ex("redeemMember", 503), ex("redeemWallet", 503), ex("redeemMember", 409), ex("redeemWallet", 409))
	ingest.v.WantExercised(t, ex("receiveGuruWebhook", 429), ex("receiveYampiWebhook", 429),
		ex("receiveGuruWebhook", 503), ex("receiveYampiWebhook", 503), ex("receiveHotmartWebhook", 429),
		ex("receiveKiwifyWebhook", 429), ex("receiveHotmartWebhook", 503), ex("receiveKiwifyWebhook", 503),
		ex("receiveEduzzWebhook", 429), ex("receiveEduzzWebhook", 503))
}
