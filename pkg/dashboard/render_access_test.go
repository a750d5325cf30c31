package dashboard

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
)

// accessPages are the render cases of the users' pages: the answer to
// "Send invite" with its link, a pending invitation, the removal's
// confirmation (and its refusal for the last owner), the password rule,
// the merchant chooser.
func accessPages(at time.Time, owner *merchant.DashboardUser) []renderCase {
	ana := merchant.DashboardUser{MerchantID: owner.MerchantID, ID: uuid.New(), Email: "ana@loja.example.com", Role: merchant.RoleViewer, CreatedAt: at}
	pending := merchant.Invite{ID: uuid.New(), Email: "bia@loja.example.com", Role: merchant.RoleOwner, ExpiresAt: at, CreatedAt: at}
	return []renderCase{
		{Page{Template: "users", Title: "users.title", Nav: "users", Data: usersData{Users: []merchant.DashboardUser{*owner, ana},
			Invites: []merchant.Invite{pending}, InviteLink: "https://convida.example.com/dashboard/invite/tok", InvitedEmail: "bia@loja.example.com"}}, true,
			map[string][]string{English: {`data-testid="invite-link" id="invite-link">https://convida.example.com/dashboard/invite/tok<`,
				`data-copy="invite-link" aria-label="Copy the invitation link"`, "shown only this once", "Pending invitations", "bia@loja.example.com",
				`aria-label="Cancel invitation for bia@loja.example.com"`, `aria-label="Role of ana@loja.example.com"`,
				`aria-label="Change role of ana@loja.example.com"`, `aria-label="Remove ana@loja.example.com"`,
				`value="viewer" selected>Viewer<`, "/dashboard/settings/users/" + ana.ID.String() + "/remove"},
				Portuguese: {"Convites pendentes", "Cancelar convite", "Alterar papel", "Remover", "aparece só esta vez"}}},
		{Page{Template: "users", Title: "users.title", Nav: "users", Status: http.StatusConflict, Data: usersData{Users: []merchant.DashboardUser{*owner},
			Alert: "users.last_owner"}}, true,
			map[string][]string{English: {`role="alert"`, "last owner, so it cannot be removed", "No pending invitations."},
				Portuguese: {"último proprietário", "Nenhum convite pendente."}}},
		{Page{Template: "user_remove", Title: "users.remove_title", Nav: "users", Data: removeData{User: ana}}, true,
			map[string][]string{English: {"Remove ana@loja.example.com", "Yes, remove", "every session of theirs ends"},
				Portuguese: {"Sim, remover", "todas as sessões dela terminam"}}},
		{Page{Template: "user_remove", Title: "users.remove_title", Nav: "users", Data: removeData{User: *owner, LastOwner: true}}, true,
			map[string][]string{English: {`role="alert"`, "last owner", "Back to the users"}, Portuguese: {"último proprietário", "Voltar aos usuários"}}},
		{Page{Template: "accept_invite", Title: "invite.title", Status: http.StatusUnprocessableEntity,
			Data: inviteData{Token: "tok", Email: "new@loja.example.com", Alert: "password.common"}}, false,
			map[string][]string{English: {`role="alert"`, "most common passwords", "At least 12 characters"},
				Portuguese: {"senhas mais comuns", "Pelo menos 12 caracteres"}}},
		{Page{Template: "accept_invite", Title: "invite.title", Status: http.StatusNotFound, Data: inviteData{Invalid: true}}, false,
			map[string][]string{English: {"invalid, already used, cancelled or expired"}, Portuguese: {"foi cancelado"}}},
		{Page{Template: "choose_merchant", Title: "choose_merchant.title", Data: chooserData{Choices: []merchantChoice{
			{MerchantID: owner.MerchantID, MerchantName: "Loja Demo", Role: merchant.RoleOwner},
			{MerchantID: ana.MerchantID, MerchantName: "Outra Loja", Role: merchant.RoleViewer}}}}, false,
			map[string][]string{English: {"<h1>Choose a store</h1>", "more than one store", `name="merchant" value="` + owner.MerchantID.String() + `">Loja Demo</button>`,
				">Outra Loja</button>", "Owner", "Viewer", `href="/dashboard/sign-in">Sign in with another email`},
				Portuguese: {"<h1>Escolha uma loja</h1>", "mais de uma loja", "Proprietário", "Entrar com outro e-mail"}}},
		{Page{Template: "password", Title: "password.title", Nav: "password", Status: http.StatusTooManyRequests, Data: passwordData{Alert: "password.throttled"}}, true,
			map[string][]string{English: {`role="alert"`, "Too many wrong passwords", "At least 12 characters"}, Portuguese: {"Muitas senhas erradas"}}},
		{Page{Template: "error", Title: "error.too_large.title", Status: http.StatusRequestEntityTooLarge, Data: errorData{Message: "error.too_large"}}, false,
			map[string][]string{English: {"Request too large", "more than 64 KiB"}, Portuguese: {"Pedido grande demais"}}},
		{Page{Template: "error", Title: "error.unsupported.title", Status: http.StatusUnsupportedMediaType, Data: errorData{Message: "error.unsupported"}}, false,
			map[string][]string{English: {"Unsupported form", "no file uploads"}, Portuguese: {"não recebe arquivos"}}},
	}
}
