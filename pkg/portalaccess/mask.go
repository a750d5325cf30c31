package portalaccess

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaskName shows a buyer to the member who referred her as her first name
// and the initial of her last ("Maria S."); "" stays "".
func MaskName(name string) string {
	parts := strings.Fields(name)
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	last, _ := utf8.DecodeRuneInString(parts[len(parts)-1])
	return parts[0] + " " + string(unicode.ToUpper(last)) + "."
}

// MaskEmail shows a buyer's e-mail as its first letter and its domain
// ("b***@example.com"); anything that is not an address is "".
func MaskEmail(email string) string {
	local, domain, ok := strings.Cut(strings.TrimSpace(email), "@")
	if !ok || local == "" || domain == "" {
		return ""
	}
	first, _ := utf8.DecodeRuneInString(local)
	return string(first) + "***@" + domain
}
