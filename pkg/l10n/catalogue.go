package l10n

import (
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// Catalogue is a set of message files, one per language
// (<dir>/<lang>.json), as go-i18n reads them. A page shows dozens of
// texts, so the texts are also kept in plain maps, one lookup each; only a
// text whose words depend on a number goes through the Localizer, which
// applies CLDR's plural rules of the language.
type Catalogue struct {
	texts      map[string]map[string]string // lang → key → text (a plural's "other" form)
	localizers map[string]*i18n.Localizer
}

// Load reads dir/en.json and dir/pt-BR.json from fsys.
func Load(fsys fs.FS, dir string) (*Catalogue, error) {
	bundle := i18n.NewBundle(language.English)
	bundle.RegisterUnmarshalFunc("json", json.Unmarshal)
	c := &Catalogue{texts: map[string]map[string]string{}, localizers: map[string]*i18n.Localizer{}}
	for _, lang := range []string{English, Portuguese} {
		f, err := bundle.LoadMessageFileFS(fsys, dir+"/"+lang+".json")
		if err != nil {
			return nil, fmt.Errorf("l10n: %s/%s.json: %w", dir, lang, err)
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

// MustLoad is Load for embedded files, whose failure is a build defect.
func MustLoad(fsys fs.FS, dir string) *Catalogue {
	c, err := Load(fsys, dir)
	if err != nil {
		panic(err)
	}
	return c
}

// Text returns key's text in lang, else in English, else the key itself
// (a missing text shows, and a completeness test fails).
func (c *Catalogue) Text(lang, key string) string {
	if s, ok := c.texts[lang][key]; ok {
		return s
	}
	if s, ok := c.texts[English][key]; ok {
		return s
	}
	return key
}

// Plural returns key's form for n in lang, chosen by CLDR's plural rules
// (English: "one" for 1 only; Portuguese: "one" for 0 and 1); a key
// without that form falls back as Text does.
func (c *Catalogue) Plural(lang, key string, n int) string {
	loc, ok := c.localizers[lang]
	if !ok {
		return c.Text(lang, key)
	}
	s, err := loc.Localize(&i18n.LocalizeConfig{MessageID: key, PluralCount: n})
	if err != nil {
		return c.Text(lang, key)
	}
	return s
}

// Has reports whether the catalogue has key in English.
func (c *Catalogue) Has(key string) bool {
	_, ok := c.texts[English][key]
	return ok
}

// Texts returns lang's texts by key, not to be changed (completeness
// tests compare the languages').
func (c *Catalogue) Texts(lang string) map[string]string { return c.texts[lang] }

// CheckPlural reports whether key has a form for n in lang.
func (c *Catalogue) CheckPlural(lang, key string, n int) error {
	_, err := c.localizers[lang].Localize(&i18n.LocalizeConfig{MessageID: key, PluralCount: n})
	return err
}
