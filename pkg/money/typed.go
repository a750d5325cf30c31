package money

import "strings"

// ParseTypedReais parses reais as a person types them in a form, in
// either language's notation, into cents: "15", "15,00", "15.00",
// "R$ 1.234,56" and "1,234.56" (the last separator is the decimal one
// when both appear; a comma alone is decimal). The rest is ParseReais's:
// decimal text, never a float.
func ParseTypedReais(s string) (int64, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "R$"))
	dot, comma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	switch {
	case comma > dot: // "1.234,56", "15,00"
		s = strings.ReplaceAll(s[:comma], ".", "") + "." + s[comma+1:]
	case dot > comma && comma >= 0: // "1,234.56"
		s = strings.ReplaceAll(s[:dot], ",", "") + s[dot:]
	}
	return ParseReais(s)
}
