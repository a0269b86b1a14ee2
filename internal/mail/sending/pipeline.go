package sending

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Kinds of send task. Campaign and direct sends are capped: charged to the mailbox's daily cap and gap.
const (
	KindCampaign = "campaign"
	KindDirect   = "direct"
	KindReply    = "reply"
	KindWarmup   = "warmup"
)

func capped(kind string) bool { return kind == KindCampaign || kind == KindDirect }

// MaxAttempts is how many attempts a task gets; the fifth transient failure fails it for good.
const MaxAttempts = 5

// retryAfter is the wait before attempt n+1 after n transient failures: 1, 2, 4, 8 minutes.
func retryAfter(n int32) time.Duration {
	return time.Minute << min(max(n-1, 0), 6)
}

var queries = dbq.New()

// Message is what a sender asks the pipeline to send. Addresses are normalized (lower case, no display name).
type Message struct {
	// ID is the task's id when the caller needs it first (a UUIDv7, to sign tracking tokens); zero: EnqueueMany makes one.
	ID uuid.UUID
	// Kind is one of the Kind constants.
	Kind string
	// To, Cc and Bcc are the recipients; To needs at least one.
	To, Cc, Bcc []string
	Subject     string
	// Text and HTML are the bodies; either may be empty.
	Text, HTML string
	// InReplyTo and References thread the message (Message-IDs, with or without angle brackets).
	InReplyTo  string
	References []string
	// ContactID, CampaignID, StepID and StepName tie the send to what it is part of (optional).
	ContactID, CampaignID, StepID uuid.NullUUID
	StepName                      string
	// VariantID is the A/B variant a campaign send carries (invalid: the step's own content).
	VariantID uuid.NullUUID
	// Mode is instant, smart or scheduled (how NotBefore was chosen); NotBefore zero means now.
	Mode      string
	NotBefore time.Time
	// Attachments are campaign attachment ids, read when the message is built (at most 20).
	Attachments []uuid.UUID
	// Signed says the bodies already carry the mailbox's signature (a template placed it), so signature_sync
	// appends none.
	Signed bool
	// UnsubscribeURL is the https address of the recipient's unsubscribe page (a campaign send whose
	// unsubscribe_header is on): the message carries it in List-Unsubscribe with List-Unsubscribe-Post (see
	// build). Empty: no List-Unsubscribe header.
	UnsubscribeURL string
	// ThreadID is the inbox thread a reply or composed message belongs to (invalid: none), so the inbox's
	// scheduled list can show and filter it.
	ThreadID uuid.NullUUID
}

// Args is the River job that works one send task.
type Args struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	TaskID         uuid.UUID `json:"task_id"`
	// MailboxID is the task's mailbox: claims on one mailbox queue in process before they queue on its row.
	MailboxID uuid.UUID `json:"mailbox_id"`
}

// Kind names the job.
func (Args) Kind() string { return "send_task" }

// QueueName is the send jobs' own queue, so a backlog of other work never holds sends back.
const QueueName = "send"

// QueueWorkers is how many send jobs a worker process runs at once. Attempts on one mailbox take turns
// anyway; more mailboxes than this send in turn.
const QueueWorkers = 20

// InsertOpts puts the job on the send queue with room for retries of its own (database errors); the
// pipeline's attempts and waits are counted on the task, with the job snoozed in between.
func (Args) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueName, MaxAttempts: 10} }

// Enqueue writes a send task for m and its job in the caller's transaction, and returns the task (its
// Message-ID included). Nothing is sent if tx rolls back.
func Enqueue(ctx context.Context, tx pgx.Tx, jobs events.Inserter, m dbq.Mailbox, msg Message) (dbq.SendTask, error) {
	tasks, err := EnqueueMany(ctx, tx, jobs, []Outgoing{{From: &m, Message: msg}})
	if err != nil {
		return dbq.SendTask{}, err
	}
	return tasks[0], nil
}

// Outgoing is a message with the mailbox it goes from.
type Outgoing struct {
	From *dbq.Mailbox
	Message
}

