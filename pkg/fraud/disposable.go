package fraud

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
)

// The list of disposable e-mail domains, vendored unchanged from the npm
// package disposable-email-domains (see disposable/SOURCE.md).
//
//go:embed disposable/domains.json
var disposableJSON []byte

var disposableDomains = sync.OnceValue(func() map[string]struct{} {
	var list []string
	if err := json.Unmarshal(disposableJSON, &list); err != nil {
		panic("fraud: the embedded disposable domain list is not a JSON list: " + err.Error())
	}
	set := make(map[string]struct{}, len(list))
	for _, d := range list {
		set[strings.ToLower(strings.TrimSpace(d))] = struct{}{}
	}
	return set
})

// Disposable reports whether email's domain, or a domain it is a
// subdomain of, is on the list of disposable e-mail domains.
func Disposable(email string) bool {
	email = strings.ToLower(strings.TrimSpace(email))
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	set := disposableDomains()
	for d := strings.TrimSuffix(email[at+1:], "."); d != ""; {
		if _, ok := set[d]; ok {
			return true
		}
		dot := strings.IndexByte(d, '.')
		if dot < 0 {
			break
		}
		d = d[dot+1:]
	}
	return false
}

// Warm loads the disposable domain list now, so that the first sale
// checked does not pay for it.
func Warm() { disposableDomains() }
