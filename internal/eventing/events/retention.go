package events

import (
	"context"
	"fmt"
	"time"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// Part 1's rules for the internal bus, applied to the outbox: events are kept 7 days, a failing dispatch is
// retried up to 10 times, and one handling of an event is limited to 30 seconds.
const (
	// Retention is how long the outbox keeps an event. It outlives every retry of the event's dispatch (ten
	// attempts take about four hours with River's backoff) and of its webhook deliveries (hours), and leaves
	// a week to inspect and redeliver a delivery with its payload.
	Retention = 7 * 24 * time.Hour
	// MaxDispatchAttempts is how many times an event's dispatch is tried before it is given up on: the event
	// stays undispatched (and inspectable) until Retention removes it, and every failed attempt is logged.
	MaxDispatchAttempts = 10
	// HandlerTimeout bounds one dispatch attempt, every consumer's handling of the event included: a consumer
	// that hangs (a lock, a slow dependency) is cut, its transaction rolled back with its acknowledgement, and
	// the attempt counts as failed; the consumers that acknowledged before keep their work.
	HandlerTimeout = 30 * time.Second
)

// pruneBatch is how many events one prune statement deletes: a few hundred milliseconds of work, so the row
// locks and the WAL of one statement stay small.
const pruneBatch = 10_000

// Prune deletes the events of every organization created more than Retention before now, with their
// consumers' acknowledgements, a batch per statement, and returns how many events it removed. It is the retention job's work; exec is the application pool.
func Prune(ctx context.Context, exec dbq.DBTX, now time.Time) (int64, error) {
	var total int64
	for {
		n, err := dbq.New().EventOutboxPrune(ctx, exec, dbq.EventOutboxPruneParams{Before: now.Add(-Retention), RowLimit: pruneBatch})
		total += n
		if err != nil {
			return total, fmt.Errorf("events: prune the outbox: %w", err)
		}
		if n < pruneBatch {
			return total, nil
		}
	}
}
