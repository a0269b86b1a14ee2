package actions

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// MaxPendingSends is how many replies and direct messages an organization may have queued at once (instant
// ones in their undo window, smart and scheduled ones): the scheduled list shows them all, and a runaway
// client cannot bury a mailbox's day in hand-written mail.
const MaxPendingSends = 1000

// Draft is a message a person sends by hand: a reply into an inbox thread, a new conversation from the
// inbox, or a direct send from a mailbox. Message holds the checked recipients, subject and bodies, the
// Message-IDs it answers (References, InReplyTo), Kind, Mode, and NotBefore for scheduled sends.
type Draft struct {
	// Mailbox sends it.
	Mailbox uuid.UUID
	Message sending.Message
	// Thread is the inbox thread it answers, as the client named it ("": none). Its In-Reply-To and
	// References come from the thread's newest message, followed by the Message-IDs Message already names.
	Thread string
	// NewThread starts a conversation: the task gets a fresh thread id (answered as the compose's thread_id).
	NewThread bool
}

// Send queues d through the send pipeline in tx and returns the task: the mailbox must be active (409
// otherwise), suppressed recipients are refused (400), the organization's pending sends are bounded (429);
// an instant message waits the organization's undo window, a smart one the mailbox's next sending gap, a
// scheduled one its time.
func Send(ctx context.Context, tx pgx.Tx, jobs events.Inserter, s Scope, d Draft, now time.Time) (dbq.SendTask, error) {
	m, msg, err := prepare(ctx, tx, s, d, now)
	if err != nil {
		return dbq.SendTask{}, err
	}
	switch msg.Mode {
	case "instant":
		undo, err := queries.OrganizationReplyUndo(ctx, tx, s.Org)
		if err != nil {
			return dbq.SendTask{}, err
		}
		msg.NotBefore = now.Add(time.Duration(undo) * time.Second)
	case "smart":
		msg.NotBefore = sending.NextSlot(m, now)
	}
	return sending.Enqueue(ctx, tx, jobs, m, msg)
}

// Check makes every check Send makes of d at now, and queues nothing: a send held for a person's approval is
// refused at once when it could not be sent anyway (the approval runs Send, and so the checks, again).
func Check(ctx context.Context, tx pgx.Tx, s Scope, d Draft, now time.Time) error {
	_, _, err := prepare(ctx, tx, s, d, now)
	return err
}

// prepare checks d (the mailbox in scope and able to send, the thread it answers, unsuppressed recipients,
// room among the pending sends) and returns its mailbox, locked for the send, and the message threaded.
func prepare(ctx context.Context, tx pgx.Tx, s Scope, d Draft, now time.Time) (dbq.Mailbox, sending.Message, error) {
	msg := d.Message
	if !s.allows(d.Mailbox) {
		return dbq.Mailbox{}, msg, errMailboxNotFound
	}
	m, err := queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: s.Org, ID: d.Mailbox})
	if err != nil {
		return m, msg, db.Classify(err, "Mailbox")
	}
	if err := sendable(m); err != nil {
		return m, msg, err
	}
	if d.Thread != "" {
		t, err := thread(ctx, tx, s, d.Thread)
		if err != nil {
			return m, msg, err
		}
		reply, err := mailsync.ReplyIn(ctx, tx, s.Org, m.ID, t.ID.String())
		if err != nil {
			return m, msg, err
		}
		msg.InReplyTo, msg.References = reply.Headers(msg.References)
		msg.ThreadID = uuid.NullUUID{UUID: t.ID, Valid: true}
	}
	if d.NewThread {
		id, err := uuid.NewV7()
		if err != nil {
			return m, msg, err
		}
		msg.ThreadID = uuid.NullUUID{UUID: id, Valid: true}
	}
	if err := unsuppressed(ctx, tx, s.Org, msg); err != nil {
		return m, msg, err
	}
	return m, msg, pendingRoom(ctx, tx, s.Org, now)
}

// errMailboxNotFound answers a mailbox a mailbox-scoped key may not use: the same 404 as an unknown one.
var errMailboxNotFound = apierror.NotFound("mailbox_not_found", "Mailbox not found.")

// sendable refuses a mailbox that sends nothing: held (inactive) or disconnected (revoked).
func sendable(m dbq.Mailbox) error {
	switch m.Status {
	case "active":
		return nil
	case "revoked":
		return apierror.Conflict("mailbox_disconnected", "The mailbox is disconnected (its provider revoked access); it sends nothing until it is connected again.").
			WithFix("Connect the mailbox again, then send.")
	}
	return apierror.Conflict("mailbox_inactive", "The mailbox is "+m.Status+"; it sends nothing until it is active again.").
		WithFix("Set its status to active with PATCH /emails/{id}.")
}

// unsuppressed refuses a message with suppressed recipients, naming them; the pipeline would fail them anyway.
func unsuppressed(ctx context.Context, tx pgx.Tx, org uuid.UUID, msg sending.Message) error {
	all := append(append(append([]string{}, msg.To...), msg.Cc...), msg.Bcc...)
	blocked, err := suppression.Blocked(ctx, tx, org, all)
	if err != nil {
		return err
	}
	var suppressed []string
	for _, r := range all {
		if _, ok := blocked[r]; ok {
			suppressed = append(suppressed, r)
		}
	}
	if len(suppressed) > 0 {
		return apierror.BadRequest("recipient_suppressed", "Suppressed recipients: "+strings.Join(suppressed, ", ")+".").
			WithFix("Remove them from the message, or lift their suppression with DELETE /suppressions.")
	}
	return nil
}

// pendingRoom refuses one more queued send past MaxPendingSends, telling the client when the next one leaves.
func pendingRoom(ctx context.Context, tx pgx.Tx, org uuid.UUID, now time.Time) error {
	p, err := queries.InboxActionPendingSends(ctx, tx, org)
	if err != nil || p.Pending < MaxPendingSends {
		return err
	}
	wait := max(int(p.FirstAt.Sub(now).Seconds())+1, 1)
	return apierror.TooManyRequests("scheduled_limit_reached",
		fmt.Sprintf("This organization already has %d replies and messages waiting to be sent, the most it may queue.", MaxPendingSends), wait).
		WithFix("Cancel some with DELETE /unibox/scheduled/{task_id}, or wait until the next one leaves.")
}
