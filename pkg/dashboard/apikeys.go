package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
)

// Settings → API keys: generate (the key shown once, in the response to
// the form), list by prefix, revoke after a confirmation page.

type apiKeysData struct {
	Keys   []merchant.Key
	NewKey string // only in the response to "Generate new key"
}

type revokeData struct{ Key merchant.Key }

func (d *Dashboard) apiKeyRoutes() {
	d.page("GET "+Prefix+"/settings/api-keys", d.apiKeys)
	d.action("POST "+Prefix+"/settings/api-keys", d.generateKey)
	d.page("GET "+Prefix+"/settings/api-keys/{id}/revoke", d.confirmRevoke)
	d.action("POST "+Prefix+"/settings/api-keys/{id}/revoke", d.revokeKey)
}

func (d *Dashboard) apiKeys(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showKeys(w, r, c, "")
}

// generateKey answers with the page itself rather than a redirect: the
// new key exists in plain text only in this response (no-store, like
// every dashboard page), never in a log or a later page.
func (d *Dashboard) generateKey(w http.ResponseWriter, r *http.Request, c *Ctx) {
	plain, _, err := d.cfg.Stores.Merchants.CreateKey(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.showKeys(w, r, c, plain)
}

func (d *Dashboard) showKeys(w http.ResponseWriter, r *http.Request, c *Ctx, newKey string) {
	keys, err := d.cfg.Stores.Merchants.ListKeys(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.render(w, r, c, Page{Template: "api_keys", Title: "api_keys.title", Nav: "api_keys",
		Data: apiKeysData{Keys: keys, NewKey: newKey}})
}

// findKey returns the merchant's unrevoked key of the path's {id}; false
// (and a 404 written) for a bad id, another merchant's or a revoked key.
func (d *Dashboard) findKey(w http.ResponseWriter, r *http.Request, c *Ctx) (merchant.Key, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err == nil {
		keys, err := d.cfg.Stores.Merchants.ListKeys(r.Context(), c.MerchantID())
		if err != nil {
			d.fail(w, r, c, err)
			return merchant.Key{}, false
		}
		for _, k := range keys {
			if k.ID == id && k.RevokedAt.IsZero() {
				return k, true
			}
		}
	}
	d.notFound(w, r, c)
	return merchant.Key{}, false
}

func (d *Dashboard) confirmRevoke(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if k, ok := d.findKey(w, r, c); ok {
		d.render(w, r, c, Page{Template: "api_key_revoke", Title: "api_keys.revoke_title", Nav: "api_keys",
			Data: revokeData{Key: k}})
	}
}

func (d *Dashboard) revokeKey(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		d.notFound(w, r, c)
		return
	}
	if err := d.cfg.Stores.Merchants.RevokeKeyByID(r.Context(), c.MerchantID(), id); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "api_keys.revoked_flash")
	http.Redirect(w, r, Prefix+"/settings/api-keys", http.StatusSeeOther)
}
