// Package l10n writes what the people Convida's pages are for read: reais
// and dates as each language writes them, the language a request asks for,
// and a catalogue of texts per language (go-i18n message files). The
// dashboard and the member's portal share it, so R$ 9,79 is written one
// way everywhere.
package l10n
