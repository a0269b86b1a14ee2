package runs

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/platform/db"
)

// SyncInterval is how often a launched run (active or paused) looks at its campaign again.
const SyncInterval = 10 * time.Second

// advanceAttempts is how many times River runs an advance job that fails on database trouble; the last
// failure fails the run, so no run is left preflighting with nothing to carry it on.
const advanceAttempts = 8

// AdvanceArgs is the job that carries a new run through preflight to its outcome (a draft's plan, a launch,
// an approval request or a failure). One per run: it is inserted with the run.
type AdvanceArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	RunID          uuid.UUID `json:"run_id"`
}

// Kind names the job.
func (AdvanceArgs) Kind() string { return "run_advance" }

// InsertOpts keep one advance job per run.
func (AdvanceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: advanceAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// AdvanceWorker works AdvanceArgs.
type AdvanceWorker struct {
	river.WorkerDefaults[AdvanceArgs]
	Runner *Runner
}

// Work moves the run from queued to preflighting, then (in a second transaction, so the story shows the
// run preflighting even when its outcome is retried) to its outcome. A retried job picks up where the run
// is; one whose run moved on does nothing.
func (w *AdvanceWorker) Work(ctx context.Context, job *river.Job[AdvanceArgs]) error {
	err := w.Runner.advance(ctx, job.Args)
	if err != nil && job.Attempt >= job.MaxAttempts {
		if ferr := w.Runner.abandon(context.WithoutCancel(ctx), job.Args); ferr != nil {
			return errors.Join(err, ferr)
		}
	}
	return err
}

func (r *Runner) advance(ctx context.Context, a AdvanceArgs) error {
	err := db.WithOrgTx(ctx, r.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		run, err := lock(ctx, tx, a.OrganizationID, a.RunID)
		if err != nil || run.State != StateQueued {
			return ignoreGone(err)
		}
		return r.move(ctx, tx, &run, change{to: StatePreflighting, event: EventPreflightStarted,
			message: "Preflight started: the run's campaign, senders and audience are being checked."})
	})
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, r.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		run, err := lock(ctx, tx, a.OrganizationID, a.RunID)
		if err != nil || run.State != StatePreflighting {
			return ignoreGone(err)
		}
		return r.preflight(ctx, tx, &run)
	})
}

// ignoreGone treats a run that no longer exists (its organization was deleted) as done.
func ignoreGone(err error) error {
	if err != nil && errors.Is(err, NotFound()) {
		return nil
	}
	return err
}

// abandon fails a run whose advance job ran out of attempts (the cause is in the job's error log).
func (r *Runner) abandon(ctx context.Context, a AdvanceArgs) error {
	return db.WithOrgTx(ctx, r.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		run, err := lock(ctx, tx, a.OrganizationID, a.RunID)
		if err != nil || (run.State != StateQueued && run.State != StatePreflighting) {
			return ignoreGone(err)
		}
		return r.fail(ctx, tx, &run, EventPreflightFailed, Issue{Code: "run_error",
			Message: "The run stopped on an internal error before it launched.", Fix: "Start another run with a new Idempotency-Key."})
	})
}

// SyncArgs is the job that keeps a launched run in step with its campaign (active, paused, completed,
// deleted): there is no cross-organization read of runs, so each launched run carries its own job, which
// snoozes SyncInterval at a time until the run reaches a final state. One per run.
type SyncArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	RunID          uuid.UUID `json:"run_id"`
}

// Kind names the job.
func (SyncArgs) Kind() string { return "run_sync" }

// InsertOpts keep one sync job per run; snoozes do not count as attempts, so attempts only count failures.
func (SyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// SyncWorker works SyncArgs.
type SyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	Runner *Runner
}

// Work syncs the run once and snoozes while it has not ended.
func (w *SyncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	done, err := w.Runner.sync(ctx, job.Args)
	if err != nil || done {
		return err
	}
	return river.JobSnooze(SyncInterval)
}

// watch inserts the run's sync job (once per run), first due after SyncInterval.
func (r *Runner) watch(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) error {
	opts := SyncArgs{}.InsertOpts()
	opts.ScheduledAt = r.now().Add(SyncInterval)
	_, err := r.jobs.InsertTx(ctx, tx, SyncArgs{OrganizationID: org, RunID: id}, &opts)
	return err
}
