package redemption

import (
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

func TestCheckSubscriptionID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, typ, id string
		want          string // the message; "" for accepted
	}{
		{"a subscription discount names its subscription", TypeSubscriptionDiscount, "sub_1", ""},
		{"a store credit needs none", TypeStoreCredit, "", ""},
		{"a subscription discount without one", TypeSubscriptionDiscount, "", "subscriptionId: is required for a subscription discount"},
		{"255 characters", TypeSubscriptionDiscount, strings.Repeat("ç", 255), ""},
		{"256 characters", TypeSubscriptionDiscount, strings.Repeat("ç", 256), "subscriptionId: must be at most 255 characters"},
		{"bounded for any type", TypeStoreCredit, strings.Repeat("x", 256), "subscriptionId: must be at most 255 characters"},
	} {
		err := CheckSubscriptionID("subscriptionId", tt.typ, tt.id)
		if tt.want == "" && err != nil || tt.want != "" && (!apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
