package ledger

import (
	"testing"

	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// TestBookErasedMember: once a member is erased her code attributes no
// new sale, nor records a refund that arrives before its sale; her
// existing referrals still follow their orders, so a refund of a sale she
// referred before the erasure takes its reward back.
func TestBookErasedMember(t *testing.T) {
	f := newFixture(t)
	if o := f.sale("before", 10000); o.Status != OutcomeApplied {
		t.Fatalf("sale before the erasure: %+v", o)
	}
	*f.m = *member.Erase(f.m, t0)
	before := f.wallet()
	for name, o := range map[string]Outcome{"a sale": f.sale("after", 10000), "a refund before its sale": f.refund("refund-first")} {
		if o.Status != OutcomeNoop || o.Reason != referral.ErasedNote || len(f.events) != 0 {
			t.Errorf("%s after the erasure: %+v with %d events, want a noop %q and none", name, o, len(f.events), referral.ErasedNote)
		}
	}
	if w := f.wallet(); w != before || len(f.b.NewReferrals) != 1 {
		t.Errorf("after the erased member's sales: wallet %+v (was %+v), %d referrals created, want 1", w, before, len(f.b.NewReferrals))
	}
	if o := f.refund("before"); o.Status != OutcomeApplied || f.referral("before").Status != referral.StatusCancelled {
		t.Errorf("refund of her earlier sale: %+v, referral %s, want it cancelled", o, f.referral("before").Status)
	}
	if w := f.wallet(); w.Pending != 0 || w.TotalEarned != 0 {
		t.Errorf("after the refund her wallet is %+v, want the reward taken back", w)
	}
}
