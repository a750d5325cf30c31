package dashboard

import (
	"testing"
	"time"

	"github.com/convida/convida/pkg/audit"
)

// activityPages are the render cases of the Activity page: a row of each
// kind of actor, the filter with its choice kept, the empty trail.
func activityPages(at time.Time) []renderCase {
	rows := []activityRow{
		{At: at, Action: "User role changed", Actor: "ana@loja.example.com", Target: "User bia@loja.example.com",
			Details: "Viewer → Owner", Address: "203.0.113.7"},
		{At: at, Action: "API key created", Actor: "System (cli)", Target: "API key 0b5c3e9e"},
	}
	return []renderCase{
		{Page{Template: "activity", Title: "activity.title", Nav: "activity", Data: activityData{Rows: rows, Actions: audit.Actions,
			Action: audit.DashboardUserRoleChanged, Pagination: Pagination{Page: 1, PerPage: 50, Total: 2}}}, true,
			map[string][]string{English: {"<h1>Activity</h1>", `<label for="activity-action">Action</label>`, `<option value="">All actions</option>`,
				`<option value="dashboard_user.role_changed" selected>User role changed</option>`, ">Filter<", `<th scope="col">Address</th>`,
				"<td>Viewer → Owner</td>", "<td>203.0.113.7</td>", "<td>System (cli)</td>", "11/25/2026 2:03 PM",
				`href="/dashboard/settings/activity" aria-current="page">Activity<`},
				Portuguese: {"<h1>Atividade</h1>", "Todas as ações", ">Filtrar<", "Endereço", "25/11/2026 14:03"}}},
		{Page{Template: "activity", Title: "activity.title", Nav: "activity", Data: activityData{Actions: audit.Actions,
			Pagination: Pagination{Page: 1, PerPage: 50}}}, true,
			map[string][]string{English: {"No activity yet."}, Portuguese: {"Nenhuma atividade ainda."}}},
	}
}

// TestActivityRowWords: an event is worded by its actor's kind, its
// target (a user by the e-mail the event names, or by the actor's when
// the user acted on themselves) and its details, in the page's language.
func TestActivityRowWords(t *testing.T) {
	t.Parallel()
	user := audit.Actor{Type: audit.ActorDashboardUser, ID: "u1", Label: "ana@loja.example.com"}
	for _, tc := range []struct {
		lang string
		e    audit.Event
		want activityRow
	}{
		{English, audit.Event{Action: audit.DashboardUserRoleChanged, Actor: user, IP: "203.0.113.7",
			Target:  audit.Target{Type: audit.TargetDashboardUser, ID: "u2"},
			Details: map[string]any{"from": "viewer", "to": "owner", "email": "bia@loja.example.com"}},
			activityRow{Action: "User role changed", Actor: "ana@loja.example.com", Target: "User bia@loja.example.com",
				Details: "Viewer → Owner", Address: "203.0.113.7"}},
		{Portuguese, audit.Event{Action: audit.SignInFailed, Actor: user, Target: audit.Target{Type: audit.TargetDashboardUser, ID: "u1"}},
			activityRow{Action: "Falha de login", Actor: "ana@loja.example.com", Target: "Usuário ana@loja.example.com"}},
		{English, audit.Event{Action: audit.IntegrationUpdated, Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "k", Label: "0b5c3e9e"},
			Target: audit.Target{Type: audit.TargetIntegration, ID: "guru"}, Details: map[string]any{"fields": []any{"account_token", "api_url"}}},
			activityRow{Action: "Integration changed", Actor: "API key 0b5c3e9e", Target: "Integration guru", Details: "Fields: account_token, api_url"}},
		{English, audit.Event{Action: audit.DashboardUserInvited, Actor: user, Target: audit.Target{Type: audit.TargetDashboardUser, ID: "u3"},
			Details: map[string]any{"email": "caio@loja.example.com", "role": "viewer"}},
			activityRow{Action: "User invited", Actor: "ana@loja.example.com", Target: "User caio@loja.example.com", Details: "Role: Viewer"}},
		{Portuguese, audit.Event{Action: audit.APIKeyRevoked, Actor: audit.Actor{Type: audit.ActorSystem, Label: "cli"},
			Target: audit.Target{Type: audit.TargetAPIKey, ID: "k1"}},
			activityRow{Action: "Chave de API revogada", Actor: "Sistema (cli)", Target: "Chave de API k1"}},
		// A failed sign-in: nobody signed in, the merchant's user tried
		// named by the merchant's own list, the e-mail typed by its digest.
		{English, audit.Event{Action: audit.SignInFailed, Actor: audit.Anonymous, IP: "198.51.100.4",
			Target: audit.Target{Type: audit.TargetDashboardUser, ID: "u4"}, Details: map[string]any{"email_sha256": "5e1f"}},
			activityRow{Action: "Sign-in failed", Actor: "Not signed in", Target: "User dani@loja.example.com",
				Details: "Email tried (SHA-256): 5e1f", Address: "198.51.100.4"}},
		{Portuguese, audit.Event{Action: audit.SignInFailed, Actor: audit.Anonymous,
			Target: audit.Target{Type: audit.TargetDashboardUser, ID: "gone"}, Details: map[string]any{"email_sha256": "5e1f"}},
			activityRow{Action: "Falha de login", Actor: "Sem login", Target: "Usuário gone", Details: "E-mail tentado (SHA-256): 5e1f"}},
		{Portuguese, audit.Event{Action: audit.DashboardUserInvitationCancelled, Actor: user,
			Target:  audit.Target{Type: audit.TargetDashboardUser, ID: "u5"},
			Details: map[string]any{"email": "edu@loja.example.com", "role": "owner"}},
			activityRow{Action: "Convite cancelado", Actor: "ana@loja.example.com", Target: "Usuário edu@loja.example.com",
				Details: "Papel: Proprietário"}},
	} {
		if got := activityRowOf(tc.lang, tc.e, map[string]string{"u4": "dani@loja.example.com"}); got != tc.want {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.lang, tc.e.Action, got, tc.want)
		}
	}
}
