package ledger

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// Wallet is a member's balance snapshot.
type Wallet struct {
	MerchantID    uuid.UUID
	MemberID      uuid.UUID
	Pending       int64
	Available     int64
	TotalEarned   int64
	TotalRedeemed int64
	Cancelled     int64
	Version       int64
	UpdatedAt     time.Time
}

// Transaction is a member-facing credit or debit whose status follows the
// ledger (decision 17).
type Transaction struct {
	ID            uuid.UUID
	MerchantID    uuid.UUID
	MemberID      uuid.UUID
	Type          string // credit, debit
	Status        string // pending, available, used, cancelled, reversed, processing
	Amount        int64
	Description   string
	ReferenceType string
	ReferenceID   uuid.UUID
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Public transaction types and statuses.
const (
	TxnCredit = "credit"
	TxnDebit  = "debit"

	TxnPending    = "pending"
	TxnAvailable  = "available"
	TxnUsed       = "used"
	TxnCancelled  = "cancelled"
	TxnReversed   = "reversed"
	TxnProcessing = "processing"
)

// Entry is an immutable ledger record: the admin transaction view.
type Entry struct {
	ID             uuid.UUID
	MerchantID     uuid.UUID
	MemberID       uuid.UUID
	Type           string // credit, debit, release, cancel, adjustment
	Amount         int64
	PendingDelta   int64
	AvailableDelta int64
	PendingAfter   int64
	AvailableAfter int64
	Description    string
	ReferenceType  string
	ReferenceID    uuid.UUID
	TransactionID  uuid.UUID
	CommandID      string
	CreatedAt      time.Time
}

// Entry types.
const (
	EntryCredit     = "credit"
	EntryDebit      = "debit"
	EntryRelease    = "release"
	EntryCancel     = "cancel"
	EntryAdjustment = "adjustment"
)

// EntryFilter selects a page of one member's ledger entries.
type EntryFilter struct {
	Type          string // "" = every type
	Offset, Limit int
}

// Event is a domain event for the outbox; Data is its admin-shape payload.
type Event struct {
	MerchantID uuid.UUID
	MemberID   uuid.UUID
	Type       string
	Data       any
	CreatedAt  time.Time
}

// OrderKey identifies an order per merchant.
type OrderKey struct {
	MerchantID uuid.UUID
	Source     string
	OrderID    string
}

// ScopedID is the key of a row that belongs to one merchant: a member, a
// campaign, a referral, a redemption or a wallet (whose ID is its member's).
// Ids are unique on their own, but every lookup carries the merchant so that
// a command of one merchant can never reach another merchant's row.
type ScopedID struct {
	MerchantID uuid.UUID
	ID         uuid.UUID
}

// Book is the in-memory state of the rows a batch of commands touches, and
// the record of what applying them changed. The store fills the state maps
// (with the wallet rows locked), calls Apply per command in order, and
// writes the change lists.
type Book struct {
	Members   map[ScopedID]*member.Member     // by (merchant, member id)
	Campaigns map[ScopedID]*campaign.Campaign // by (merchant, campaign id)
	Wallets   map[ScopedID]*Wallet            // by (merchant, member id)
	Referrals map[OrderKey]*referral.Referral
	// ReferralsByID indexes Referrals by (merchant, referral id).
	ReferralsByID map[ScopedID]*referral.Referral
	// Transactions holds loaded and new public transactions by id.
	Transactions map[uuid.UUID]*Transaction
	// Processed holds command ids already applied (merchant + id).
	Processed map[ProcessedKey]bool
	// Redemptions holds loaded and new redemptions by (merchant, id).
	Redemptions map[ScopedID]*redemption.Redemption
	// Creators holds the members with a creator profile, by (merchant,
	// member id), and Tiers the commission tiers of their campaigns, by
	// (merchant, campaign id) (decision 21).
	Creators map[ScopedID]bool
	Tiers    map[ScopedID]creator.Tiers
	// Stats holds each member's recent referrals as loaded, by (merchant,
	// member id); the book keeps them current as it creates and decides
	// referrals, so that many sales of one member in a batch count each
	// other (see stats.go).
	Stats map[ScopedID]*MemberStats

	NewReferrals        []*referral.Referral
	ChangedReferrals    map[uuid.UUID]*referral.Referral
	NewTransactions     []*Transaction
	ChangedTransactions map[uuid.UUID]*Transaction
	Entries             []Entry
	Events              []Event
	// Records are Events rendered for the outbox by EncodeEvents.
	Records            []outbox.Record
	Outcomes           []Outcome
	ChangedWallets     map[ScopedID]*Wallet
	NewRedemptions     []*redemption.Redemption
	ChangedRedemptions map[uuid.UUID]*redemption.Redemption
	// Deliveries are the records of the deliveries that brought the
	// batch's commands (Command.Delivery), written whatever the commands'
	// outcomes: a platform's retry of an applied sale is a delivery too.
	Deliveries []inbound.Delivery

	newTxnIDs map[uuid.UUID]bool
	now       func() time.Time
}

// ProcessedKey identifies a command per merchant.
type ProcessedKey struct {
	MerchantID uuid.UUID
	CommandID  string
}

// NewBook returns an empty Book whose timestamps come from now.
func NewBook(now func() time.Time) *Book {
	return &Book{
		Members:             map[ScopedID]*member.Member{},
		Campaigns:           map[ScopedID]*campaign.Campaign{},
		Wallets:             map[ScopedID]*Wallet{},
		Referrals:           map[OrderKey]*referral.Referral{},
		ReferralsByID:       map[ScopedID]*referral.Referral{},
		Transactions:        map[uuid.UUID]*Transaction{},
		Processed:           map[ProcessedKey]bool{},
		Redemptions:         map[ScopedID]*redemption.Redemption{},
		Creators:            map[ScopedID]bool{},
		Tiers:               map[ScopedID]creator.Tiers{},
		Stats:               map[ScopedID]*MemberStats{},
		ChangedRedemptions:  map[uuid.UUID]*redemption.Redemption{},
		ChangedReferrals:    map[uuid.UUID]*referral.Referral{},
		ChangedTransactions: map[uuid.UUID]*Transaction{},
		ChangedWallets:      map[ScopedID]*Wallet{},
		newTxnIDs:           map[uuid.UUID]bool{},
		now:                 now,
	}
}

// AddReferral puts a loaded referral into the book's indexes.
func (b *Book) AddReferral(r *referral.Referral) {
	b.Referrals[OrderKey{r.MerchantID, r.Source, r.OrderID}] = r
	b.ReferralsByID[ScopedID{r.MerchantID, r.ID}] = r
}

// EncodeEvents renders Events as outbox records.
func (b *Book) EncodeEvents() error {
	b.Records = b.Records[:0]
	for _, e := range b.Events {
		rec, err := outbox.NewRecord(e.MerchantID, e.MemberID, e.Type, e.Data, e.CreatedAt)
		if err != nil {
			return err
		}
		b.Records = append(b.Records, rec)
	}
	return nil
}

// Empty reports whether applying the batch changed nothing to write.
func (b *Book) Empty() bool {
	return len(b.Outcomes) == 0 && len(b.Deliveries) == 0
}

// Apply applies one command to the book. A command whose id the book has
// already processed is skipped without a new outcome. Business refusals are
// outcomes (OutcomeRejected with an apperr code), not errors: they are
// recorded so a redelivery finds them. Apply never fails.
//
// The rules are decided by pure functions (referral.Attribute with the
// fraud rules and creator tiers, referral.Next, RedeemAmount); Apply carries out their decisions as
// money moves, public transactions, events and outcomes. It is the hot
// path of the ledger: it allocates only what it records.
func (b *Book) Apply(cmd Command) {
	if b.Processed[ProcessedKey{cmd.MerchantID, cmd.ID}] {
		return
	}
	m := b.Members[ScopedID{cmd.MerchantID, cmd.MemberID}]
	if m == nil {
		b.record(cmd, OutcomeRejected, string(apperr.MemberNotFound), "member not found", nil)
		return
	}
	switch cmd.Type {
	case CmdCreditSale:
		b.creditSale(cmd, m)
	case CmdRefund:
		b.refund(cmd, m)
	case CmdRelease:
		b.referralAction(cmd, m, referral.Release)
	case CmdApprove:
		b.referralAction(cmd, m, referral.Approve)
	case CmdReject:
		b.referralAction(cmd, m, referral.Reject)
	case CmdRedeem:
		b.redeem(cmd, m)
	case CmdRedemptionResult:
		b.redemptionResult(cmd, m)
	default:
		b.record(cmd, OutcomeRejected, string(apperr.Invalid), "unknown command type "+cmd.Type, nil)
	}
}

func (b *Book) wallet(merchantID, memberID uuid.UUID) *Wallet {
	k := ScopedID{merchantID, memberID}
	w := b.Wallets[k]
	if w == nil {
		w = &Wallet{MerchantID: merchantID, MemberID: memberID}
		b.Wallets[k] = w
	}
	return w
}

// move applies signed deltas to the member's wallet, appends the entry,
// emits its wallet event and returns the entry's id.
//
// Every balance change of a member has one event (docs/webhooks.md), so
// that a merchant can mirror the wallet from events alone. The event
// follows from the deltas, not from the entry type, so that no new move can
// forget it: money that enters the wallet (pending + available grows: a
// credit, a failed redemption's money returned) is wallet.credited, money
// that leaves it (a cancelled or reversed credit, a redemption's debit) is
// wallet.debited, each with the entry's amount, reference and balance
// after. A release moves money inside the wallet (pending → available):
// its event is the referral's, referral.approved (see transition).
func (b *Book) move(cmd Command, e Entry, d walletDelta) uuid.UUID {
	w := b.wallet(cmd.MerchantID, cmd.MemberID)
	w.Pending += d.pending
	w.Available += d.available
	w.TotalEarned += d.earned
	w.TotalRedeemed += d.redeemed
	w.Cancelled += d.cancelled
	w.Version++
	w.UpdatedAt = b.now()
	b.ChangedWallets[ScopedID{w.MerchantID, w.MemberID}] = w

	e.ID = ids.New()
	e.MerchantID, e.MemberID, e.CommandID = cmd.MerchantID, cmd.MemberID, cmd.ID
	e.PendingDelta, e.AvailableDelta = d.pending, d.available
	e.PendingAfter, e.AvailableAfter = w.Pending, w.Available
	e.CreatedAt = w.UpdatedAt
	b.Entries = append(b.Entries, e)
	if typ := walletEvent(d); typ != "" {
		b.emit(cmd, typ, WalletEventData{
			MemberID:    memberIDString(cmd.MemberID),
			Transaction: e.View(),
			Wallet:      e.BalanceAfter(),
		})
	}
	return e.ID
}

// walletEvent is the event of a move: wallet.credited when it adds money
// to the wallet, wallet.debited when it takes money out, "" when it only
// moves money from pending to available (a release).
func walletEvent(d walletDelta) string {
	switch net := d.pending + d.available; {
	case net > 0:
		return event.WalletCredited
	case net < 0:
		return event.WalletDebited
	}
	return ""
}

// walletDelta is what a move changes in the wallet's figures.
type walletDelta struct {
	pending, available, earned, redeemed, cancelled int64
}

func (b *Book) emit(cmd Command, typ string, data any) {
	b.Events = append(b.Events, Event{
		MerchantID: cmd.MerchantID, MemberID: cmd.MemberID,
		Type: typ, Data: data, CreatedAt: b.now(),
	})
}

func (b *Book) record(cmd Command, status, code, reason string, result any) {
	var raw json.RawMessage
	if result != nil {
		raw, _ = json.Marshal(result)
	}
	b.Outcomes = append(b.Outcomes, Outcome{
		MerchantID: cmd.MerchantID, CommandID: cmd.ID, MemberID: cmd.MemberID, Kind: cmd.Type,
		Status: status, ErrorCode: code, Reason: reason, Result: raw,
	})
	b.Processed[ProcessedKey{cmd.MerchantID, cmd.ID}] = true
}

func (b *Book) touchReferral(r *referral.Referral) {
	r.UpdatedAt = b.now()
	b.ChangedReferrals[r.ID] = r
}

func (b *Book) setTxnStatus(id uuid.UUID, status string) {
	t := b.Transactions[id]
	if t == nil {
		return
	}
	t.Status = status
	t.UpdatedAt = b.now()
	if !b.newTxnIDs[id] {
		b.ChangedTransactions[id] = t
	}
}

func (b *Book) addTxn(t *Transaction) {
	b.Transactions[t.ID] = t
	b.NewTransactions = append(b.NewTransactions, t)
	b.newTxnIDs[t.ID] = true
}
