package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/apps"
	"github.com/outflowhq/outflow/internal/agents/runs"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/testrun"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/heartbeat"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
)

// Deps is what the workers need from the rest of the process.
type Deps struct {
	Pool        *pgxpool.Pool
	Logger      *slog.Logger
	Dispatcher  *events.Dispatcher
	Idempotency *idempotency.Store
	// Notifications delivers queued notification emails and pushes.
	Notifications *notify.Deliverer
	// Webhooks makes webhook delivery attempts and sweeps stalled deliveries.
	Webhooks *delivery.Deliverer
	// Verifier checks addresses for contact verification runs and for contacts' first checks before a campaign
	// sends to them.
	Verifier *verify.Verifier
	// Sending works send tasks (nil on insert-only clients, which never run them).
	Sending *sending.Pipeline
	// Syncer keeps mailboxes' IMAP folders in the inbox store (nil on insert-only clients).
	Syncer *mailsync.Syncer
	// TestRuns carries campaign test runs forward (nil on insert-only clients).
	TestRuns *testrun.Runner
	// Engine plans active campaigns' due leads into sends (nil on insert-only clients).
	Engine *engine.Engine
	// Resolver answers the mailbox DNS sweep's lookups; TrackingHost is the tracking domains' CNAME target.
	Resolver     dnscheck.Resolver
	TrackingHost string
	// Clicks applies human clicks' deferred effects (nil on insert-only clients).
	Clicks *tracking.Clicks
	// Approvals expires approvals nobody decided in time (nil on insert-only clients).
	Approvals *approvals.Service
	// Runs carries agent runs through preflight and keeps launched ones in step with their campaigns (nil on
	// insert-only clients).
	Runs *runs.Runner
	// AppActions makes app_action steps' calls to customer apps (nil on insert-only clients).
	AppActions *apps.Actions
}

// Options choose what this process does with jobs.
type Options struct {
	// Work makes the client fetch and run jobs (roles worker and all); otherwise it only inserts.
	Work bool
	// MaxWorkers is how many jobs of the default queue run at once.
	MaxWorkers int
	// SoftStopTimeout is how long running jobs get to finish on shutdown before their contexts are canceled.
	SoftStopTimeout time.Duration
	// RetryPolicy schedules a failed job's next attempt; nil is River's (attempt^4 seconds). Tests of retry
	// limits make it immediate.
	RetryPolicy river.ClientRetryPolicy
}

// Crash recovery. A process that dies mid-job (kill -9, out of memory, a lost machine) leaves its jobs in
// state running. River's rescuer, run every 30 s by the elected leader (a dead leader is replaced within
// about 15 s), puts such a job back in the queue (or discards it on its last attempt) once it has been
// running longer than RescueStuckJobsAfter and longer than its own timeout. So a job killed with its process
// runs again within max(RescueStuckJobsAfter, its timeout) plus under a minute: at most MaxJobTimeout plus
// under a minute. The timeouts, by queue:
//
//   - default: JobTimeout (heartbeat, sweeps, notifications, contact indexing, challenges, campaign test-run
//     steps, an ambiguous send's Sent folder check and a sent message's copy in Sent); verification runs and first checks, the mailbox DNS sweep and the segment enrolment declare
//     MaxJobTimeout (a slice of work plus one slow batch).
//   - events: JobTimeout, while the dispatcher cuts one dispatch at events.HandlerTimeout (30 s).
//   - webhooks: delivery.RequestTimeout plus 30 s (the HTTP exchange, the claim and the record).
//   - send: 3 minutes (a connect, a login and one message, each with its own shorter timeout).
//   - sync: MaxJobTimeout (mailsync.RunLength of following a mailbox, plus a minute to wind down).
const (
	// JobTimeout bounds a job whose worker declares no Timeout: those are a few statements or one short
	// exchange, done in seconds, and a minute (River's default) cuts one that hangs without cutting a slow one.
	JobTimeout = time.Minute
	// RescueStuckJobsAfter is how long a job must have been running before the rescuer takes it for dead (River's
	// default is an hour). It is JobTimeout plus a minute: a live job that overruns JobTimeout has its context
	// canceled and a minute to return before it could be run twice.
	RescueStuckJobsAfter = JobTimeout + time.Minute
	// MaxJobTimeout is the longest Timeout a worker may declare: NewClient refuses a longer one, since a job
	// killed with its process stays running until its timeout has passed.
	MaxJobTimeout = 5 * time.Minute
)

// The fetch cooldown and poll interval of the queues of short, latency-sensitive jobs (event dispatch, webhook
// attempts).
const (
	ShortJobFetchCooldown     = 10 * time.Millisecond
	ShortJobFetchPollInterval = 100 * time.Millisecond
)

