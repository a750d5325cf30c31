package l10n

import (
	"net/http"

	"golang.org/x/text/language"
)

// The languages of the pages.
const (
	English    = "en"
	Portuguese = "pt-BR"
)

// Valid reports whether lang is one of the languages.
func Valid(lang string) bool { return lang == English || lang == Portuguese }

var matcher = language.NewMatcher([]language.Tag{language.English, language.BrazilianPortuguese})

// FromHeader picks English or Portuguese from r's Accept-Language (any
// Portuguese counts as Brazilian); fallback when it names neither.
func FromHeader(r *http.Request, fallback string) string {
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return fallback
	}
	_, i, conf := matcher.Match(tags...)
	switch {
	case conf == language.No:
		return fallback
	case i == 0:
		return English
	}
	return Portuguese
}
