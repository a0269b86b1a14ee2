package sending

import (
	"context"
	"errors"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// What a mailbox's server does with the mail it sends (mailboxes.sent_copies), learned from the first sent
// message looked for in its Sent folder.
const (
	// SentCopiesUnknown: nothing looked for yet.
	SentCopiesUnknown = "unknown"
	// SentCopiesServer: the server files a copy of every message it sends (Gmail, Microsoft 365), so an
	// ambiguous message absent from Sent did not leave.
	SentCopiesServer = "server"
	// SentCopiesAppend: it does not; the pipeline appends the copies itself.
	SentCopiesAppend = "append"
)

// How an ambiguous send ends when a person decides (POST .../decision).
const (
	DecisionResend = "resend"
	DecisionSkip   = "skip"
)

// SentFolderDelay is how long after a send the pipeline looks in the mailbox's Sent folder (to settle an
// ambiguous send, or to learn whether the server files its copies): servers that file sent mail do so within
// seconds, and a look too early would take a message on its way for one that never left.
const SentFolderDelay = time.Minute

// CheckArgs is the job that settles an ambiguous task from its mailbox's Sent folder.
type CheckArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	TaskID         uuid.UUID `json:"task_id"`
}

// Kind names the job.
func (CheckArgs) Kind() string { return "send_outcome_check" }

// checkAttempts is how often the Sent folder is tried (it may be unreachable for a while) before a person decides.
const checkAttempts = 5

// InsertOpts gives the check a few tries.
func (CheckArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: checkAttempts} }

// CopyArgs is the job that files a sent message's copy in its mailbox's Sent folder.
type CopyArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	TaskID         uuid.UUID `json:"task_id"`
}

// Kind names the job.
func (CopyArgs) Kind() string { return "send_sent_copy" }

// InsertOpts gives the copy a few tries; a server that keeps refusing gets no copy, the send stands.
func (CopyArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// ambiguous records that a handed-over message's outcome is unknown, queues the Sent folder check and tells
// the settle hook (a campaign lead keeps waiting on it). It answers 0 when the task was no longer the
// attempt's to settle.
func (p *Pipeline) ambiguous(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask, code, message string) (int64, error) {
	n, err := queries.SendTaskAmbiguous(ctx, tx, dbq.SendTaskAmbiguousParams{OrganizationID: t.OrganizationID, ID: t.ID,
		Attempts: t.Attempts, ErrorCode: code, ErrorMessage: message})
	if err != nil || n == 0 {
		return n, err
	}
	if _, err := outbox.Jobs().InsertTx(ctx, tx, CheckArgs{OrganizationID: t.OrganizationID, TaskID: t.ID},
		&river.InsertOpts{ScheduledAt: p.now().Add(p.sentFolderDelay)}); err != nil {
		return 0, err
	}
	return n, p.settled(ctx, tx, outbox, Settled{Task: t, Status: StatusAmbiguous, Code: code, Message: message})
}

// oweCopy queues the filing of a sent message's copy in the Sent folder (the server's habit unknown, or known
// not to file one itself); an unknown habit is learned after SentFolderDelay.
func (p *Pipeline) oweCopy(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask, m dbq.Mailbox) error {
	at := p.now()
	if m.SentCopies == SentCopiesUnknown {
		at = at.Add(p.sentFolderDelay)
	}
	_, err := outbox.Jobs().InsertTx(ctx, tx, CopyArgs{OrganizationID: t.OrganizationID, TaskID: t.ID}, &river.InsertOpts{ScheduledAt: at})
	return err
}

// WithSentFolderDelay sets how long after a send the Sent folder is looked at (SentFolderDelay unless set; a
// test's in-process server files its copy at once). It is set before the pipeline works any task.
func (p *Pipeline) WithSentFolderDelay(d time.Duration) *Pipeline {
	p.sentFolderDelay = d
	return p
}

// load reads a task and its mailbox in the task's organization (pgx.ErrNoRows: either is gone).
func (p *Pipeline) load(ctx context.Context, org, id uuid.UUID) (dbq.SendTask, dbq.Mailbox, error) {
	var t dbq.SendTask
	var m dbq.Mailbox
	err := db.WithOrgTx(ctx, p.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if t, err = queries.SendTaskGet(ctx, tx, dbq.SendTaskGetParams{OrganizationID: org, ID: id}); err != nil {
			return err
		}
		if !t.MailboxID.Valid {
			return pgx.ErrNoRows
		}
		m, err = queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: t.MailboxID.UUID})
		return err
	})
	return t, m, err
}

