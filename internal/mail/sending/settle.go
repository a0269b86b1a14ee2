package sending

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// Settled is one task's result as it is recorded: sent, failed or ambiguous (a requeue is not a result).
type Settled struct {
	// Task is the task as its attempt saw it (status and counters before the result).
	Task dbq.SendTask
	// Status is StatusSent, StatusFailed or StatusAmbiguous, or StatusSkipped when a person ends an ambiguous
	// send. An ambiguous task is told again when it settles: sent (found in its Sent folder, or sent again) or
	// skipped.
	Status string
	// Code and Message are the failure's error code and text (empty when sent).
	Code, Message string
}

// Task results a SettleHook is told.
const (
	StatusSent      = "sent"
	StatusFailed    = "failed"
	StatusAmbiguous = "ambiguous"
	// StatusSkipped: a person decided an ambiguous send is not sent again (it may or may not have left).
	StatusSkipped = "skipped"
)

// SettleHook is told each task's result inside the transaction that records it, so what the sender keeps about
// the send (a campaign lead's progress) commits or rolls back with the result; an error rolls both back and the
// attempt is worked again.
type SettleHook func(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, s Settled) error

// OnSettle sets the hook told every task's result (the composition root gives the campaign engine's); it is
// set once, before the pipeline works any task.
func (p *Pipeline) OnSettle(h SettleHook) { p.settle = h }

// settled tells the hook a result, when one is set, then counts a sent task in the analytics rollups: last,
// so the transaction takes the rollup rows' locks (shared by every send of the organization's day) only once
// it holds everything else it needs, and never waits for another lock while holding them.
func (p *Pipeline) settled(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, s Settled) error {
	if p.settle != nil {
		if err := p.settle(ctx, tx, outbox, s); err != nil {
			return err
		}
	}
	if s.Status != StatusSent {
		return nil
	}
	return rollup.Sent(ctx, tx, s.Task.OrganizationID, s.Task.ID)
}

// WithClock makes the pipeline read now from clock (simulations run the engine and the pipeline on one
// simulated clock); it is set before the pipeline works any task.
func (p *Pipeline) WithClock(clock func() time.Time) *Pipeline {
	p.now = clock
	return p
}
