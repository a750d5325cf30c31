package dashboard

import (
	"embed"
	"net/http"

	"github.com/convida/convida/pkg/l10n"
)

// The dashboard's languages.
const (
	English    = l10n.English
	Portuguese = l10n.Portuguese
)

// requestLang is the language chosen with the switch (its cookie,
// language.go), or else Accept-Language's.
func requestLang(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil && (c.Value == English || c.Value == Portuguese) {
		return c.Value
	}
	return langFromHeader(r)
}

// langFromHeader picks English or Portuguese from Accept-Language (any
// Portuguese counts as Brazilian); English when it names neither.
func langFromHeader(r *http.Request) string { return l10n.FromHeader(r, English) }

// localeFS holds every text of every page, one file per language
// (locales/<lang>.json). Keys are "<page>.<what>"; a page adds its keys to
// both files (TestCatalogueComplete).
//
//go:embed locales/*.json
var localeFS embed.FS

// texts is read once from the embedded files: a file that does not parse
// is a build defect, which every test of the package reports.
var texts = l10n.MustLoad(localeFS, "locales")

// translate returns key's text in lang, else in English, else the key
// itself (a missing text shows, and TestCatalogueComplete fails).
func translate(lang, key string) string { return texts.Text(lang, key) }

// plural returns key's form for n in lang, chosen by CLDR's plural rules.
func plural(lang, key string, n int) string { return texts.Plural(lang, key, n) }

// hasText reports whether the catalogue has key (in English, which every
// key has: TestCatalogueComplete).
func hasText(key string) bool { return texts.Has(key) }
