package dashboard

import (
	"errors"
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	tiers := creator.Tiers{{Name: "Bronze"}, {Name: "Prata", MinSales: 5}, {Name: "Ouro", MinSales: 5}}
	fixed := campaign.Campaign{Name: "Fixa", RewardType: campaign.RewardFixed, RewardValue: campaign.MaxFixedReward + 1, Rules: campaign.DefaultRules()}
	for _, tc := range []struct {
		name   string
		err    error
		pt, en string
	}{
		{"a rule and field of their own", apperr.Invalidf("email", apperr.RuleFormat, "is not a valid email address"),
			"E-mail: informe um endereço de e-mail válido.", "Email: enter a valid e-mail address."},
		{"the rule's generic sentence, the limit grouped", apperr.Invalidf("name", apperr.RuleTooLong, "must be at most 1234 characters").WithLimit(1234),
			"Nome: no máximo 1.234 caracteres.", "Name: at most 1,234 characters."},
		{"a money limit in reais", fixed.Validate(),
			"Valor da recompensa: uma recompensa fixa é de no máximo R$ 10.000.000,00.", "Reward value: a fixed reward is at most R$10,000,000.00."},
		{"a row of a list, counted from 1", tiers.Validate(),
			"Vendas mínimas (linha 3): deve ser maior que o da linha anterior.", "Min sales (row 3): must be greater than the previous row's."},
		{"a field with no label is not named by its API name", apperr.Invalidf("api_secret", apperr.RuleRequired, "is required"),
			"Este campo: este campo é obrigatório.", "This field: this field is required."},
		{"an invalid input with no field", apperr.Errorf(apperr.Invalid, "range: 7, 30, 90 or custom"),
			"Um dos valores enviados não é válido.", "One of the values sent is not valid."},
		{"a code the page's alert already says", apperr.Errorf(apperr.EmailExists, "a member with this email already exists"), "", ""},
		{"not an apperr", errors.New("boom"), "", ""},
	} {
		if got := problem(Portuguese, tc.err); got != tc.pt {
			t.Errorf("%s: pt-BR %q, want %q", tc.name, got, tc.pt)
		}
		if got := problem(English, tc.err); got != tc.en {
			t.Errorf("%s: en %q, want %q", tc.name, got, tc.en)
		}
	}
}

func TestTypedFigures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lang, reais, percent string }{{Portuguese, "1234,56", "12,5"}, {English, "1234.56", "12.5"}} {
		if got := TypedReais(tc.lang, 123456); got != tc.reais {
			t.Errorf("TypedReais(%s, 123456) = %q, want %q", tc.lang, got, tc.reais)
		}
		if got := FormatDecimal(tc.lang, 12.5); got != tc.percent {
			t.Errorf("FormatDecimal(%s, 12.5) = %q, want %q", tc.lang, got, tc.percent)
		}
	}
}
