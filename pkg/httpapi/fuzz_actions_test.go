package httpapi

import (
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
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

// FuzzCreatorAndTierBodies: whatever the body of PUT /members/{id}/creator
// or PUT /campaigns/{id}/tiers, it is decoded or refused with a client
// error, and an accepted commission is a whole number of basis points from
// 0 to 100 %.
func FuzzCreatorAndTierBodies(f *testing.F) {
	for _, seed := range []string{
		`{"display_name":"Ana","niche":"fitness","instagram_username":"@ana.fit"}`, `{"display_name":"  "}`,
		`{"display_name":7}`, `{"instagram_username":"a b"}`, `{"display_name":"\u0000"}`, `{"display_name":"\ud800"}`,
		`{"tiers":[{"name":"Bronze","min_sales":0,"commission_percent":10},{"name":"Silver","min_sales":3,"commission_percent":15.5}]}`,
		`{"tiers":[{"name":"A","min_sales":0,"commission_percent":100.001}]}`, `{"tiers":[{"name":"A","min_sales":0,"commission_percent":1e2}]}`,
		`{"tiers":[{"name":"A","min_sales":0,"commission_percent":-0}]}`, `{"tiers":[{"name":"A","min_sales":0,"commission_percent":"10"}]}`,
		`{"tiers":[{"name":"A","min_sales":0,"commission_percent":99999999999999999999999}]}`,
		`{"tiers":[{"name":"A","min_sales":9223372036854775807,"commission_percent":1}]}`, `{"tiers":[{"name":"A","min_sales":1},{"name":"a","min_sales":1}]}`,
		`{"tiers":[{"name":"A","min_sales":0,"commission_percent":0.10}]}`, `{"tiers":null}`, `{"tiers":{}}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var creatorReq PutCreatorRequest
		decodeOnly(t, body, &creatorReq, func() error {
			p := creator.Profile{DisplayName: creatorReq.DisplayName, Niche: creatorReq.Niche,
				InstagramUsername: creatorReq.InstagramUsername}.Clean()
			return p.Validate()
		})
		var tiersReq PutTiersRequest
		decodeOnly(t, body, &tiersReq, func() error {
			tiers, err := tiersReq.tiers()
			for _, tier := range tiers {
				if err == nil && (tier.CommissionBP < 0 || tier.CommissionBP > 10000) {
					t.Fatalf("body %q: accepted commission of %d bp", body, tier.CommissionBP)
				}
			}
			return err
		})
	})
}

// TestPercentBP reads commission percents exactly, from their text.
func TestPercentBP(t *testing.T) {
	for text, want := range map[string]int{"0": 0, "10": 1000, "15.5": 1550, "15.50": 1550, "20.25": 2025, "0.01": 1,
		"99.99": 9999, "100": 10000, "100.00": 10000, "7.000": 700} {
		if got, err := percentBP([]byte(text)); err != nil || got != want {
			t.Errorf("percentBP(%s) = %d, %v; want %d", text, got, err, want)
		}
	}
	for _, text := range []string{"", "null", "100.01", "101", "1000", "-1", "-0", "1e1", "1E2", `"10"`, "15.555", "0.001", "true", "1.", ".5"} {
		if got, err := percentBP([]byte(text)); err == nil {
			t.Errorf("percentBP(%s) = %d, want an error", text, got)
		}
	}
}
