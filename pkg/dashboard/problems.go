package dashboard

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/convida/convida/pkg/apperr"
)

// moneyFields are the inputs whose limit is in cents, shown as reais.
var moneyFields = map[string]bool{"reward_value": true, "min_redemption": true, "max_reward_per_month": true,
	"referee_discount_value": true}

// indexRe finds a list index in a field's API name ("tiers[2].name").
var indexRe = regexp.MustCompile(`\[(\d+)\]`)

// problem words err for the reader in lang, never with the API's English
// message: a refused input (apperr.ViolationOf) by its rule and field,
// "problem.<rule>.<field>" or else the rule's generic
// "problem.<rule>" naming the field's label; another error by its code
// ("problem.code.<code>"), or "" when its page's alert says it all.
func problem(lang string, err error) string {
	v, ok := apperr.ViolationOf(err)
	if !ok {
		if key := "problem.code." + string(apperr.CodeOf(err)); hasText(key) {
			return translate(lang, key)
		}
		return ""
	}
	field, row := v.Field, 0
	if m := indexRe.FindStringSubmatch(field); m != nil {
		row, _ = strconv.Atoi(m[1])
		row++ // people count rows from 1
		field = indexRe.ReplaceAllString(field, "")
	}
	key := "problem." + string(v.Rule) + "." + field
	if !hasText(key) {
		key = "problem." + string(v.Rule)
	}
	if !hasText(key) {
		key = "problem.code." + string(apperr.Invalid)
	}
	limit := FormatCount(lang, v.Limit)
	if moneyFields[field] {
		limit = Money(lang, v.Limit)
	}
	return strings.NewReplacer("{field}", fieldLabel(lang, field, row), "{limit}", limit).Replace(translate(lang, key))
}

// fieldLabel is the label of the field (its API name without indexes),
// with its row when it is in a list; a field with no label is "this
// field", never its API name.
func fieldLabel(lang, field string, row int) string {
	label := translate(lang, "problem.this_field")
	if hasText("field." + field) {
		label = translate(lang, "field."+field)
	}
	if row > 0 {
		label += " (" + translate(lang, "field.row") + " " + strconv.Itoa(row) + ")"
	}
	return label
}

// isField reports whether err refuses the input named field.
func isField(err error, field string) bool {
	v, ok := apperr.ViolationOf(err)
	return ok && v.Field == field
}
