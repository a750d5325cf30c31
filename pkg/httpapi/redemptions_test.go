package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/secretbox"
)

// commandLog is a ledger.commands publisher that keeps what it is given and
// refuses it, so that a redemption that reaches the ledger answers 503.
type commandLog struct {
	mu   sync.Mutex
	cmds []ledger.Command
}

func (c *commandLog) PublishCommands(_ context.Context, cmds []ledger.Command) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cmds = append(c.cmds, cmds...)
	return errors.New("the test's broker is down")
}

func (c *commandLog) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cmds)
}

// noOutcomes is an outcome store where no command was ever applied.
type noOutcomes struct{}

func (noOutcomes) FindOutcome(context.Context, uuid.UUID, string) (*ledger.Outcome, error) {
	return nil, nil
}

// TestRedeemUnconfiguredIntegration: a redemption whose platform lacks a
// setting it needs is refused 422 integration_not_configured on both
// interfaces before any ledger command, so the wallet and its transactions
// are unchanged; once the platform is configured, the same redemption goes
// to the ledger.
func TestRedeemUnconfiguredIntegration(t *testing.T) {
	t.Parallel()
	published := &commandLog{}
	env := mustEnvWith(t, envOptions{wire: func(*pgxpool.Pool, *secretbox.Box) httpapi.Config {
		return httpapi.Config{Actions: httpapi.ActionsConfig{Commands: published, Waiter: &ledger.Waiter{Store: noOutcomes{}}}}
	}})
	// Guru as in the README: the webhook token only, no API user token.
	tn := env.mustTenantWith(t, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: "guru-account-token"})
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "percentage", "reward_value": 10})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "o1", 9790))
	tn.mustLedger(t, tn.release(t, ana, "o1"))

	q := "?email=ana@example.com"
	reads := []string{"/api/v1/wallet/balance" + q, "/api/v1/wallet/transactions" + q,
		"/api/v1/members/" + ana.prefID + "/transactions", "/api/v1/members/" + ana.prefID}
	before := map[string]string{}
	for _, p := range reads {
		r := tn.get(t, p)
		wantStatus(t, r, http.StatusOK)
		before[p] = string(r.raw)
	}

	member := func(destination, sub string) map[string]any {
		return map[string]any{"email": ana.email, "amount": 500, "destination": destination, "subscriptionId": sub}
	}
	admin := func(typ, sub string) map[string]any {
		return map[string]any{"amount": 500, "type": typ, "subscription_id": sub}
	}
	memberPath, adminPath := "/api/v1/wallet/redeem", "/api/v1/members/"+ana.prefID+"/redeem"
	for _, c := range []struct {
		name, path string
		body       map[string]any
		code       string
		mentions   string
	}{
		{"member-facing store coupon, no yampi settings", memberPath, member("store_coupon", ""), "INTEGRATION_NOT_CONFIGURED", "yampi"},
		{"admin store credit, no yampi settings", adminPath, admin("store_credit", ""), "integration_not_configured", "yampi"},
		{"member-facing subscription, guru without user token", memberPath, member("billing_subscription", "sub_1"), "INTEGRATION_NOT_CONFIGURED", "guru"},
		{"admin subscription discount, guru without user token", adminPath, admin("subscription_discount", "sub_1"), "integration_not_configured", "user token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, tn.do(t, http.MethodPost, c.path, c.body), http.StatusUnprocessableEntity, c.code, c.mentions)
		})
	}

	// Yampi with its credentials but no store alias: still not enough.
	r := tn.do(t, http.MethodPut, "/api/v1/integrations/yampi", map[string]any{"user_token": "yt-0123", "user_secret_key": "ys-0123"})
	wantStatus(t, r, http.StatusOK)
	wantError(t, tn.do(t, http.MethodPost, memberPath, member("store_coupon", "")), http.StatusUnprocessableEntity,
		"INTEGRATION_NOT_CONFIGURED", "store alias")

	if n := published.len(); n != 0 {
		t.Fatalf("%d ledger commands published for redemptions that cannot run, want none", n)
	}
	for _, p := range reads {
		if r := tn.get(t, p); string(r.raw) != before[p] {
			t.Errorf("GET %s changed:\n was %s\n now %s", p, before[p], r.raw)
		}
	}

	// Configured: the redemption goes to the ledger (whose broker is down
	// in this test: 503). The credentials come again with the store alias,
	// which would drop them otherwise.
	wantStatus(t, tn.do(t, http.MethodPut, "/api/v1/integrations/yampi",
		map[string]any{"store_alias": "loja", "user_token": "yt-0123", "user_secret_key": "ys-0123"}), http.StatusOK)
	res, _ := env.try(request{method: http.MethodPost, path: adminPath, body: admin("store_credit", ""),
		header: map[string]string{"X-API-Key": tn.key}})
	if res.status != http.StatusServiceUnavailable || published.len() != 1 {
		t.Errorf("configured redemption: %s, %d commands published; want 503 and 1", res, published.len())
	}
}
