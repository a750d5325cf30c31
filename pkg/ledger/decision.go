package ledger

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/referral"
)

// CommandPublisher publishes ledger commands (acknowledged by the broker).
type CommandPublisher interface {
	PublishCommands(ctx context.Context, cmds []Command) error
}

// Issue publishes cmd and waits up to timeout for its outcome: how the
// edges (the API, the dashboard) carry out a wallet action. A refusal
// becomes the apperr of its code; found is false when the ledger did not
// answer in time (the command stays queued and will be applied).
func Issue(ctx context.Context, w *Waiter, pub CommandPublisher, cmd Command, timeout time.Duration) (*Outcome, bool, error) {
	o, found, err := w.Wait(ctx, cmd.MerchantID, cmd.ID, timeout, func(ctx context.Context) error {
		return pub.PublishCommands(ctx, []Command{cmd})
	})
	if err != nil {
		return nil, false, apperr.Wrap(apperr.Unavailable, err, "the ledger is unavailable, retry later")
	}
	if found && o.Status == OutcomeRejected {
		return o, true, apperr.Errorf(apperr.Code(o.ErrorCode), "%s", o.Reason)
	}
	return o, found, nil
}

// MaxNotesLength bounds the notes of a decision, in characters.
const MaxNotesLength = bounds.Note

// Decision is a person's approve or reject of a referral (decision 16),
// from the API or the dashboard.
type Decision struct {
	Type       string // CmdApprove or CmdReject
	MerchantID uuid.UUID
	ReferralID uuid.UUID
	Notes      string
	Reason     string // reject: one of referral.RejectionReasons
	// Key makes the command's id: the same key is the same command, which
	// the ledger applies once (a retried request).
	Key string
	At  time.Time
}

// Validate checks the decision's fields: a reject's reason is a rejection
// reason, notes at most MaxNotesLength characters.
func (d Decision) Validate() error {
	if d.Type == CmdReject && !referral.ValidReason(d.Reason) {
		return apperr.Invalidf("reason", apperr.RuleNotAllowed, "must be one of %s", strings.Join(referral.RejectionReasons, ", "))
	}
	return bounds.Check("notes", d.Notes, MaxNotesLength)
}

// Command is the ledger command carrying out d on a referral of memberID.
func (d Decision) Command(memberID uuid.UUID) Command {
	return Command{ID: d.Type + ":" + d.ReferralID.String() + ":" + d.Key, Type: d.Type, MerchantID: d.MerchantID,
		MemberID: memberID, ReferralID: d.ReferralID, Notes: d.Notes, Reason: d.Reason, IssuedAt: d.At}
}

// ReferralFinder reads one referral with its referrer.
type ReferralFinder = referral.Finder

// Decider carries out decisions: it validates one, finds its referral,
// issues its command and reads the referral as it then stands.
type Decider struct {
	Commands  CommandPublisher
	Waiter    *Waiter
	Referrals ReferralFinder
	Timeout   time.Duration // 0: 10 s (decision 19)
}

// Decide carries out d. settled is false when the ledger did not answer
// within the timeout (the referral is returned as it stands); a refusal
// is its apperr (apperr.InvalidState when the referral's status does not
// allow it, apperr.NotFound for another merchant's referral).
func (dc Decider) Decide(ctx context.Context, d Decision) (ref *referral.Listed, settled bool, err error) {
	if err := d.Validate(); err != nil {
		return nil, false, err
	}
	ref, err = dc.Referrals.FindReferralByID(ctx, d.MerchantID, d.ReferralID)
	if err != nil {
		return nil, false, err
	}
	timeout := dc.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	_, found, err := Issue(ctx, dc.Waiter, dc.Commands, d.Command(ref.MemberID), timeout)
	if err != nil {
		return nil, false, err
	}
	if ref, err = dc.Referrals.FindReferralByID(ctx, d.MerchantID, d.ReferralID); err != nil {
		return nil, false, err
	}
	return ref, found, nil
}
