package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/testenv"
)

// TestAuditTrailOfPersonalData: a member's export, a creator token's
// rotation (through the API and the dashboard) and a creator profile's
// deletion each leave exactly their event, by the right actor, on the
// member, from the client's address; an export of no member leaves none;
// no creator token is in the trail, through the API or on the Activity
// page, which words the new actions.
func TestAuditTrailOfPersonalData(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true, env: map[string]string{"TRUSTED_PROXIES": "127.0.0.1"}})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	ana := s.newMember(tn, "ana.lima@example.com", "Ana Lima")
	anaID := ids.Format(ids.Member, ana.ID)
	ownerEmail, ownerPassword := dashboardUser(t, s.deps.Pool, tn.merchant.ID, merchant.RoleOwner)
	tr := &auditTrail{t: t, s: s, key: tn.apiKey}
	setup, _ := tr.list()
	tr.seen = len(setup)

	var keyID, ownerID string
	ctx := context.Background()
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM api_keys WHERE merchant_id = $1`, tn.merchant.ID).Scan(&keyID); err != nil {
		t.Fatal(err)
	}
	if err := s.deps.Pool.QueryRow(ctx, `SELECT id::text FROM dashboard_users WHERE email = $1`, ownerEmail).Scan(&ownerID); err != nil {
		t.Fatal(err)
	}
	byKey := actor(audit.ActorAPIKey, keyID, tn.apiKey[:8])
	byOwner := actor(audit.ActorDashboardUser, ownerID, ownerEmail)
	const apiIP, ownerIP = "203.0.113.11", "203.0.113.21"
	api := func(method, path string, body string, want int) map[string]any {
		t.Helper()
		var raw []byte
		if body != "" {
			raw = []byte(body)
		}
		res := do(t, method, s.apiURL+path, raw, map[string]string{"X-API-Key": tn.apiKey, "Content-Type": "application/json",
			"X-Forwarded-For": apiIP})
		if res.Status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.Status, res.Body, want)
		}
		var out map[string]any
		_ = json.Unmarshal(res.Body, &out)
		return out
	}
	onAna := target(audit.TargetMember, anaID)

	api(http.MethodGet, "/api/v1/members/"+anaID+"/export", "", http.StatusOK)
	tr.want("an export", auditEvent{Action: audit.MemberExported, Actor: byKey, Target: onAna, IP: apiIP})
	api(http.MethodGet, "/api/v1/members/mem_"+strings.Repeat("0", 32)+"/export", "", http.StatusNotFound)
	tr.want("an export of no member")

	created := api(http.MethodPut, "/api/v1/members/"+anaID+"/creator", `{"display_name":"Ana Fit","niche":"fitness"}`, http.StatusOK)
	tokens := []string{created["data"].(map[string]any)["token"].(string)}
	tr.want("a creator profile created") // not one of the trail's actions
	rotated := api(http.MethodPost, "/api/v1/members/"+anaID+"/creator/rotate-token", "", http.StatusOK)
	tokens = append(tokens, rotated["data"].(map[string]any)["token"].(string))
	tr.want("a token rotated by the key", auditEvent{Action: audit.CreatorTokenRotated, Actor: byKey, Target: onAna, IP: apiIP})

	owner := dashboardFrom(t, s.apiURL, ownerIP)
	if status, _ := owner.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}); status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", status)
	}
	tr.seen++ // the sign-in's own event
	if status, _ := owner.do(http.MethodPost, "/dashboard/creators/"+ana.ID.String()+"/rotate", url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("rotate on the dashboard: %d", status)
	}
	tr.want("a token rotated by the owner", auditEvent{Action: audit.CreatorTokenRotated, Actor: byOwner, Target: onAna, IP: ownerIP})
	current := api(http.MethodGet, "/api/v1/members/"+anaID+"/creator", "", http.StatusOK)
	tokens = append(tokens, current["data"].(map[string]any)["token"].(string))

	api(http.MethodDelete, "/api/v1/members/"+anaID+"/creator", "", http.StatusNoContent)
	tr.want("a profile deleted", auditEvent{Action: audit.CreatorDeleted, Actor: byKey, Target: onAna, IP: apiIP})
	api(http.MethodDelete, "/api/v1/members/"+anaID+"/creator", "", http.StatusNotFound)
	api(http.MethodPost, "/api/v1/members/"+anaID+"/creator/rotate-token", "", http.StatusNotFound)
	tr.want("a deletion and a rotation of no profile")

	// The actions by name, and no token anywhere in the trail.
	for _, action := range []string{audit.MemberExported, audit.CreatorTokenRotated, audit.CreatorDeleted} {
		list := api(http.MethodGet, "/api/v1/audit-events?action="+action, "", http.StatusOK)["data"].([]any)
		if want := map[string]int{audit.CreatorTokenRotated: 2}[action]; len(list) != max(want, 1) {
			t.Errorf("GET /audit-events?action=%s: %d events, want %d", action, len(list), max(want, 1))
		}
	}
	_, raw := tr.list()
	req, _ := http.NewRequest(http.MethodGet, s.apiURL+"/dashboard/settings/activity", nil)
	res, err := owner.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, words := range []string{"Member&#39;s data exported", "Creator token rotated", "Creator profile deleted"} {
		if res.StatusCode != http.StatusOK || !strings.Contains(string(html), words) {
			t.Errorf("the Activity page (%d) does not say %q", res.StatusCode, words)
		}
	}
	for _, token := range tokens {
		if strings.Contains(raw, token) || strings.Contains(string(html), token) {
			t.Errorf("the trail shows the creator token %q", token)
		}
	}
}
