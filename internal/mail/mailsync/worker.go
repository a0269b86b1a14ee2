package mailsync

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// QueueName is the sync jobs' queue: each job holds one IMAP connection for up to RunLength, so they must not
// take the default queue's workers.
const QueueName = "sync"

// QueueWorkers is how many mailboxes one worker process syncs at once.
const QueueWorkers = 100

// RunLength is how long one sync job follows its mailbox before it hands the mailbox back to the supervisor
// (which starts the next job at once, here or in another process). It is short enough that a job killed with
// its process (which holds the mailbox's unique job while River still sees it running) is rescued within
// minutes: its timeout, RunLength plus a minute, is the jobs package's MaxJobTimeout. The price is one IMAP
// login per mailbox every few minutes.
const RunLength = 4 * time.Minute

// SupervisorInterval is how often the supervisor looks for mailboxes nobody syncs.
const SupervisorInterval = 30 * time.Second

// Args asks for one mailbox's sync. Jobs are unique per mailbox while queued or running.
type Args struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	MailboxID      uuid.UUID `json:"mailbox_id"`
}

// Kind names the job.
func (Args) Kind() string { return "mailbox_sync" }

// InsertOpts puts the job on the sync queue, one per mailbox at a time.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// Worker works Args.
type Worker struct {
	river.WorkerDefaults[Args]
	Syncer *Syncer
}

// Timeout lets a job follow its mailbox for RunLength (plus time to wind down).
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return RunLength + time.Minute }

// Work syncs the mailbox for RunLength. Another live holder of the mailbox is not an error: that process
// syncs it.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	ctx, cancel := context.WithTimeout(ctx, RunLength)
	defer cancel()
	err := w.Syncer.Run(ctx, events.NewOutbox(river.ClientFromContext[pgx.Tx](ctx)), job.Args.OrganizationID, job.Args.MailboxID)
	if errors.Is(err, ErrLeaseHeld) {
		return nil
	}
	return err
}

// SupervisorArgs is the periodic job that starts a sync job for every active mailbox nobody syncs.
type SupervisorArgs struct{}

// Kind names the job.
func (SupervisorArgs) Kind() string { return "mailbox_sync_supervisor" }

// SupervisorWorker works SupervisorArgs.
type SupervisorWorker struct {
	river.WorkerDefaults[SupervisorArgs]
	Syncer *Syncer
}

// supervisorBatch bounds the mailboxes one pass starts.
const supervisorBatch = 1000

// Work enqueues a sync job for each active mailbox without a live lease; uniqueness drops those already queued.
func (w *SupervisorWorker) Work(ctx context.Context, _ *river.Job[SupervisorArgs]) error {
	due, err := queries.MailboxSyncUnleased(ctx, w.Syncer.Pool, dbq.MailboxSyncUnleasedParams{Now: time.Now(), RowLimit: supervisorBatch})
	if err != nil || len(due) == 0 {
		return err
	}
	params := make([]river.InsertManyParams, len(due))
	for i, d := range due {
		params[i] = river.InsertManyParams{Args: Args{OrganizationID: d.OrganizationID, MailboxID: d.ID}}
	}
	_, err = river.ClientFromContext[pgx.Tx](ctx).InsertMany(ctx, params)
	return err
}
