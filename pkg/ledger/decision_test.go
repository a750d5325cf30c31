package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
)

func TestDecisionValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Decision
		want string // "" valid, else the message's start
	}{
		{"approve without notes", Decision{Type: CmdApprove}, ""},
		{"approve ignores the reason", Decision{Type: CmdApprove, Reason: "whatever"}, ""},
		{"reject with a reason", Decision{Type: CmdReject, Reason: "fraud", Notes: "throwaway"}, ""},
		{"reject without a reason", Decision{Type: CmdReject}, "reason: must be one of fraud, self_referral"},
		{"reject with an unknown reason", Decision{Type: CmdReject, Reason: "Fraud"}, "reason:"},
		{"notes at the limit", Decision{Type: CmdApprove, Notes: strings.Repeat("n", MaxNotesLength)}, ""},
		{"notes over the limit", Decision{Type: CmdApprove, Notes: strings.Repeat("n", MaxNotesLength+1)}, "notes: must be at most 2000 characters"},
		{"notes are counted in characters", Decision{Type: CmdReject, Reason: "fraud", Notes: strings.Repeat("ç", MaxNotesLength)}, ""},
	} {
		err := tc.d.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.name, err)
		case tc.want != "" && (!apperr.Is(err, apperr.Invalid) || !strings.HasPrefix(apperr.MessageOf(err), tc.want)):
			t.Errorf("%s: %v, want invalid %q…", tc.name, err, tc.want)
		}
	}
}

// The command of a decision: its id is the same for the same key (a
// retried request is one command), another for another key.
func TestDecisionCommand(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := Decision{Type: CmdReject, MerchantID: uuid.New(), ReferralID: uuid.New(), Notes: "n", Reason: "fraud", Key: "k1", At: at}
	member := uuid.New()
	cmd := d.Command(member)
	if cmd.ID != "reject:"+d.ReferralID.String()+":k1" || cmd.Type != CmdReject || cmd.MerchantID != d.MerchantID ||
		cmd.MemberID != member || cmd.ReferralID != d.ReferralID || cmd.Notes != "n" || cmd.Reason != "fraud" || !cmd.IssuedAt.Equal(at) {
		t.Errorf("command = %+v", cmd)
	}
	d.Key = "k2"
	if d.Command(member).ID == cmd.ID {
		t.Errorf("another key made the same command id")
	}
}