// EnqueueMany is Enqueue for several messages, from one mailbox or many, in two round trips whatever their
// number (the tasks in one batch, their jobs in one insert): a planner enqueues a whole pass at once. The
// tasks come back in the order of out.
func EnqueueMany(ctx context.Context, tx pgx.Tx, jobs events.Inserter, out []Outgoing) ([]dbq.SendTask, error) {
	now := time.Now()
	params := make([]dbq.SendTaskInsertParams, len(out))
	inserts := make([]river.InsertManyParams, len(out))
	for i, o := range out {
		m, msg := o.From, o.Message
		if len(msg.To) == 0 {
			return nil, errors.New("sending: a message needs a recipient")
		}
		id, err := msg.ID, error(nil)
		if id == uuid.Nil {
			id, err = uuid.NewV7()
		}
		if err != nil {
			return nil, err
		}
		notBefore := msg.NotBefore
		if notBefore.IsZero() {
			notBefore = now
		}
		from := FromAddress(*m)
		params[i] = dbq.SendTaskInsertParams{
			OrganizationID: m.OrganizationID, ID: id, Kind: msg.Kind, MailboxID: uuid.NullUUID{UUID: m.ID, Valid: true},
			FromEmail: from, FromName: m.Name, ContactID: msg.ContactID, ToEmail: msg.To[0], ToList: msg.To,
			Cc: nonNil(msg.Cc), Bcc: nonNil(msg.Bcc), InReplyTo: msg.InReplyTo, ThreadReferences: nonNil(msg.References),
			CampaignID: msg.CampaignID, StepID: msg.StepID, StepName: msg.StepName, Subject: msg.Subject,
			BodyText: msg.Text, BodyHtml: msg.HTML, MessageID: "<" + MessageID(id, from) + ">",
			SendMode: cmpMode(msg.Mode), NotBefore: notBefore, AttachmentIds: nonNil(msg.Attachments), Signed: msg.Signed,
			VariantID: msg.VariantID, UnsubscribeUrl: msg.UnsubscribeURL, ThreadID: msg.ThreadID,
		}
		inserts[i] = river.InsertManyParams{Args: Args{OrganizationID: m.OrganizationID, TaskID: id, MailboxID: m.ID}}
		if notBefore.After(now) {
			// A job scheduled for later waits for River's scheduler; one due now is available at once.
			inserts[i].InsertOpts = &river.InsertOpts{ScheduledAt: notBefore}
		}
	}
	tasks := make([]dbq.SendTask, len(out))
	var err error
	batch := queries.SendTaskInsert(ctx, tx, params)
	batch.QueryRow(func(i int, t dbq.SendTask, qErr error) {
		tasks[i] = t
		err = cmp.Or(err, qErr)
	})
	if err = cmp.Or(err, batch.Close()); err != nil {
		return nil, err
	}
	if _, err := jobs.InsertManyTx(ctx, tx, inserts); err != nil {
		return nil, err
	}
	return tasks, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func cmpMode(m string) string {
	if m == "" {
		return "instant"
	}
	return m
}

// Pipeline works send tasks: claim, hand over, record.
type Pipeline struct {
	pool   *pgxpool.Pool
	creds  *mailbox.Credentials
	conns  *conns
	logger *slog.Logger
	// authGrace: see New.
	authGrace time.Duration
	now       func() time.Time
	// settle is told every task's result (see OnSettle); nil tells no one.
	settle SettleHook
	// sentFolderDelay: see SentFolderDelay.
	sentFolderDelay time.Duration
	turnsMu         sync.Mutex
	// turns holds one claim turn per mailbox this process has sent from (a few hundred at most).
	turns map[uuid.UUID]*turn
}

// New builds a pipeline that takes mailbox credentials from creds and reaches SMTP servers through dialer;
// authGrace is how long a domain may fail authentication before its cold and warmup sends stop.
func New(pool *pgxpool.Pool, creds *mailbox.Credentials, dialer mailbox.Dialer, logger *slog.Logger, authGrace time.Duration) *Pipeline {
	return &Pipeline{pool: pool, creds: creds, conns: newConns(dialer), logger: logger, now: time.Now, authGrace: authGrace,
		turns: map[uuid.UUID]*turn{}, sentFolderDelay: SentFolderDelay}
}

// Worker is the River worker of Args.
type Worker struct {
	river.WorkerDefaults[Args]
	Pipeline *Pipeline
}

// Timeout bounds one attempt: a connect, a login and one message, each with its own shorter timeouts.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return 3 * time.Minute }

// Work runs one attempt of the task; a task that must wait (its time, a cap, a gap, a retry's backoff)
// snoozes the job until then.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	jobs := river.ClientFromContext[pgx.Tx](ctx)
	wait, err := w.Pipeline.Attempt(ctx, events.NewOutbox(jobs), job.Args)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// claimed is a task its attempt has taken, with the mailbox it goes out from.
type claimed struct {
	task    dbq.SendTask
	mailbox dbq.Mailbox
}

// Attempt runs one attempt of a task: claim it (or find it must wait, or is already settled), hand it to
// SMTP, record the result. It answers how long to wait before the next attempt (0: none is needed).
func (p *Pipeline) Attempt(ctx context.Context, outbox *events.Outbox, a Args) (time.Duration, error) {
	c, wait, err := p.claimInTurn(ctx, outbox, a)
	if err != nil || c == nil {
		return wait, err
	}
	srv, msg, res := p.prepare(ctx, outbox, c)
	if res != nil {
		return p.record(context.WithoutCancel(ctx), outbox, c, *res)
	}
	return p.handOverOn(ctx, outbox, c, srv, msg)
}

// turn is where the claims on one mailbox meet in this process. Claims on a mailbox take turns on its row
// lock anyway; here the jobs that arrive while one claim runs queue up, and the next claim takes all of them
// in one transaction, so a burst of jobs for a mailbox costs a few claim transactions, not one each, and
// holds one database connection while it waits.
type turn struct {
	// running holds a token while a claim is in progress (a channel, so a job whose context ends stops
	// waiting for its turn: a job past its timeout never lingers behind a slow claim).
	running chan struct{}
	mu      sync.Mutex // guards waiting
	waiting []*claimRequest
}

// claimRequest is one job's task waiting for its mailbox's next claim.
type claimRequest struct {
	id uuid.UUID
	// done receives the claim's result (buffered: a claim never waits for a job).
	done chan claimResult
}

// claimResult is what a claim came to for one task: claimed, or a wait (none: nothing to do), or an error.
type claimResult struct {
	claimed *claimed
	wait    time.Duration
	err     error
}

// claimInTurn claims the job's task in its mailbox's next claim, together with the tasks of the other jobs
// that arrive meanwhile (at most QueueWorkers). The claim runs under the context of the job that runs it: should
// that job be canceled, the others' attempts fail with it and River runs them again.
func (p *Pipeline) claimInTurn(ctx context.Context, outbox *events.Outbox, a Args) (*claimed, time.Duration, error) {
	p.turnsMu.Lock()
	t := p.turns[a.MailboxID]
	if t == nil {
		t = &turn{running: make(chan struct{}, 1)}
		p.turns[a.MailboxID] = t
	}
	p.turnsMu.Unlock()
	req := &claimRequest{id: a.TaskID, done: make(chan claimResult, 1)}
	t.mu.Lock()
	t.waiting = append(t.waiting, req)
	t.mu.Unlock()

	select {
	case t.running <- struct{}{}:
	case <-ctx.Done():
		// Leave the queue; a claim that took the task along meanwhile has claimed it for nobody, which the next
		// attempt finds claimed and never handed over, and works again.
		t.mu.Lock()
		t.waiting = slices.DeleteFunc(t.waiting, func(r *claimRequest) bool { return r == req })
		t.mu.Unlock()
		return nil, 0, ctx.Err()
	}
	defer func() { <-t.running }()
	select {
	case r := <-req.done: // the claim before this one took the task along
		return r.claimed, r.wait, r.err
	default:
	}
	t.mu.Lock()
	batch := t.waiting
	t.waiting = nil
	t.mu.Unlock()
	ids := make([]uuid.UUID, len(batch))
	for i, r := range batch {
		ids[i] = r.id
	}
	results, err := p.claim(ctx, outbox, a.OrganizationID, a.MailboxID, ids)
	for i, r := range batch {
		if err != nil {
			r.done <- claimResult{err: err}
		} else {
			r.done <- results[i]
		}
	}
	r := <-req.done
	return r.claimed, r.wait, r.err
}

// claim takes the due tasks among ids (all of one mailbox) under the mailbox's lock and charges the
// mailbox's day (see the package doc). Each task's result says whether it was claimed, must wait (how long),
// or needs nothing (settled, or failed before any send).
func (p *Pipeline) claim(ctx context.Context, outbox *events.Outbox, org, mailboxID uuid.UUID, ids []uuid.UUID) ([]claimResult, error) {
	results := make([]claimResult, len(ids))
	err := db.WithOrgTx(ctx, p.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		clear(results)
		rows, err := queries.SendTasksLoadForClaim(ctx, tx, dbq.SendTasksLoadForClaimParams{OrganizationID: org,
			MailboxID: mailboxID, Ids: ids})
		if err != nil {
			return err
		}
		found := make(map[uuid.UUID]dbq.SendTask, len(rows))
		var m dbq.Mailbox
		var addresses []string
		for _, row := range rows {
			if row.SendTask.MailboxID != (uuid.NullUUID{UUID: mailboxID, Valid: true}) {
				// Enqueue names the task's own mailbox in its job; a task moved or orphaned since is not this
				// mailbox's to send, and is settled as a task without its mailbox below.
				continue
			}
			found[row.SendTask.ID], m = row.SendTask, row.Mailbox
			if row.SendTask.Status == "queued" || released(row.SendTask) {
				addresses = append(addresses, recipients(row.SendTask)...)
			}
		}
		var blocked map[string]dbq.Suppression
		if len(addresses) > 0 {
			if blocked, err = suppression.Blocked(ctx, tx, org, addresses); err != nil {
				return err
			}
		}
		// The clock is read under the mailbox's lock: the last send it sees was made before now.
		now := p.now()
		var take []int // indexes into ids of the tasks to claim, in order
		var takeIDs []uuid.UUID
		var takeCapped []int32
		for i, id := range ids {
			t, ok := found[id]
			if !ok {
				if err := p.orphan(ctx, tx, outbox, org, id); err != nil {
					return err
				}
				continue
			}
			wait, ok, err := p.check(ctx, tx, outbox, t, m, blocked, now)
			switch {
			case err != nil:
				return err
			case wait > 0:
				results[i].wait = wait
				continue
			case !ok:
				continue
			}
			var charge int32
			if capped(t.Kind) {
				charge = 1
				// The gap runs from this claim: a later capped task in the same claim waits it out.
				m.LastCappedSendAt = &now
			}
			take, takeIDs, takeCapped = append(take, i), append(takeIDs, id), append(takeCapped, charge)
		}
		if len(take) == 0 {
			return nil
		}
		day := MailboxDay(now, m.Timezone)
		started, err := queries.SendTasksClaim(ctx, tx, dbq.SendTasksClaimParams{OrganizationID: org, MailboxID: m.ID,
			Ids: takeIDs, Capped: takeCapped, Day: &day, At: &now, DayLimit: m.CampaignLimit})
		if err != nil {
			return err
		}
		claimedByID := make(map[uuid.UUID]dbq.SendTask, len(started))
		for _, t := range started {
			claimedByID[t.ID] = t
		}
		for _, i := range take {
			if t, ok := claimedByID[ids[i]]; ok {
				results[i].claimed = &claimed{task: t, mailbox: m}
				continue
			}
			// The day is full: wait for the next one in the mailbox's zone.
			loc := Zone(m.Timezone)
			y, mo, d := now.In(loc).Date()
			next := time.Date(y, mo, d+1, 0, 0, 0, 0, loc)
			results[i].wait = next.Sub(now)
			if err := p.requeue(ctx, tx, found[ids[i]], next, "daily_cap_reached"); err != nil {
				return err
			}
		}
		return nil
	})
	return results, err
}

