package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

// trail reads a merchant's audit events for a test: every event written
// since the last call, oldest first.
type trail struct {
	t     *testing.T
	store *postgres.AuditStore
	m     uuid.UUID
	seen  int
	all   []audit.Event
}

func (tr *trail) since() []audit.Event {
	tr.t.Helper()
	list, total, err := tr.store.ListAuditEvents(context.Background(), tr.m, audit.Filter{Limit: 1000})
	if err != nil {
		tr.t.Fatal(err)
	}
	slices.Reverse(list)
	fresh := list[tr.seen:]
	tr.seen, tr.all = total, list
	return fresh
}

// want checks that exactly one event was written since the last call:
// action on target, with details, by the context's actor.
func (tr *trail) want(what, action string, target audit.Target, details map[string]any) audit.Event {
	tr.t.Helper()
	got := tr.since()
	if len(got) != 1 {
		tr.t.Fatalf("%s: %d events %+v, want one %s", what, len(got), got, action)
	}
	e := got[0]
	if e.Action != action || e.Target != target || e.Actor != auditor || e.IP != auditorIP {
		tr.t.Errorf("%s: event %+v, want %s on %+v by %+v from %s", what, e, action, target, auditor, auditorIP)
	}
	want, _ := json.Marshal(details)
	if details == nil {
		want = []byte("{}")
	}
	if have, _ := json.Marshal(e.Details); string(have) != string(want) {
		tr.t.Errorf("%s: details %s, want %s", what, have, want)
	}
	return e
}

// none checks that nothing was written since the last call.
func (tr *trail) none(what string) {
	tr.t.Helper()
	if got := tr.since(); len(got) != 0 {
		tr.t.Errorf("%s: wrote %+v, want no event", what, got)
	}
}

var (
	auditor   = audit.Actor{Type: audit.ActorDashboardUser, ID: "6f0d5b7e-0000-4000-8000-000000000001", Label: "ana@example.com"}
	auditorIP = "198.51.100.9"
)

