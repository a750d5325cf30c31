package dashboard

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// The dashboard's languages.
const (
	English    = "en"
	Portuguese = "pt-BR"
)

var languageMatcher = language.NewMatcher([]language.Tag{language.English, language.BrazilianPortuguese})

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

// localeFS holds every text of every page, one file per language
// (locales/<lang>.json). Keys are "<page>.<what>"; a page adds its keys to
// both files (TestCatalogueComplete).
//
//go:embed locales/*.json
var localeFS embed.FS

// catalogue is the message files as go-i18n reads them. A page shows dozens
// of texts, so the texts are also kept in plain maps, one lookup each;
// only a text whose words depend on a number goes through the Localizer,
// which applies CLDR's plural rules of the language.
type catalogue struct {
	texts      map[string]map[string]string // lang → key → text (a plural's "other" form)
	localizers map[string]*i18n.Localizer
}

// texts is read once from the embedded files: a file that does not parse
// is a build defect, which every test of the package reports.
var texts = mustLoadCatalogue()

func mustLoadCatalogue() *catalogue {
	c, err := loadCatalogue()
	if err != nil {
		panic(err)
	}
	return c
}

func loadCatalogue() (*catalogue, error) {
	bundle := i18n.NewBundle(language.English)
	bundle.RegisterUnmarshalFunc("json", json.Unmarshal)
	c := &catalogue{texts: map[string]map[string]string{}, localizers: map[string]*i18n.Localizer{}}
	for _, lang := range []string{English, Portuguese} {
		f, err := bundle.LoadMessageFileFS(localeFS, "locales/"+lang+".json")
		if err != nil {
			return nil, fmt.Errorf("dashboard: locales/%s.json: %w", lang, err)
		}
		m := make(map[string]string, len(f.Messages))
		for _, msg := range f.Messages {
			m[msg.ID] = msg.Other
		}
		c.texts[lang] = m
		c.localizers[lang] = i18n.NewLocalizer(bundle, lang, English)
	}
	return c, nil
}

// translate returns key's text in lang, else in English, else the key
// itself (a missing text shows, and TestCatalogueComplete fails).
func translate(lang, key string) string {
	if s, ok := texts.texts[lang][key]; ok {
		return s
	}
	if s, ok := texts.texts[English][key]; ok {
		return s
	}
	return key
}

// plural returns key's form for n in lang, chosen by CLDR's plural rules
// (English: "one" for 1 only; Portuguese: "one" for 0 and 1); a key
// without that form falls back as translate does.
func plural(lang, key string, n int) string {
	s, err := texts.localizers[lang].Localize(&i18n.LocalizeConfig{MessageID: key, PluralCount: n})
	if err != nil {
		return translate(lang, key)
	}
	return s
}

// hasText reports whether the catalogue has key (in English, which every
// key has: TestCatalogueComplete).
func hasText(key string) bool {
	_, ok := texts.texts[English][key]
	return ok
}
