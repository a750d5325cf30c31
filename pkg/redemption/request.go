package redemption

import (
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
)

// MaxSubscriptionID bounds the Guru subscription id a redemption names, in
// characters: it is stored on the redemption and carried by its command.
const MaxSubscriptionID = bounds.ID

// CheckSubscriptionID checks the subscription id (trimmed) of a redemption
// of typ as every edge takes it: required for TypeSubscriptionDiscount, at
// most MaxSubscriptionID characters for any type. The error is
// apperr.Invalid naming field, the id's name in the interface at hand
// (subscription_id, subscriptionId).
func CheckSubscriptionID(field, typ, id string) error {
	if typ == TypeSubscriptionDiscount && id == "" {
		return apperr.Invalidf(field, apperr.RuleRequired, "is required for a subscription discount")
	}
	return bounds.Check(field, id, MaxSubscriptionID)
}
