package httpapi_test

import (
	"net/http"
	"testing"
)

// TestWebhookURLMustBePublic (issue 29): without
// WEBHOOK_ALLOW_PRIVATE_NETWORKS an endpoint whose URL names a loopback,
// private or link-local address, or a name of the local machine, is
// refused at registration and at a change of its URL, with the guard of a
// platform's api_url: 400 validation_error naming url. Nothing is stored.
func TestWebhookURLMustBePublic(t *testing.T) {
	t.Parallel()
	env := mustHookEnvWith(t, false)
	tn := env.mustTenant(t)
	ok := []string{"member.created"}
	const public = "https://erp.loja.example.com/hooks"
	r := tn.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": public, "events": ok})
	wantStatus(t, r, http.StatusCreated)
	id := str(t, r, "data.id")
	for _, u := range []string{"https://127.0.0.1/x", "https://localhost/x", "https://LOCALHOST.:8443/x", "https://10.0.0.1/hooks",
		"https://169.254.169.254/latest/meta-data", "https://[::1]:9/x", "https://[fd00::1]/x", "https://metadata/x"} {
		r := tn.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": u, "events": ok})
		wantError(t, r, http.StatusBadRequest, "validation_error", "url: the address is not public")
		r = tn.do(t, http.MethodPatch, "/v1/webhooks/"+id, map[string]any{"url": u})
		wantError(t, r, http.StatusBadRequest, "validation_error", "url: the address is not public")
	}
	r = tn.get(t, "/v1/webhooks")
	wantLen(t, r, "data", 1)
	wantFields(t, r, map[string]any{"data.0.url": public})
	env.v.WantExercised(t, ex("createWebhook", 201), ex("createWebhook", 400), ex("updateWebhook", 400))
}
