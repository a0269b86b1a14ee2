package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
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
	// Verifier checks addresses for contact verification runs.
	Verifier *verify.Verifier
	// Sending works send tasks (nil on insert-only clients, which never run them).
	Sending *sending.Pipeline
	// Syncer keeps mailboxes' IMAP folders in the inbox store (nil on insert-only clients).
	Syncer *mailsync.Syncer
	// Resolver answers the mailbox DNS sweep's lookups; TrackingHost is the tracking domains' CNAME target.
	Resolver     dnscheck.Resolver
	TrackingHost string
}

// Options choose what this process does with jobs.
type Options struct {
	// Work makes the client fetch and run jobs (roles worker and all); otherwise it only inserts.
	Work bool
	// MaxWorkers is how many jobs of the default queue run at once.
	MaxWorkers int
	// SoftStopTimeout is how long running jobs get to finish on shutdown before their contexts are canceled.
	SoftStopTimeout time.Duration
}

// The fetch cooldown and poll interval of the queues of short, latency-sensitive jobs (event dispatch, webhook
// attempts).
const (
	ShortJobFetchCooldown     = 10 * time.Millisecond
	ShortJobFetchPollInterval = 100 * time.Millisecond
)

// NewClient builds the River client. Every worker is registered even on insert-only clients, so inserting a
// job of an unknown kind fails at the call site instead of sitting in the queue.
func NewClient(deps Deps, opts Options) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &eventDispatchWorker{dispatcher: deps.Dispatcher})
	river.AddWorker(workers, &heartbeatWorker{pool: deps.Pool})
	river.AddWorker(workers, &idempotencySweepWorker{store: deps.Idempotency})
	river.AddWorker(workers, &credentialSweepWorker{pool: deps.Pool})
	river.AddWorker(workers, &notificationDeliverWorker{deliverer: deps.Notifications})
	river.AddWorker(workers, &webhookAttemptWorker{deliverer: deps.Webhooks})
	river.AddWorker(workers, &webhookSweepWorker{deliverer: deps.Webhooks})
	river.AddWorker(workers, &webhookChallengeWorker{deliverer: deps.Webhooks})
	river.AddWorker(workers, &contacts.IndexWorker{Pool: deps.Pool})
	river.AddWorker(workers, &verify.RunWorker{Pool: deps.Pool, Verifier: deps.Verifier})
	river.AddWorker(workers, &sending.Worker{Pipeline: deps.Sending})
	river.AddWorker(workers, &mailsync.Worker{Syncer: deps.Syncer})
	river.AddWorker(workers, &mailsync.SupervisorWorker{Syncer: deps.Syncer})
	river.AddWorker(workers, &mailsync.SeenWorker{Syncer: deps.Syncer})
	river.AddWorker(workers, &mailbox.DNSSweepWorker{Pool: deps.Pool, Resolver: deps.Resolver, TrackingHost: deps.TrackingHost})

	cfg := &river.Config{
		Logger:          deps.Logger.With(slog.String("component", "river")),
		Workers:         workers,
		ErrorHandler:    &errorHandler{logger: deps.Logger},
		SoftStopTimeout: opts.SoftStopTimeout,
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
			river.NewPeriodicJob(river.PeriodicInterval(delivery.SweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return delivery.SweepArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
		}
	}
	return river.NewClient(riverpgxv5.New(deps.Pool), cfg)
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
