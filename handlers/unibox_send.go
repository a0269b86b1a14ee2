package handlers

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/inbox/actions"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// UniboxReply sends a reply from one of the organization's mailboxes through the send pipeline: into the
// thread thread_id (its In-Reply-To and References from the thread's newest message, then in_reply_to), or
// answering in_reply_to alone. The body is checked as a direct send's (directMessage); the mailbox, the
// suppressions, the pending-send bound and the send time are actions.Send's.
func (h *UniboxActions) UniboxReply(ctx context.Context, req *api.UniboxReplyRequest, _ api.UniboxReplyParams) (api.UniboxReplyRes, error) {
	msg, err := directMessage(&api.MailboxSendRequest{To: req.To, Cc: req.Cc, Bcc: req.Bcc, Subject: req.Subject, BodyHTML: req.BodyHTML,
		BodyPlain: req.BodyPlain, InReplyTo: req.InReplyTo, SendMode: api.OptMailboxSendRequestSendMode{
			Value: api.MailboxSendRequestSendMode(req.SendMode.Value), Set: req.SendMode.Set}, ScheduledAt: req.ScheduledAt})
	if err != nil {
		return nil, err
	}
	msg.Kind = sending.KindReply
	task, err := h.send(ctx, "unibox.reply", actions.Draft{Mailbox: req.EmailAccountID, Message: msg, Thread: req.ThreadID.Value})
	if err != nil {
		return nil, err
	}
	return &api.UniboxReplyOK{Result: api.UniboxReplyResultResultExecuted, TaskID: api.NewOptUUID(task.ID),
		ScheduledAt: api.NewOptDateTime(task.NotBefore), SendMode: api.NewOptUniboxReplyResultSendMode(api.UniboxReplyResultSendMode(task.SendMode))}, nil
}

// UniboxCompose starts a new conversation from one of the organization's mailboxes through the send pipeline,
// as a direct send; the answer names the thread id the send carries (GET /unibox/scheduled?thread_id= finds it).
func (h *UniboxActions) UniboxCompose(ctx context.Context, req *api.UniboxComposeRequest, _ api.UniboxComposeParams) (api.UniboxComposeRes, error) {
	msg, err := directMessage(&api.MailboxSendRequest{To: req.To, Cc: req.Cc, Bcc: req.Bcc, Subject: req.Subject, BodyHTML: req.BodyHTML,
		BodyPlain: req.BodyPlain, SendMode: api.OptMailboxSendRequestSendMode{
			Value: api.MailboxSendRequestSendMode(req.SendMode.Value), Set: req.SendMode.Set}, ScheduledAt: req.ScheduledAt})
	if err != nil {
		return nil, err
	}
	task, err := h.send(ctx, "unibox.compose", actions.Draft{Mailbox: req.EmailAccountID, Message: msg, NewThread: true})
	if err != nil {
		return nil, err
	}
	return &api.UniboxComposeOK{Result: api.UniboxComposeResultResultExecuted, TaskID: api.NewOptUUID(task.ID),
		ScheduledAt: api.NewOptDateTime(task.NotBefore), SendMode: api.NewOptUniboxComposeResultSendMode(api.UniboxComposeResultSendMode(task.SendMode)),
		ThreadID: threadIDOf(task.ThreadID)}, nil
}

// send queues a draft and audits it as event. It is the one place the agent-policy gate (API keys and OAuth
// tokens outside their policy wait for a human's approval, a 202 awaiting_approval) will sit; until that
// gate exists every caller's send is executed, as a direct send's is.
func (h *UniboxActions) send(ctx context.Context, event string, d actions.Draft) (dbq.SendTask, error) {
	var task dbq.SendTask
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, _ *auth.Principal, s actions.Scope) error {
		var err error
		if task, err = actions.Send(ctx, tx, h.jobs, s, d, h.now()); err != nil {
			return err
		}
		msg := d.Message
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionSend, Event: event, EntityType: audit.EntityEmail, EntityID: task.ID.String(),
			Metadata: map[string]any{"mailbox_id": d.Mailbox, "from": task.FromEmail, "to": msg.To, "cc": msg.Cc, "bcc_count": len(msg.Bcc),
				"subject": msg.Subject, "send_mode": msg.Mode, "thread_id": threadIDOf(task.ThreadID).Value}})
	})
	return task, err
}
