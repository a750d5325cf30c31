package dashboard

import (
	"net/http"

	"golang.org/x/text/language"
)

// The dashboard's languages.
const (
	English    = "en"
	Portuguese = "pt-BR"
)

var languageMatcher = language.NewMatcher([]language.Tag{language.English, language.BrazilianPortuguese})

// lang is the session's chosen language, or else Accept-Language's.
func (d *Dashboard) lang(r *http.Request) string {
	if l := d.sessions.GetString(r.Context(), sessionLang); l == English || l == Portuguese {
		return l
	}
	return langFromHeader(r)
}

// langFromHeader picks English or Portuguese from Accept-Language (any
// Portuguese counts as Brazilian); English when it names neither.
func langFromHeader(r *http.Request) string {
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return English
	}
	_, i, conf := languageMatcher.Match(tags...)
	if conf == language.No || i == 0 {
		return English
	}
	return Portuguese
}

// translate returns key's text in lang, else in English, else the key
// itself (a missing text shows, and TestCatalogueComplete fails).
func translate(lang, key string) string {
	if s, ok := catalogue[lang][key]; ok {
		return s
	}
	if s, ok := catalogue[English][key]; ok {
		return s
	}
	return key
}

// catalogue holds every text of every page, per language. Keys are
// "<page>.<what>"; a phase-2 page adds its keys to both maps.
var catalogue = map[string]map[string]string{
	English: {
		"app.name":         "Convida",
		"app.copy":         "Copy",
		"nav.label":        "Main",
		"nav.overview":     "Overview",
		"nav.members":      "Members",
		"nav.referrals":    "Referrals",
		"nav.campaigns":    "Campaigns",
		"nav.creators":     "Creators",
		"nav.redemptions":  "Redemptions",
		"nav.integrations": "Integrations",
		"nav.webhooks":     "Webhooks",
		"nav.api_keys":     "API keys",
		"nav.sign_out":     "Sign out",
		"lang.switch":      "Português",
		"lang.switch_to":   Portuguese,
		"lang.label":       "Language",

		"settings.label":    "Settings",
		"settings.api_keys": "API keys",
		"settings.users":    "Users",
		"settings.password": "Password",

		"sign_in.title":     "Sign in",
		"sign_in.email":     "Email",
		"sign_in.password":  "Password",
		"sign_in.submit":    "Sign in",
		"sign_in.invalid":   "Invalid email or password",
		"sign_in.throttled": "Too many failed sign-in attempts. Wait 15 minutes and try again.",

		"password.title":     "Change password",
		"password.current":   "Current password",
		"password.new":       "New password",
		"password.submit":    "Change password",
		"password.changed":   "Your password was changed.",
		"password.wrong":     "The current password is wrong.",
		"password.too_short": "The new password must have at least 10 characters.",

		"api_keys.title":         "API keys",
		"api_keys.intro":         "Your systems call the Convida API with these keys, in the X-API-Key header.",
		"api_keys.generate":      "Generate new key",
		"api_keys.new":           "Your new key. Copy it now: it is shown only this once.",
		"api_keys.prefix":        "Key",
		"api_keys.created":       "Created",
		"api_keys.last_used":     "Last used",
		"api_keys.status":        "Status",
		"api_keys.active":        "Active",
		"api_keys.revoked":       "Revoked",
		"api_keys.never":         "Never",
		"api_keys.none":          "No keys yet.",
		"api_keys.revoke":        "Revoke",
		"api_keys.revoke_title":  "Revoke API key",
		"api_keys.revoke_warn":   "Systems using this key stop being able to call the API within a few seconds. This cannot be undone.",
		"api_keys.revoke_yes":    "Yes, revoke",
		"api_keys.revoke_cancel": "Cancel",
		"api_keys.revoked_flash": "The key was revoked.",

		"users.title":     "Users",
		"users.email":     "Email",
		"users.role":      "Role",
		"users.created":   "Added",
		"users.invite":    "Invite user",
		"users.send":      "Send invite",
		"users.invited":   "Invitation created. The one-time link was written to the server log.",
		"users.exists":    "That email already has a user.",
		"users.bad_email": "Enter a valid email.",
		"role.owner":      "Owner",
		"role.viewer":     "Viewer",
		"invite.title":    "Accept invitation",
		"invite.intro":    "Choose a password to sign in to the dashboard.",
		"invite.password": "Password",
		"invite.submit":   "Accept invitation",
		"invite.invalid":  "This invitation link is invalid, already used or expired.",

		"soon.title":         "Coming soon",
		"soon.body":          "This page is coming soon.",
		"title.overview":     "Overview",
		"title.members":      "Members",
		"title.referrals":    "Referrals",
		"title.campaigns":    "Campaigns",
		"title.creators":     "Creators",
		"title.redemptions":  "Redemptions",
		"title.integrations": "Integrations",
		"title.webhooks":     "Webhooks",

		"pagination.label": "Pagination",
		"pagination.prev":  "Previous",
		"pagination.next":  "Next",
		"pagination.page":  "Page",
		"pagination.of":    "of",
		"tabs.label":       "Status",
		"csv.export":       "Export CSV",

		"error.title":             "Something went wrong",
		"error.internal":          "Something went wrong on our side. Try again in a moment.",
		"error.not_found.title":   "Not found",
		"error.not_found":         "This page does not exist, or it is not yours.",
		"error.forbidden.title":   "Not allowed",
		"error.forbidden.viewer":  "Your role (viewer) can see but not change anything. Ask an owner.",
		"error.forbidden.origin":  "This request came from another site and was refused.",
		"error.bad_request.title": "Invalid request",
		"error.back":              "Back to the overview",
	},
	Portuguese: {
		"app.name":         "Convida",
		"app.copy":         "Copiar",
		"nav.label":        "Principal",
		"nav.overview":     "Visão geral",
		"nav.members":      "Membros",
		"nav.referrals":    "Indicações",
		"nav.campaigns":    "Campanhas",
		"nav.creators":     "Criadores",
		"nav.redemptions":  "Resgates",
		"nav.integrations": "Integrações",
		"nav.webhooks":     "Webhooks",
		"nav.api_keys":     "Chaves de API",
		"nav.sign_out":     "Sair",
		"lang.switch":      "English",
		"lang.switch_to":   English,
		"lang.label":       "Idioma",

		"settings.label":    "Configurações",
		"settings.api_keys": "Chaves de API",
		"settings.users":    "Usuários",
		"settings.password": "Senha",

		"sign_in.title":     "Entrar",
		"sign_in.email":     "E-mail",
		"sign_in.password":  "Senha",
		"sign_in.submit":    "Entrar",
		"sign_in.invalid":   "E-mail ou senha inválidos",
		"sign_in.throttled": "Muitas tentativas de entrada falharam. Aguarde 15 minutos e tente de novo.",

		"password.title":     "Alterar senha",
		"password.current":   "Senha atual",
		"password.new":       "Nova senha",
		"password.submit":    "Alterar senha",
		"password.changed":   "Sua senha foi alterada.",
		"password.wrong":     "A senha atual está errada.",
		"password.too_short": "A nova senha precisa ter pelo menos 10 caracteres.",

		"api_keys.title":         "Chaves de API",
		"api_keys.intro":         "Seus sistemas chamam a API do Convida com estas chaves, no cabeçalho X-API-Key.",
		"api_keys.generate":      "Gerar nova chave",
		"api_keys.new":           "Sua nova chave. Copie agora: ela só é mostrada esta vez.",
		"api_keys.prefix":        "Chave",
		"api_keys.created":       "Criada em",
		"api_keys.last_used":     "Último uso",
		"api_keys.status":        "Situação",
		"api_keys.active":        "Ativa",
		"api_keys.revoked":       "Revogada",
		"api_keys.never":         "Nunca",
		"api_keys.none":          "Nenhuma chave ainda.",
		"api_keys.revoke":        "Revogar",
		"api_keys.revoke_title":  "Revogar chave de API",
		"api_keys.revoke_warn":   "Os sistemas que usam esta chave deixam de conseguir chamar a API em poucos segundos. Não há como desfazer.",
		"api_keys.revoke_yes":    "Sim, revogar",
		"api_keys.revoke_cancel": "Cancelar",
		"api_keys.revoked_flash": "A chave foi revogada.",

		"users.title":     "Usuários",
		"users.email":     "E-mail",
		"users.role":      "Papel",
		"users.created":   "Adicionado em",
		"users.invite":    "Convidar usuário",
		"users.send":      "Enviar convite",
		"users.invited":   "Convite criado. O link de uso único foi escrito no log do servidor.",
		"users.exists":    "Esse e-mail já tem um usuário.",
		"users.bad_email": "Informe um e-mail válido.",
		"role.owner":      "Proprietário",
		"role.viewer":     "Leitor",
		"invite.title":    "Aceitar convite",
		"invite.intro":    "Escolha uma senha para entrar no painel.",
		"invite.password": "Senha",
		"invite.submit":   "Aceitar convite",
		"invite.invalid":  "Este link de convite é inválido, já foi usado ou expirou.",

		"soon.title":         "Em breve",
		"soon.body":          "Esta página chega em breve.",
		"title.overview":     "Visão geral",
		"title.members":      "Membros",
		"title.referrals":    "Indicações",
		"title.campaigns":    "Campanhas",
		"title.creators":     "Criadores",
		"title.redemptions":  "Resgates",
		"title.integrations": "Integrações",
		"title.webhooks":     "Webhooks",

		"pagination.label": "Paginação",
		"pagination.prev":  "Anterior",
		"pagination.next":  "Próxima",
		"pagination.page":  "Página",
		"pagination.of":    "de",
		"tabs.label":       "Situação",
		"csv.export":       "Exportar CSV",

		"error.title":             "Algo deu errado",
		"error.internal":          "Algo deu errado do nosso lado. Tente de novo em instantes.",
		"error.not_found.title":   "Não encontrado",
		"error.not_found":         "Esta página não existe, ou não é sua.",
		"error.forbidden.title":   "Não permitido",
		"error.forbidden.viewer":  "Seu papel (leitor) pode ver, mas não alterar nada. Peça a um proprietário.",
		"error.forbidden.origin":  "Este pedido veio de outro site e foi recusado.",
		"error.bad_request.title": "Pedido inválido",
		"error.back":              "Voltar à visão geral",
	},
}
