package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// RunArgs asks for a verification run to be carried out. The handler that creates the run enqueues it in
// the same transaction.
type RunArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	RunID          uuid.UUID `json:"run_id"`
}

// Kind names the job.
func (RunArgs) Kind() string { return "contacts_verification_run" }

// InsertOpts allows a few attempts: a run resumes where it stopped (checked contacts are marked done in the
// transaction that stores their verdicts), and after the last failed attempt the run is marked failed.
func (RunArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: runAttempts} }

// Sizes and times of a run's work.
const (
	runAttempts = 5
	// runBatch is how many contacts one transaction stores: one DNS and SMTP round per batch, then one short
	// write.
	runBatch = 100
	// runSlice is how long one execution of the job works before it snoozes (immediately available again):
	// a big run never holds a worker slot for its whole length or runs into the job timeout, and the slice's
	// domain cache stays fresh.
	runSlice = time.Minute
	// runTimeout bounds one execution: a slice plus one batch of slow mail servers. It is the jobs package's
	// MaxJobTimeout, so an execution killed with its process is rescued within minutes.
	runTimeout = 5 * time.Minute
)

// RunWorker carries out verification runs.
type RunWorker struct {
	river.WorkerDefaults[RunArgs]
	Pool *pgxpool.Pool
	// Verifier checks the addresses; nil fails every run (a process built without one).
	Verifier *Verifier
	// Jobs enqueues the dispatch of the events a run raises; nil takes the River client running the job.
	Jobs events.Inserter
}

// Timeout bounds one execution of the job (River's default of a minute is shorter than a slice plus a batch).
func (w *RunWorker) Timeout(*river.Job[RunArgs]) time.Duration { return runTimeout }

var queries = dbq.New()

// RunStarted is the bulk_operation.started data of run: the operation id is the run's id, so the realtime
// topic bulk:<run id> follows it.
func RunStarted(run dbq.VerificationRun) events.BulkOperation {
	return events.BulkStarted(run.ID, events.BulkContactsVerification, int64(run.Total), run.CreatedAt)
}

// Work checks the run's remaining contacts a batch at a time until none are left (then the run is completed)
// or the slice is over (then the job snoozes and the next execution continues). DNS and SMTP happen between
// transactions, never inside one.
func (w *RunWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	org, runID := job.Args.OrganizationID, job.Args.RunID
	if w.Verifier == nil {
		_ = w.finish(ctx, org, runID, "failed", "No verifier is configured on the worker that took this run.")
		return river.JobCancel(errors.New("verification run without a verifier"))
	}
	err := db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := queries.VerificationRunStart(ctx, tx, dbq.VerificationRunStartParams{OrganizationID: org, ID: runID})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // finished or deleted meanwhile
	}
	if err != nil {
		return w.retry(ctx, job, fmt.Errorf("start verification run: %w", err))
	}
	batch := w.Verifier.NewBatch()
	sliceEnd := time.Now().Add(runSlice)
	for {
		more, err := w.step(ctx, batch, org, runID)
		if ctx.Err() != nil {
			return river.JobSnooze(0) // shutting down: continue at once on the next start, without spending an attempt
		}
		if err != nil {
			return w.retry(ctx, job, err)
		}
		if !more {
			if err := w.finish(ctx, org, runID, "completed", ""); err != nil {
				return w.retry(ctx, job, err) // the next attempt finds nothing left and completes it
			}
			return nil
		}
		if time.Now().After(sliceEnd) {
			return river.JobSnooze(0)
		}
	}
}

// step checks one batch of the run and stores it; more is false when the run had nothing left.
func (w *RunWorker) step(ctx context.Context, batch *Batch, org, runID uuid.UUID) (more bool, err error) {
	var todo []dbq.VerificationRunTodoRow
	err = db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		todo, err = queries.VerificationRunTodo(ctx, tx, dbq.VerificationRunTodoParams{OrganizationID: org, RunID: runID, RowLimit: runBatch})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("read verification run contacts: %w", err)
	}
	if len(todo) == 0 {
		return false, nil
	}
	ids := make([]uuid.UUID, len(todo))
	var check []uuid.UUID
	var emails []string
	for i, c := range todo {
		ids[i] = c.ID
		if c.VerificationSource == "imported" || c.VerificationSource == "provider" {
			continue // kept as it is; counted by its own verdict
		}
		check = append(check, c.ID)
		emails = append(emails, c.Email)
	}
	results := batch.Check(ctx, emails)
	if ctx.Err() != nil {
		return false, ctx.Err() // verdicts cut short by cancellation are not verdicts
	}
	args := verdicts(org, check, emails, results)
	err = db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if len(args.Ids) > 0 {
			if err := queries.VerificationVerdictsApply(ctx, tx, args); err != nil {
				return err
			}
		}
		done, err := queries.VerificationRunContactsDone(ctx, tx, dbq.VerificationRunContactsDoneParams{OrganizationID: org, RunID: runID, ContactIds: ids})
		if err != nil || len(done) == 0 {
			return err
		}
		return queries.VerificationRunTally(ctx, tx, dbq.VerificationRunTallyParams{OrganizationID: org, RunID: runID, ContactIds: done})
	})
	if err != nil {
		return false, fmt.Errorf("store verification verdicts: %w", err)
	}
	return true, nil
}

// verdicts are the built-in verifier's results for the contacts ids (with the addresses emails they were
// checked at) as VerificationVerdictsApply stores them.
func verdicts(org uuid.UUID, ids []uuid.UUID, emails []string, results []Result) dbq.VerificationVerdictsApplyParams {
	args := dbq.VerificationVerdictsApplyParams{OrganizationID: org, Source: Source, Provider: Provider, Ids: ids, Emails: emails}
	for _, r := range results {
		args.Statuses = append(args.Statuses, string(r.Status))
		args.SubStatuses = append(args.SubStatuses, r.SubStatus)
		args.Reasons = append(args.Reasons, oneLine(r.Reason, maxReason))
		args.Confidences = append(args.Confidences, int16(r.Confidence))
		args.CatchAlls = append(args.CatchAlls, r.CatchAll)
	}
	return args
}

// retry hands err back to River for another attempt, and marks the run failed when this was the last one.
// The run's error is a fixed sentence: the cause is in the job's log, not in what the API shows.
func (w *RunWorker) retry(ctx context.Context, job *river.Job[RunArgs], err error) error {
	if job.Attempt >= job.MaxAttempts {
		_ = w.finish(ctx, job.Args.OrganizationID, job.Args.RunID, "failed",
			fmt.Sprintf("The run stopped after %d failed attempts; contacts checked before that keep their verdicts.", job.Attempt))
	}
	return err
}

// finish ends the run (completed, or failed with msg) and raises bulk_operation.completed or .failed in the
// same transaction; a run that had already ended raises nothing again.
func (w *RunWorker) finish(ctx context.Context, org, runID uuid.UUID, status, msg string) error {
	jobs := w.Jobs
	if jobs == nil {
		jobs = river.ClientFromContext[pgx.Tx](ctx)
	}
	outbox := events.NewOutbox(jobs)
	err := db.WithOrgTx(context.WithoutCancel(ctx), w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		run, err := queries.VerificationRunFinish(ctx, tx, dbq.VerificationRunFinishParams{
			OrganizationID: org, ID: runID, Status: status, Error: msg})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		typ, data := RunStarted(run).Finished(int64(run.Processed), int64(run.Total-run.Processed), msg, *run.FinishedAt)
		_, err = outbox.Emit(ctx, tx, typ, data)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish verification run: %w", err)
	}
	return nil
}