// check decides what a claim does with a loaded task: claim it (ok), leave it (settled, or failed here before
// any send: an attempt found in flight, an inactive mailbox, a failing domain, a suppressed recipient), or
// let it wait (its time or the mailbox's gap has not come). m is the task's mailbox as this claim sees it.
func (p *Pipeline) check(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask, m dbq.Mailbox, blocked map[string]dbq.Suppression, now time.Time) (wait time.Duration, ok bool, err error) {
	org, id := t.OrganizationID, t.ID
	switch {
	case released(t):
		// An earlier attempt claimed it and died before handing it over: nothing left, so it is worked again
		// (and its place in the day given back: this claim charges it anew).
		n, err := queries.SendTaskRelease(ctx, tx, dbq.SendTaskReleaseParams{OrganizationID: org, ID: id, Attempts: t.Attempts})
		if err != nil || n == 0 {
			return 0, false, err
		}
		if err := p.credit(ctx, tx, t); err != nil {
			return 0, false, err
		}
		t.Status, t.CountedDay = "queued", nil
	case t.Status == "sending" && t.AcceptedAt != nil:
		// The server took it and the attempt died before writing the rest of the result: it is sent.
		_, err := p.recordTx(ctx, tx, outbox, &claimed{task: t, mailbox: m}, result{outcome: delivered})
		return 0, false, err
	case t.Status == "sending":
		// An earlier attempt handed it over and never wrote a result: its worker died between hand-over and
		// answer. Whether the message left is unknown, so it is not sent again until its Sent folder says.
		const code = "outcome_unknown"
		const message = "The attempt sending this message stopped after handing it over and before recording its result; it may have been delivered, so it is not sent again unless the mailbox's Sent folder shows it did not leave."
		_, err := p.ambiguous(ctx, tx, outbox, t, code, message)
		return 0, false, err
	case t.Status == "queued":
	default:
		return 0, false, nil // settled: sent, failed, canceled or ambiguous
	}
	if now.Before(t.NotBefore) {
		return t.NotBefore.Sub(now), false, nil
	}
	failQueued := func(code, message string) (time.Duration, bool, error) {
		n, err := queries.SendTaskFailed(ctx, tx, dbq.SendTaskFailedParams{OrganizationID: org, ID: id,
			FromStatus: "queued", Attempts: t.Attempts, ErrorCode: code, ErrorMessage: message})
		if err == nil && n > 0 {
			err = p.settled(ctx, tx, outbox, Settled{Task: t, Status: StatusFailed, Code: code, Message: message})
		}
		return 0, false, err
	}
	if m.Status != "active" {
		return failQueued("mailbox_inactive", "The mailbox is "+m.Status+"; it sends nothing until it is active again.")
	}
	if (t.Kind == KindCampaign || t.Kind == KindWarmup) && mailbox.AuthBlocked(m, p.authGrace, now) {
		return failQueued("domain_auth_failing", "The mailbox's domain has been missing SPF or DMARC for longer than the grace period; cold sending and warmup stop until it passes.")
	}
	for _, r := range recipients(t) {
		if entry, ok := blocked[r]; ok {
			return failQueued("recipient_suppressed", r+" is suppressed ("+entry.Value+").")
		}
	}
	if capped(t.Kind) {
		if next := NextSlot(m, now); next.After(now) {
			return next.Sub(now), false, p.requeue(ctx, tx, t, next, "waiting_for_gap")
		}
	}
	return 0, true, nil
}

