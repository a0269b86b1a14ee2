package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/platform/heartbeat"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/trail/usage"
)

// HeartbeatArgs is the periodic job whose only effect is to record that the scheduler and a worker are alive.
type HeartbeatArgs struct{}

// Kind names the heartbeat job in River.
func (HeartbeatArgs) Kind() string { return "system_heartbeat" }

// InsertOpts tries a heartbeat once: the next one is due in heartbeat.Interval anyway. It is deliberately not
// unique: a heartbeat left "running" by a killed process must not block the next ones.
func (HeartbeatArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1}
}

type heartbeatWorker struct {
	river.WorkerDefaults[HeartbeatArgs]
	pool *pgxpool.Pool
}

func (w *heartbeatWorker) Work(ctx context.Context, _ *river.Job[HeartbeatArgs]) error {
	return dbq.New().HeartbeatBeat(ctx, w.pool, heartbeat.Scheduler)
}

// IdempotencySweepArgs is the periodic job that deletes expired idempotency records.
type IdempotencySweepArgs struct{}

// Kind names the sweep job in River.
func (IdempotencySweepArgs) Kind() string { return "idempotency_sweep" }

// InsertOpts retries a failed sweep a few times; a sweep is idempotent, so an overlap is harmless.
func (IdempotencySweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3}
}

type idempotencySweepWorker struct {
	river.WorkerDefaults[IdempotencySweepArgs]
	store *idempotency.Store
}

func (w *idempotencySweepWorker) Work(ctx context.Context, _ *river.Job[IdempotencySweepArgs]) error {
	if _, err := w.store.Sweep(ctx); err != nil {
		return fmt.Errorf("sweep idempotency keys: %w", err)
	}
	return nil
}

// CredentialSweepArgs is the periodic job that trims what credentials leave behind: API-key request logs past
// their retention and OAuth codes and tokens past their expiry.
type CredentialSweepArgs struct{}

// Kind names the credential sweep job in River.
func (CredentialSweepArgs) Kind() string { return "credential_sweep" }

// InsertOpts retries a failed sweep a few times; a sweep is idempotent.
func (CredentialSweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3}
}

type credentialSweepWorker struct {
	river.WorkerDefaults[CredentialSweepArgs]
	pool *pgxpool.Pool
}

func (w *credentialSweepWorker) Work(ctx context.Context, _ *river.Job[CredentialSweepArgs]) error {
	now := time.Now()
	if _, err := usage.Sweep(ctx, w.pool, now); err != nil {
		return fmt.Errorf("sweep API key usage logs: %w", err)
	}
	if _, err := dbq.New().OAuthTokenSweep(ctx, w.pool, now); err != nil {
		return fmt.Errorf("sweep OAuth tokens: %w", err)
	}
	return nil
}

// OutboxPruneArgs is the periodic job that deletes events past events.Retention from the outbox.
type OutboxPruneArgs struct{}

// Kind names the outbox prune job in River.
func (OutboxPruneArgs) Kind() string { return "outbox_prune" }

// InsertOpts retries a failed prune a few times; a prune is idempotent, and the next one is an hour away.
func (OutboxPruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3}
}

type outboxPruneWorker struct {
	river.WorkerDefaults[OutboxPruneArgs]
	pool *pgxpool.Pool
}

func (w *outboxPruneWorker) Work(ctx context.Context, _ *river.Job[OutboxPruneArgs]) error {
	_, err := events.Prune(ctx, w.pool, time.Now())
	return err
}

type eventDispatchWorker struct {
	river.WorkerDefaults[events.DispatchArgs]
	dispatcher *events.Dispatcher
}

func (w *eventDispatchWorker) Work(ctx context.Context, job *river.Job[events.DispatchArgs]) error {
	return w.dispatcher.Dispatch(ctx, job.Args)
}

type notificationDeliverWorker struct {
	river.WorkerDefaults[notify.DeliverArgs]
	deliverer *notify.Deliverer
}

func (w *notificationDeliverWorker) Work(ctx context.Context, job *river.Job[notify.DeliverArgs]) error {
	return w.deliverer.Deliver(ctx, job.Args)
}