// NewClient builds the River client. Every worker is registered even on insert-only clients, so inserting a
// job of an unknown kind fails at the call site instead of sitting in the queue.
func NewClient(deps Deps, opts Options) (*river.Client[pgx.Tx], error) {
	workers := &registry{workers: river.NewWorkers()}
	register(workers, &eventDispatchWorker{dispatcher: deps.Dispatcher})
	register(workers, &heartbeatWorker{pool: deps.Pool})
	register(workers, &idempotencySweepWorker{store: deps.Idempotency})
	register(workers, &credentialSweepWorker{pool: deps.Pool})
	register(workers, &outboxPruneWorker{pool: deps.Pool})
	register(workers, &notificationDeliverWorker{deliverer: deps.Notifications})
	register(workers, &webhookAttemptWorker{deliverer: deps.Webhooks})
	register(workers, &webhookSweepWorker{deliverer: deps.Webhooks})
	register(workers, &webhookChallengeWorker{deliverer: deps.Webhooks})
	register(workers, &contacts.IndexWorker{Pool: deps.Pool})
	register(workers, &verify.RunWorker{Pool: deps.Pool, Verifier: deps.Verifier})
	register(workers, &verify.CheckWorker{Pool: deps.Pool, Verifier: deps.Verifier})
	register(workers, &sending.Worker{Pipeline: deps.Sending})
	register(workers, &sending.CheckWorker{Pipeline: deps.Sending})
	register(workers, &sending.CopyWorker{Pipeline: deps.Sending})
	register(workers, &mailsync.Worker{Syncer: deps.Syncer})
	register(workers, &mailsync.SupervisorWorker{Syncer: deps.Syncer})
	register(workers, &mailsync.SeenWorker{Syncer: deps.Syncer})
	register(workers, &mailsync.MoveWorker{Syncer: deps.Syncer})
	register(workers, &mailbox.DNSSweepWorker{Pool: deps.Pool, Resolver: deps.Resolver, TrackingHost: deps.TrackingHost})
	register(workers, &testrun.Worker{Runner: deps.TestRuns})
	register(workers, &segmentEnrollWorker{pool: deps.Pool})
	register(workers, &engine.Worker{Engine: deps.Engine})
	register(workers, &tracking.ClickWorker{Clicks: deps.Clicks})
	register(workers, &approvals.ExpireWorker{Service: deps.Approvals})
	register(workers, &runs.AdvanceWorker{Runner: deps.Runs})
	register(workers, &runs.SyncWorker{Runner: deps.Runs})
	register(workers, &apps.Worker{Actions: deps.AppActions})
	if workers.err != nil {
		return nil, workers.err
	}

	cfg := &river.Config{
		Logger:               deps.Logger.With(slog.String("component", "river")),
		Workers:              workers.workers,
		ErrorHandler:         &errorHandler{logger: deps.Logger},
		SoftStopTimeout:      opts.SoftStopTimeout,
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: RescueStuckJobsAfter,
		RetryPolicy:          opts.RetryPolicy,
	}
	if opts.Work {
		cfg.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: opts.MaxWorkers},
			// Event dispatch and webhook attempts are short jobs on the path from a committed change to a
			// subscriber: a 10 ms fetch cooldown (River's default is 100 ms) lifts their ceiling from
			// MaxWorkers/0.1 s to MaxWorkers/0.01 s jobs a second, and a 100 ms poll (default 1 s) bounds the
			// wait for a job whose insert notification River's limiter held back.
			events.QueueName: {MaxWorkers: opts.MaxWorkers, FetchCooldown: ShortJobFetchCooldown,
				FetchPollInterval: ShortJobFetchPollInterval},
			delivery.QueueName: {MaxWorkers: delivery.QueueWorkers, FetchCooldown: ShortJobFetchCooldown,
				FetchPollInterval: ShortJobFetchPollInterval},
			// Sends too: a message is due now and the mailbox's turn should not wait 100 ms for a fetch.
			sending.QueueName: {MaxWorkers: sending.QueueWorkers, FetchCooldown: ShortJobFetchCooldown,
				FetchPollInterval: ShortJobFetchPollInterval},
			// Mailbox syncs: long jobs, one IMAP connection each.
			mailsync.QueueName: {MaxWorkers: mailsync.QueueWorkers},
		}
		cfg.PeriodicJobs = []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(heartbeat.Interval),
				func() (river.JobArgs, *river.InsertOpts) { return HeartbeatArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return IdempotencySweepArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return CredentialSweepArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(mailsync.SupervisorInterval),
				func() (river.JobArgs, *river.InsertOpts) { return mailsync.SupervisorArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(mailbox.DNSSweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return mailbox.DNSSweepArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return OutboxPruneArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(delivery.SweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return delivery.SweepArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(engine.Interval),
				func() (river.JobArgs, *river.InsertOpts) { return engine.Args{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(campaign.SegmentEnrollInterval),
				func() (river.JobArgs, *river.InsertOpts) { return SegmentEnrollArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
		}
	}
	return river.NewClient(riverpgxv5.New(deps.Pool), cfg)
}

// registry registers workers and checks that each one's timeout keeps the crash-recovery promise.
type registry struct {
	workers *river.Workers
	err     error
}

// register adds w to r; a Timeout over MaxJobTimeout (or none at all) is an error NewClient returns.
func register[T river.JobArgs](r *registry, w river.Worker[T]) {
	river.AddWorker(r.workers, w)
	if timeout := w.Timeout(&river.Job[T]{}); timeout < 0 || timeout > MaxJobTimeout {
		var args T
		r.err = errors.Join(r.err, fmt.Errorf("jobs: %s declares a timeout of %s; at most %s (MaxJobTimeout) lets a job killed with its process run again within minutes",
			args.Kind(), timeout, MaxJobTimeout))
	}
}

// errorHandler logs every failed or panicking job with its kind, id and attempt; River retries it.
type errorHandler struct {
	logger *slog.Logger
}

func (h *errorHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.logger.ErrorContext(ctx, "job failed", slog.String("kind", job.Kind), slog.Int64("job_id", job.ID),
		slog.Int("attempt", job.Attempt), slog.String("error", err.Error()))
	return nil
}

func (h *errorHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	h.logger.ErrorContext(ctx, "job panicked", slog.String("kind", job.Kind), slog.Int64("job_id", job.ID),
		slog.Int("attempt", job.Attempt), slog.Any("panic", panicVal), slog.String("trace", trace))
	return nil
}