// sentFolder opens an IMAP session on the mailbox with its Sent folder selected; the session is closed when
// ctx ends, whatever the caller does.
func (p *Pipeline) sentFolder(ctx context.Context, outbox *events.Outbox, m dbq.Mailbox) (*imapclient.Client, string, error) {
	if m.Status != "active" {
		return nil, "", errors.New("sending: the mailbox is " + m.Status)
	}
	_, srv, err := p.creds.Servers(ctx, outbox, m)
	if err != nil {
		return nil, "", err
	}
	c, err := p.conns.dialer.IMAP(ctx, srv, nil)
	if err != nil {
		return nil, "", err
	}
	context.AfterFunc(ctx, func() { _ = c.Close() })
	name, err := mailbox.SentFolder(c)
	if err == nil {
		_, err = c.Select(name, nil).Wait()
	}
	if err != nil {
		_ = c.Close()
		return nil, "", err
	}
	return c, name, nil
}

// CheckWorker is the River worker of CheckArgs.
type CheckWorker struct {
	river.WorkerDefaults[CheckArgs]
	Pipeline *Pipeline
}

// Timeout bounds one look: a login and one search.
func (w *CheckWorker) Timeout(*river.Job[CheckArgs]) time.Duration { return time.Minute }

// Work settles the task when its Sent folder can; the last failed try leaves it to a person.
func (w *CheckWorker) Work(ctx context.Context, job *river.Job[CheckArgs]) error {
	outbox := events.NewOutbox(river.ClientFromContext[pgx.Tx](ctx))
	return w.Pipeline.CheckOutcome(ctx, outbox, job.Args, job.Attempt >= job.MaxAttempts)
}

// CheckOutcome settles an ambiguous task from its mailbox's Sent folder: found there, it was sent; absent
// from a server that files what it sends, it did not leave and is sent again; otherwise (a server that files
// nothing, or no look possible on the last try) a person decides. A task settled meanwhile needs nothing.
func (p *Pipeline) CheckOutcome(ctx context.Context, outbox *events.Outbox, a CheckArgs, last bool) error {
	t, m, err := p.load(ctx, a.OrganizationID, a.TaskID)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (t.Status != StatusAmbiguous || t.OutcomeCheck != "checking") {
		return nil
	}
	if err != nil {
		return err
	}
	found, err := p.lookFor(ctx, outbox, m, t.MessageID)
	if err != nil && !last {
		return err
	}
	org := a.OrganizationID
	return db.WithOrgTx(context.WithoutCancel(ctx), p.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		switch {
		case err != nil:
			// The folder could not be read in time: a person decides.
		case found:
			n, err := queries.SendTaskOutcomeFound(ctx, tx, dbq.SendTaskOutcomeFoundParams{OrganizationID: org, ID: t.ID})
			if err != nil || n == 0 {
				return err
			}
			if err := p.learn(ctx, tx, m, SentCopiesServer); err != nil {
				return err
			}
			return p.settled(ctx, tx, outbox, Settled{Task: t, Status: StatusSent})
		case m.SentCopies == SentCopiesServer:
			return p.resend(ctx, tx, outbox, t, "checking", uuid.NullUUID{})
		}
		n, err := queries.SendTaskOutcomeUndecided(ctx, tx, dbq.SendTaskOutcomeUndecidedParams{OrganizationID: org, ID: t.ID})
		if err != nil || n == 0 {
			return err
		}
		// The mailbox's error log (and email_account.error) tells a person there is something to decide.
		return mailbox.Raise(ctx, tx, outbox, m, mailbox.ConditionSendUndecided,
			"The send to "+t.ToEmail+" ("+t.MessageID+") may or may not have gone out, and the mailbox's Sent folder cannot tell; resend or skip it.")
	})
}

