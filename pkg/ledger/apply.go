package ledger

import (
	"context"
	"time"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/referral"
)

// Tx is one transaction of the ledger's database (postgres.LedgerStore).
type Tx interface {
	// Load creates and locks the wallets of the members cmds touch, in a
	// stable order so that concurrent batches cannot deadlock, then reads
	// into book what the commands read: wallets, members and their
	// campaigns, tiers, the commands already processed, referrals and
	// redemptions.
	Load(ctx context.Context, book *Book, cmds []Command) error
	// Write writes what book changed, its outbox records and the records
	// of its deliveries.
	Write(ctx context.Context, book *Book) error
}

// Transactor runs a function in one transaction of the ledger's database,
// whose clock it tells.
type Transactor interface {
	InTx(ctx context.Context, fn func(Tx) error) error
	Now() time.Time
}

// ApplyBatch applies cmds in order in one transaction of db: load, apply
// each command to the book (the rules), write. A command already
// processed is found by the load and skipped, so the batch is safe to
// repeat. It returns the book, whose Records the caller relays after the
// commit.
func ApplyBatch(ctx context.Context, db Transactor, cmds []Command) (*Book, error) {
	var book *Book
	err := db.InTx(ctx, func(tx Tx) error {
		book = NewBook(db.Now)
		if err := tx.Load(ctx, book, cmds); err != nil {
			return err
		}
		for _, c := range cmds {
			n := len(book.Outcomes)
			book.Apply(c)
			if c.Delivery != nil {
				book.Deliveries = append(book.Deliveries, recorded(*c.Delivery, book.Outcomes[n:]))
			}
		}
		return tx.Write(ctx, book)
	})
	if err != nil {
		return nil, err
	}
	return book, nil
}

// recorded is the record of the delivery that brought a command, as the
// ledger writes it once the command's outcomes are known: a sale or
// refund of an erased member's code says so (inbound.DeliveryMemberErased,
// with the note), where its answer only said accepted.
func recorded(d inbound.Delivery, outcomes []Outcome) inbound.Delivery {
	for _, o := range outcomes {
		if o.Reason == referral.ErasedNote {
			d.Outcome, d.Error = inbound.DeliveryMemberErased, o.Reason
		}
	}
	return d
}