// orphan settles a task whose mailbox is gone (removed, which also cancels its queued tasks, or never set):
// a queued one fails, anything else is left as it is. A task that no longer exists needs nothing.
func (p *Pipeline) orphan(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, org, id uuid.UUID) error {
	t, err := queries.SendTaskGetForUpdate(ctx, tx, dbq.SendTaskGetForUpdateParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && t.Status != "queued" {
		return nil
	}
	if err != nil {
		return err
	}
	const code, message = "mailbox_removed", "The mailbox was removed."
	n, err := queries.SendTaskFailed(ctx, tx, dbq.SendTaskFailedParams{OrganizationID: org, ID: id, FromStatus: "queued",
		Attempts: t.Attempts, ErrorCode: code, ErrorMessage: message})
	if err != nil || n == 0 {
		return err
	}
	return p.settled(ctx, tx, outbox, Settled{Task: t, Status: StatusFailed, Code: code, Message: message})
}

// requeue puts a queued task back to wait until next, saying why; waiting is not an attempt.
func (p *Pipeline) requeue(ctx context.Context, tx pgx.Tx, t dbq.SendTask, next time.Time, code string) error {
	_, err := queries.SendTaskRequeue(ctx, tx, dbq.SendTaskRequeueParams{OrganizationID: t.OrganizationID, ID: t.ID,
		FromStatus: "queued", Attempts: t.Attempts, NotBefore: next, ErrorCode: code, ErrorMessage: ""})
	return err
}

func recipients(t dbq.SendTask) []string {
	out := make([]string, 0, len(t.ToList)+len(t.Cc)+len(t.Bcc))
	out = append(out, t.ToList...)
	out = append(out, t.Cc...)
	return append(out, t.Bcc...)
}

// clip bounds an error text to what the columns take (in characters, as their CHECKs count).
func clip(s string) string { return truncate.Chars(s, 1000) }