// lookFor reports whether the mailbox's Sent folder holds the message with this Message-ID.
func (p *Pipeline) lookFor(ctx context.Context, outbox *events.Outbox, m dbq.Mailbox, messageID string) (bool, error) {
	c, _, err := p.sentFolder(ctx, outbox, m)
	if err != nil {
		return false, err
	}
	defer func() { _ = c.Close() }()
	found, err := mailbox.FindMessageID(c, messageID)
	if err != nil {
		return false, err
	}
	_ = c.Logout().Wait()
	return found, nil
}

// learn records what the mailbox's server does with sent mail, once.
func (p *Pipeline) learn(ctx context.Context, tx pgx.Tx, m dbq.Mailbox, habit string) error {
	if m.SentCopies != SentCopiesUnknown {
		return nil
	}
	return queries.MailboxSentCopiesLearned(ctx, tx, dbq.MailboxSentCopiesLearnedParams{OrganizationID: m.OrganizationID,
		ID: m.ID, SentCopies: habit})
}

// resend puts an ambiguous task (its check at fromCheck) back in the queue with a new job; by names the
// person who decided (none: the Sent folder did). The settle hook is not told: a campaign lead keeps waiting
// on the same task.
func (p *Pipeline) resend(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask, fromCheck string, by uuid.NullUUID) error {
	n, err := queries.SendTaskOutcomeResend(ctx, tx, dbq.SendTaskOutcomeResendParams{OrganizationID: t.OrganizationID, ID: t.ID,
		FromCheck: fromCheck, DecidedBy: by})
	if err != nil || n == 0 {
		return err
	}
	_, err = outbox.Jobs().InsertTx(ctx, tx, Args{OrganizationID: t.OrganizationID, TaskID: t.ID, MailboxID: t.MailboxID.UUID}, nil)
	return err
}

// ErrNotUndecided is answered by Decide for a send that is not waiting for a person's decision.
var ErrNotUndecided = errors.New("sending: the send is not waiting for a decision")

// Decide applies a person's decision on an ambiguous send of mailbox mailboxID that its Sent folder could not
// settle: resend puts it back in the queue (its caps and gates apply again), skip leaves it unsent for good
// and lets a campaign lead move on without counting it. It answers the task as it was (pgx.ErrNoRows: no such
// send of the mailbox; ErrNotUndecided: nothing to decide).
func (p *Pipeline) Decide(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, org, mailboxID, id, by uuid.UUID, decision string) (dbq.SendTask, error) {
	t, err := queries.SendTaskForMailbox(ctx, tx, dbq.SendTaskForMailboxParams{OrganizationID: org, ID: id,
		MailboxID: uuid.NullUUID{UUID: mailboxID, Valid: true}})
	if err != nil {
		return t, err
	}
	if t.Status != StatusAmbiguous || t.OutcomeCheck != "needs_decision" {
		return t, ErrNotUndecided
	}
	who := uuid.NullUUID{UUID: by, Valid: true}
	if decision == DecisionResend {
		err = p.resend(ctx, tx, outbox, t, "needs_decision", who)
	} else if _, err = queries.SendTaskOutcomeSkip(ctx, tx, dbq.SendTaskOutcomeSkipParams{OrganizationID: org, ID: id, DecidedBy: who}); err == nil {
		err = p.settled(ctx, tx, outbox, Settled{Task: t, Status: StatusSkipped})
	}
	if err != nil {
		return t, err
	}
	// The last decision closes the mailbox's error-log entry.
	left, err := queries.SendTasksUndecidedAny(ctx, tx, dbq.SendTasksUndecidedAnyParams{OrganizationID: org, MailboxID: t.MailboxID})
	if err != nil || left {
		return t, err
	}
	return t, mailbox.Resolve(ctx, tx, dbq.Mailbox{OrganizationID: org, ID: mailboxID}, mailbox.ConditionSendUndecided)
}
