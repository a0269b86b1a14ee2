package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// MaxCheckContacts is the most contacts one CheckArgs carries; a bigger request is split into several jobs.
const MaxCheckContacts = 500

// CheckArgs asks for the addresses of some contacts with no verdict yet to be checked outside a verification
// run: the campaign engine asks before a lead's first send (Requests). A contact that has a verdict by the time
// the job runs is left as it is.
type CheckArgs struct {
	OrganizationID uuid.UUID   `json:"organization_id"`
	ContactIDs     []uuid.UUID `json:"contact_ids"`
}

// Kind names the job.
func (CheckArgs) Kind() string { return "contacts_verify_unchecked" }

// InsertOpts allows a few attempts (checked contacts are not checked again) and drops a request identical to
// one still waiting or running: the engine asks again for leads still waiting when it looks at them next.
func (CheckArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: runAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning,
		rivertype.JobStateScheduled}}}
}

// Requests asks for contacts' first checks with CheckArgs jobs. It is the campaign engine's Verifier (given by
// the composition root: campaigns do not import the verifier), so a lead whose contact was never checked waits
// for the built-in checks before its first send, and a refused address never gets one.
type Requests struct{}

// RequestTx enqueues, in tx, jobs checking the contacts of org, MaxCheckContacts at most in each.
func (Requests) RequestTx(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org uuid.UUID, contacts []uuid.UUID) error {
	var params []river.InsertManyParams
	for chunk := range slices.Chunk(contacts, MaxCheckContacts) {
		params = append(params, river.InsertManyParams{Args: CheckArgs{OrganizationID: org, ContactIDs: chunk}})
	}
	if len(params) == 0 {
		return nil
	}
	_, err := jobs.InsertManyTx(ctx, tx, params)
	return err
}

// CheckWorker carries out CheckArgs: the contacts still without a verdict are checked runBatch at a time and
// their verdicts stored as a verification run stores them (DNS and SMTP between transactions, never inside).
type CheckWorker struct {
	river.WorkerDefaults[CheckArgs]
	Pool *pgxpool.Pool
	// Verifier checks the addresses; nil cancels every job (a process built without one).
	Verifier *Verifier
}

// Timeout bounds one execution: a slice of work plus one batch of slow mail servers, as for a run.
func (w *CheckWorker) Timeout(*river.Job[CheckArgs]) time.Duration { return runTimeout }

// Work checks the job's contacts that still have no verdict. An execution stops after a slice and snoozes; the
// next one finds the contacts checked so far done.
func (w *CheckWorker) Work(ctx context.Context, job *river.Job[CheckArgs]) error {
	if w.Verifier == nil {
		return river.JobCancel(errors.New("contact checks without a verifier"))
	}
	org := job.Args.OrganizationID
	batch := w.Verifier.NewBatch()
	sliceEnd := time.Now().Add(runSlice)
	for ids := range slices.Chunk(job.Args.ContactIDs[:min(len(job.Args.ContactIDs), MaxCheckContacts)], runBatch) {
		if err := w.check(ctx, batch, org, ids); err != nil {
			if ctx.Err() != nil {
				return river.JobSnooze(0) // shutting down: continue at once on the next start
			}
			return err
		}
		if time.Now().After(sliceEnd) {
			return river.JobSnooze(0)
		}
	}
	return nil
}

// check checks those of ids that have no verdict and stores their verdicts.
func (w *CheckWorker) check(ctx context.Context, batch *Batch, org uuid.UUID, ids []uuid.UUID) error {
	var todo []dbq.VerificationUncheckedRow
	err := db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		todo, err = queries.VerificationUnchecked(ctx, tx, dbq.VerificationUncheckedParams{OrganizationID: org, Ids: ids})
		return err
	})
	if err != nil || len(todo) == 0 {
		return err
	}
	check := make([]uuid.UUID, len(todo))
	emails := make([]string, len(todo))
	for i, c := range todo {
		check[i], emails[i] = c.ID, c.Email
	}
	results := batch.Check(ctx, emails)
	if ctx.Err() != nil {
		return ctx.Err() // verdicts cut short by cancellation are not verdicts
	}
	err = db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return queries.VerificationVerdictsApply(ctx, tx, verdicts(org, check, emails, results))
	})
	if err != nil {
		return fmt.Errorf("store verification verdicts: %w", err)
	}
	return nil
}
