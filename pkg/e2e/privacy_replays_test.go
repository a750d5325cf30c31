package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/testenv"
)

// TestErasureForgetsKeptAnswers: the answers the API keeps for its
// idempotent replays that show an erased member (her creation, an update,
// through the member-facing API too) are gone from Redis once she is
// erased, through the API or the dashboard: a replay no longer shows her
// e-mail or name, the request runs anew. Another member's kept answers
// stay and replay.
func TestErasureForgetsKeptAnswers(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	c := newChecker(t, s.apiURL)
	keyedAs := func(key string) map[string]string { return keyed(tn.apiKey, "Idempotency-Key", key) }
	kept := func(key string) bool {
		n, err := s.deps.Redis.Exists(context.Background(), "idem:"+tn.merchant.ID.String()+":"+key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	// Lia through the API, Rui through the dashboard; Caio stays.
	people := map[string]string{}
	for _, p := range []struct{ key, email, name string }{
		{"lia", "Lia.Mota@Example.com", "Lia Mota"}, {"rui", "rui.alves@example.com", "Rui Alves"},
		{"caio", "caio@example.com", "Caio Dias"},
	} {
		r := c.expect(t, probe{"POST", "/api/v1/members", jsonBody(map[string]any{"email": p.email, "name": p.name}),
			keyedAs("create-" + p.key)}, 201, "")
		people[p.key] = r.data()["id"].(string)
		c.expect(t, probe{"PATCH", "/api/v1/members/" + people[p.key], []byte(`{"name":"` + p.name + ` Jr"}`),
			keyedAs("patch-" + p.key)}, 200, "")
	}
	for _, key := range []string{"create-lia", "patch-lia", "create-rui", "patch-rui", "create-caio", "patch-caio"} {
		if !kept(key) {
			t.Fatalf("no answer kept for %s: the test could not fail", key)
		}
	}

	c.expect(t, probe{"POST", "/api/v1/members/" + people["lia"] + "/erase", nil, keyed(tn.apiKey)}, 200, "")
	ownerEmail, ownerPassword := dashboardUser(t, s.deps.Pool, tn.merchant.ID, merchant.RoleOwner)
	owner := signedIn(t, s.apiURL, ownerEmail, ownerPassword)
	rui, _ := ids.Parse(ids.Member, people["rui"])
	if status, _ := owner.do(http.MethodPost, "/dashboard/members/"+rui.String()+"/erase", url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("erase Rui on the dashboard: %d", status)
	}

	for _, key := range []string{"create-lia", "patch-lia", "create-rui", "patch-rui"} {
		if kept(key) {
			t.Errorf("the answer of %s, which shows an erased member, is still kept", key)
		}
	}
	// A replay of the update runs anew: an erased member takes no name.
	r := c.expect(t, probe{"PATCH", "/api/v1/members/" + people["lia"], []byte(`{"name":"Lia Mota Jr"}`), keyedAs("patch-lia")},
		409, "invalid_state")
	if r.header.Get("Idempotent-Replayed") != "" || strings.Contains(strings.ToLower(jsonText(r.body)), "lia.mota@") {
		t.Errorf("the update of an erased member replayed: %v %v", r.header, r.body)
	}
	// Caio's answers stay and replay.
	r = c.expect(t, probe{"PATCH", "/api/v1/members/" + people["caio"], []byte(`{"name":"Caio Dias Jr"}`), keyedAs("patch-caio")}, 200, "")
	if r.header.Get("Idempotent-Replayed") != "true" || !kept("create-caio") {
		t.Errorf("another member's kept answers were forgotten: replayed %q, creation kept %v",
			r.header.Get("Idempotent-Replayed"), kept("create-caio"))
	}
}
