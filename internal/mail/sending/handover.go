package sending

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// prepare reads what the claimed task's hand-over needs: the mailbox's SMTP server and login, and the
// message as it goes on the wire. A result says the task cannot go out now (or ever).
func (p *Pipeline) prepare(ctx context.Context, outbox *events.Outbox, c *claimed) (mailbox.Server, []byte, *result) {
	srv, _, err := p.creds.Servers(ctx, outbox, c.mailbox)
	switch {
	case errors.Is(err, mailbox.ErrNeedsConsent):
		return srv, nil, &result{outcome: rejected, code: "mailbox_auth_failed", message: err.Error(), account: mailbox.ConditionAuthError}
	case err != nil && mailbox.OAuth(c.mailbox):
		// The provider could not refresh the access token now: try again later.
		return srv, nil, &result{outcome: transient, code: "mailbox_token_unavailable", message: err.Error()}
	case err != nil:
		return srv, nil, &result{outcome: rejected, code: "mailbox_auth_failed", message: "The stored credential cannot be read; connect the mailbox again.",
			account: mailbox.ConditionAuthError}
	}
	msg, err := p.compose(ctx, c.task, c.mailbox, p.now())
	var invalid *invalidMessage
	switch {
	case errors.As(err, &invalid):
		return srv, nil, &result{outcome: rejected, code: "message_invalid", message: err.Error()}
	case err != nil:
		return srv, nil, &result{outcome: transient, code: "attachments_unavailable", message: "The message's attachments could not be read; it will be tried again."}
	}
	return srv, msg, nil
}

// invalidMessage is a task that cannot be written as a message (retrying would not help).
type invalidMessage struct{ err error }

func (e *invalidMessage) Error() string { return e.err.Error() }

// compose writes the task's message as it goes on the wire, dated at, with its attachments read.
func (p *Pipeline) compose(ctx context.Context, t dbq.SendTask, m dbq.Mailbox, at time.Time) ([]byte, error) {
	var files []dbq.SendTaskAttachmentsRow
	if len(t.AttachmentIds) > 0 {
		err := db.WithOrgTx(ctx, p.pool, t.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			files, err = queries.SendTaskAttachments(ctx, tx, dbq.SendTaskAttachmentsParams{OrganizationID: t.OrganizationID, Ids: t.AttachmentIds})
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	msg, err := build(t, m, at, files)
	if err != nil {
		return nil, &invalidMessage{err}
	}
	return msg, nil
}

// errNotOurs stops a hand-over whose task is no longer the attempt's (a later attempt took it).
var errNotOurs = errors.New("sending: the task is no longer this attempt's")

// handOverOn sends the claimed task's message on its mailbox's pooled session and has its result written.
//
// The session is held from before the message's hand-over until its answer is written, or, when the server
// accepted it, until the session knows it: the attempt then writes the acceptance (accepted_at) at once, and
// the next hand-over on the session writes it in the statement of its own mark when it is still missing. So at most
// one message per mailbox session is ever handed over with no answer written (all a crash can leave
// ambiguous), a stream of sends from one mailbox pays one transaction per message on the session, and the
// rest of each result is written beside the next message's SMTP transaction.
func (p *Pipeline) handOverOn(ctx context.Context, outbox *events.Outbox, c *claimed, srv mailbox.Server, msg []byte) (time.Duration, error) {
	s := p.conns.hold(ctx, c.mailbox.ID)
	if s == nil {
		return p.record(context.WithoutCancel(ctx), outbox, c, result{outcome: transient, code: "canceled",
			message: "The attempt ended while it waited for the mailbox's connection; nothing was sent."})
	}
	marked := false
	res := p.conns.send(ctx, s, c.mailbox.UpdatedAt, srv, c.task.FromEmail, recipients(c.task), msg, func() error {
		if marked {
			return nil
		}
		err := p.handOver(ctx, c.task, s.accepted)
		if marked = err == nil; marked {
			s.accepted = nil
		}
		return err
	})
	ctx = context.WithoutCancel(ctx) // an answer is written whatever happens to the job
	if marked && res.outcome == delivered {
		s.accepted = &c.task
		s.release()
		p.accept(ctx, c.task)
		return p.record(ctx, outbox, c, res)
	}
	defer s.release()
	return p.record(ctx, outbox, c, res)
}

// accept writes the server's acceptance of the task in a transaction of its own, ahead of the rest of its
// result, so the next hand-over on the session does not wait for the result's row lock. A failure changes
// nothing: that hand-over writes the acceptance itself.
func (p *Pipeline) accept(ctx context.Context, t dbq.SendTask) {
	err := db.WithOrgTx(ctx, p.pool, t.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return queries.SendTaskAccepted(ctx, tx, dbq.SendTaskAcceptedParams{OrganizationID: t.OrganizationID, ID: t.ID, Attempts: t.Attempts})
	})
	if err != nil {
		p.logger.WarnContext(ctx, "the acceptance of a sent message was not written ahead of its result", slog.String("task_id", t.ID.String()),
			slog.String("error", err.Error()))
	}
}

// handOver marks the claimed task handed over, once its message is on the session and before the final dot:
// from here a crash leaves it ambiguous, before here a later attempt sends it again. The message the session's
// server accepted before it (accepted, when there is one) is written accepted in the same statement. Nothing
// is handed over when the mark is not written.
func (p *Pipeline) handOver(ctx context.Context, t dbq.SendTask, accepted *dbq.SendTask) error {
	arg := dbq.SendTaskHandOverParams{OrganizationID: t.OrganizationID, ID: t.ID, Attempts: t.Attempts}
	if accepted != nil { // a session is one mailbox's: the same organization
		arg.AcceptedID, arg.AcceptedAttempts = uuid.NullUUID{UUID: accepted.ID, Valid: true}, &accepted.Attempts
	}
	return db.WithOrgTx(ctx, p.pool, t.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		n, err := queries.SendTaskHandOver(ctx, tx, arg)
		if err == nil && n == 0 {
			err = errNotOurs
		}
		return err
	})
}

// released reports a task an earlier attempt claimed and never handed over: it can be claimed again.
func released(t dbq.SendTask) bool { return t.Status == "sending" && t.HandedOverAt == nil }

// credit gives a task's place in its mailbox's day back (a send that did not go out, or one claimed again).
func (p *Pipeline) credit(ctx context.Context, tx pgx.Tx, t dbq.SendTask) error {
	if t.CountedDay == nil || !t.MailboxID.Valid {
		return nil
	}
	var charge int32
	if capped(t.Kind) {
		charge = 1
	}
	return queries.SendDayCredit(ctx, tx, dbq.SendDayCreditParams{OrganizationID: t.OrganizationID, MailboxID: t.MailboxID.UUID,
		Day: *t.CountedDay, Capped: charge})
}