// TestStoresWriteTheirAuditEvents: every store change of the trail writes
// exactly its event, in its transaction, by the actor of the context: a
// refused change or one that changes nothing writes none; an update names
// the fields it changed and never a value; an invitation's target is the
// user it becomes.
func TestStoresWriteTheirAuditEvents(t *testing.T) {
	t.Parallel()
	pool, box := testenv.MustPool(t), testenv.MustBox(t)
	m := testenv.MustMerchant(t, pool, box, merchant.Merchant{}).ID
	ctx := audit.WithActor(context.Background(), auditor, auditorIP)
	tr := &trail{t: t, store: postgres.NewAuditStore(pool), m: m}
	tr.since()

	// API keys.
	merchants := postgres.NewMerchantStore(pool, box)
	plain, k, err := merchants.CreateKey(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	keyTarget := audit.Target{Type: audit.TargetAPIKey, ID: k.ID.String()}
	tr.want("CreateKey", audit.APIKeyCreated, keyTarget, nil)
	if err := merchants.RevokeKeyByID(ctx, m, k.ID); err != nil {
		t.Fatal(err)
	}
	tr.want("RevokeKeyByID", audit.APIKeyRevoked, keyTarget, nil)
	if err := merchants.RevokeKeyByID(ctx, m, k.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("revoking again: %v, want not found", err)
	}
	tr.none("a refused revocation")
	second, k2, _ := merchants.CreateKey(ctx, m)
	tr.since()
	if n, err := merchants.RevokeKey(ctx, m, k2.Prefix); err != nil || n != 1 {
		t.Fatalf("RevokeKey = %d, %v", n, err)
	}
	tr.want("RevokeKey by prefix", audit.APIKeyRevoked, audit.Target{Type: audit.TargetAPIKey, ID: k2.ID.String()}, nil)

	// Integration settings: the fields changed, never their values.
	guru := audit.Target{Type: audit.TargetIntegration, ID: provider.Guru}
	secrets := merchant.Integration{Provider: provider.Guru, AccountToken: "acct-secret-7f3a", UserToken: "user-secret-9b2c"}
	if _, err := merchants.PutIntegration(ctx, m, secrets); err != nil {
		t.Fatal(err)
	}
	tr.want("PutIntegration", audit.IntegrationUpdated, guru, audit.Fields([]string{"account_token", "user_token"}))
	if _, err := merchants.PutIntegration(ctx, m, secrets); err != nil {
		t.Fatal(err)
	}
	tr.none("PutIntegration of the same values")
	if _, err := merchants.PutIntegration(ctx, m, merchant.Integration{Provider: provider.Guru, APIURL: "https://guru.example.com/api"}); err != nil {
		t.Fatal(err)
	}
	// A new API URL drops the user token it was given with.
	tr.want("PutIntegration of a new api_url", audit.IntegrationUpdated, guru, audit.Fields([]string{"user_token", "api_url"}))

	// Webhook endpoints.
	hooks := postgres.NewWebhookStore(pool, box)
	ep := &webhook.Endpoint{MerchantID: m, URL: "https://hooks.example.com/a?token=url-secret-1d4e", Events: []string{"referral.created"},
		IsActive: true, Secret: "whsec_endpoint-secret-5c6d"}
	if err := hooks.CreateWebhook(ctx, ep); err != nil {
		t.Fatal(err)
	}
	hook := audit.Target{Type: audit.TargetWebhookEndpoint, ID: ids.Format(ids.Webhook, ep.ID)}
	tr.want("CreateWebhook", audit.WebhookEndpointCreated, hook, nil)
	url := "https://hooks.example.com/b"
	if _, err := hooks.UpdateWebhook(ctx, m, ep.ID, webhook.Patch{URL: &url, Events: []string{"referral.created"}}); err != nil {
		t.Fatal(err)
	}
	tr.want("UpdateWebhook", audit.WebhookEndpointUpdated, hook, audit.Fields([]string{"url"}))
	if _, err := hooks.UpdateWebhook(ctx, m, ep.ID, webhook.Patch{URL: &url}); err != nil {
		t.Fatal(err)
	}
	tr.none("UpdateWebhook changing nothing")
	if _, err := hooks.RotateWebhookSecret(ctx, m, ep.ID, "whsec_rotated-secret-8e9f", time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	tr.want("RotateWebhookSecret", audit.WebhookEndpointSecretRotated, hook, nil)
	if err := hooks.DeleteWebhook(ctx, m, ep.ID); err != nil {
		t.Fatal(err)
	}
	tr.want("DeleteWebhook", audit.WebhookEndpointDeleted, hook, nil)
	if err := hooks.DeleteWebhook(ctx, m, ep.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("deleting again: %v", err)
	}
	tr.none("a refused deletion")

	// Dashboard users: the invitation's target is the user it becomes.
	users := postgres.NewDashboardUserStore(pool)
	token, hash := merchant.NewInviteToken()
	in := &merchant.Invite{MerchantID: m, Email: "bia@example.com", Role: merchant.RoleViewer, ExpiresAt: time.Now().Add(time.Hour)}
	if err := users.CreateInvite(ctx, in, hash); err != nil {
		t.Fatal(err)
	}
	bia := audit.Target{Type: audit.TargetDashboardUser, ID: in.ID.String()}
	tr.want("CreateInvite", audit.DashboardUserInvited, bia, map[string]any{"email": "bia@example.com", "role": "viewer"})
	_, dropHash := merchant.NewInviteToken()
	dropped := &merchant.Invite{MerchantID: m, Email: "caio@example.com", Role: merchant.RoleOwner, ExpiresAt: time.Now().Add(time.Hour)}
	if err := users.CreateInvite(ctx, dropped, dropHash); err != nil {
		t.Fatal(err)
	}
	tr.since()
	if err := users.CancelInvite(ctx, m, dropped.ID); err != nil {
		t.Fatal(err)
	}
	tr.want("CancelInvite", audit.DashboardUserInvitationCancelled, audit.Target{Type: audit.TargetDashboardUser, ID: dropped.ID.String()},
		map[string]any{"email": "caio@example.com", "role": "owner"})
	if err := users.CancelInvite(ctx, m, dropped.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("cancelling again: %v", err)
	}
	tr.none("a refused cancellation")
	u, err := users.AcceptInvite(ctx, hash, "$2a$10$hash", time.Now())
	if err != nil || u.ID != in.ID {
		t.Fatalf("AcceptInvite = %+v, %v; want the user of id %s, the invitation's", u, err, in.ID)
	}
	tr.none("AcceptInvite (the dashboard records the sign-in)")
	if err := users.SetRole(ctx, m, u.ID, merchant.RoleOwner); err != nil {
		t.Fatal(err)
	}
	tr.want("SetRole", audit.DashboardUserRoleChanged, bia, map[string]any{"email": "bia@example.com", "from": "viewer", "to": "owner"})
	if err := users.SetRole(ctx, m, u.ID, merchant.RoleOwner); err != nil {
		t.Fatal(err)
	}
	tr.none("SetRole to the same role")
	if _, err := users.SetPassword(ctx, m, u.ID, "$2a$10$other"); err != nil {
		t.Fatal(err)
	}
	tr.want("SetPassword", audit.PasswordChanged, bia, nil)
	// A failed sign-in is nobody's own action, whatever actor the
	// context carries: anonymous, from its address, the e-mail hashed.
	if err := users.RecordFailedSignIn(ctx, []merchant.DashboardUser{*u}, merchant.EmailDigest(" Bia@Example.com")); err != nil {
		t.Fatal(err)
	}
	if got := tr.since(); len(got) != 1 || got[0].Action != audit.SignInFailed || got[0].Actor != audit.Anonymous ||
		got[0].IP != auditorIP || got[0].Target != bia ||
		got[0].Details["email_sha256"] != "89696b9d92fb9cd3bd193784dba80d6bb25ed6752a45fa34f1c3fb6befeb3c94" {
		t.Errorf("RecordFailedSignIn wrote %+v, want one sign_in.failed by anonymous from %s on %+v with the e-mail's SHA-256",
			got, auditorIP, bia)
	}
	if err := users.RecordSignIn(ctx, u, map[string]any{"via": "invitation"}); err != nil {
		t.Fatal(err)
	}
	tr.want("RecordSignIn succeeded", audit.SignInSucceeded, bia, map[string]any{"via": "invitation"})
	if err := users.RemoveUser(ctx, m, u.ID); err != nil {
		t.Fatal(err)
	}
	tr.want("RemoveUser", audit.DashboardUserRemoved, bia, map[string]any{"email": "bia@example.com", "role": "owner"})

	// Campaigns and their tiers.
	campaigns := postgres.NewCampaignStore(pool)
	c := testenv.MustCampaign(t, pool, m, testenv.FixedCampaign(1000, 7))
	camp := audit.Target{Type: audit.TargetCampaign, ID: ids.Format(ids.Campaign, c.ID)}
	name, days := "Outro nome", 7
	if _, err := campaigns.UpdateCampaign(ctx, m, c.ID, campaign.Update{Name: &name, WarrantyDays: &days}); err != nil {
		t.Fatal(err)
	}
	tr.want("UpdateCampaign", audit.CampaignUpdated, camp, audit.Fields([]string{"name"}))
	if _, err := campaigns.UpdateCampaign(ctx, m, c.ID, campaign.Update{Name: &name}); err != nil {
		t.Fatal(err)
	}
	tr.none("UpdateCampaign changing nothing")
	tiers := postgres.NewCampaignTierStore(pool)
	list := creator.Tiers{{Name: "Bronze", MinSales: 0, CommissionBP: 500}, {Name: "Prata", MinSales: 10, CommissionBP: 800}}
	if err := tiers.ReplaceTiers(ctx, m, c.ID, list); err != nil {
		t.Fatal(err)
	}
	tr.want("ReplaceTiers", audit.CampaignUpdated, camp, audit.Fields([]string{"tiers"}))
	if err := tiers.ReplaceTiers(ctx, m, c.ID, list); err != nil {
		t.Fatal(err)
	}
	tr.none("ReplaceTiers with the same tiers")

	for _, e := range tr.all {
		raw, _ := json.Marshal(e)
		for _, secret := range []string{plain, second, "acct-secret-7f3a", "user-secret-9b2c", "url-secret-1d4e",
			"whsec_endpoint-secret-5c6d", "whsec_rotated-secret-8e9f", token, "$2a$10$"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("an event holds the secret %q: %s", secret, raw)
			}
		}
	}
}

// TestCampaignEventsDoNotDeadlockDefaultMoves: an update of the default
// campaign and a move of the default to another campaign, at once, both
// commit. The event's foreign key shares the merchant's row, which the
// move locks before the campaigns: the update shares it first too, or it
// would hold the default campaign's row while waiting for the merchant's.
func TestCampaignEventsDoNotDeadlockDefaultMoves(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	m := testenv.MustMerchant(t, pool, nil, merchant.Merchant{}).ID
	store := postgres.NewCampaignStore(pool)
	a := testenv.MustCampaign(t, pool, m, testenv.FixedCampaign(1000, 7)) // the default
	b := testenv.MustCampaign(t, pool, m, testenv.FixedCampaign(2000, 7))
	ctx := audit.WithActor(context.Background(), auditor, auditorIP)
	yes := true
	for i := range 30 {
		def, other := a, b
		if i%2 == 1 {
			def, other = b, a
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			name := "Nome " + strings.Repeat("x", i+1)
			_, errs[0] = store.UpdateCampaign(ctx, m, def.ID, campaign.Update{Name: &name})
		}()
		go func() {
			defer wg.Done()
			_, errs[1] = store.UpdateCampaign(ctx, m, other.ID, campaign.Update{IsDefault: &yes})
		}()
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
	}
}
