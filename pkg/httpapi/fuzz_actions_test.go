package httpapi

import (
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

// decodeOnly is the outcome every write body must have: decoded, or
// refused with a client error; never an internal error, never a panic.
func decodeOnly(t *testing.T, body []byte, v any, validate func() error) {
	err := decodeBytes(body, v)
	if err == nil && validate != nil {
		err = validate()
	}
	if err != nil {
		switch apperr.CodeOf(err) {
		case apperr.Invalid, apperr.PayloadTooLarge:
		default:
			t.Fatalf("body %q: error %v has code %s, want a client error", body, err, apperr.CodeOf(err))
		}
	}
}

func FuzzRedeemBodies(f *testing.F) {
	for _, seed := range []string{
		`{"amount":1000,"type":"store_credit"}`, `{"amount":null,"type":"subscription_discount","subscription_id":"sub_1"}`,
		`{"email":"a@b.co","amount":1,"destination":"billing_subscription","subscriptionId":"x"}`,
		`{"amount":10.5}`, `{"amount":"10"}`, `{"amount":-1}`, `{"amount":1e400}`, `[]`, `null`, `{"type":7}`,
		`{"amount":99999999999999999999}`, "{\"destination\":\"store_coupon\",\"amount\":0}", `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var admin AdminRedeemRequest
		decodeOnly(t, body, &admin, func() error {
			_, err := redeemFields(admin.Amount, false, admin.Type, admin.SubscriptionID, "type", "subscription_id")
			return err
		})
		var member MemberRedeemRequest
		decodeOnly(t, body, &member, func() error {
			_, err := redeemFields(member.Amount, true, member.Destination, member.SubscriptionID, "destination", "subscriptionId")
			return err
		})
	})
}

func FuzzReferralActionAndIntegrationBodies(f *testing.F) {
	for _, seed := range []string{
		`{"notes":"ok"}`, `{"reason":"fraud","notes":"x"}`, `{"reason":5}`, `{"account_token":"t","api_url":"https://x"}`,
		`{"webhook_secret":null}`, `{"api_url":"::"}`, `"str"`, `{}`, `{"notes":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var action ReferralActionRequest
		decodeOnly(t, body, &action, nil)
		var in IntegrationRequest
		decodeOnly(t, body, &in, nil)
	})
}
