package handlers

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/inbox/actions"
	"github.com/outflowhq/outflow/internal/mail/sending"
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
	out, err := h.send(ctx, gatedSend{capability: policy.InboxReply, event: eventReply,
		draft: actions.Draft{Mailbox: req.EmailAccountID, Message: msg, Thread: req.ThreadID.Value}})
	if err != nil {
		return nil, err
	}
	if out.held {
		a := out.approval
		return &api.UniboxReplyAccepted{Result: api.UniboxReplyResultResultAwaitingApproval, ApprovalID: api.NewOptUUID(a.ID),
			ApprovalURL: approvalLink(h.approvals.URL(a.ID)), ExpiresAt: api.NewOptDateTime(a.ExpiresAt), Reasons: a.Reasons}, nil
	}
	task := out.task
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
	out, err := h.send(ctx, gatedSend{capability: policy.EmailCompose, event: eventCompose,
		draft: actions.Draft{Mailbox: req.EmailAccountID, Message: msg, NewThread: true}})
	if err != nil {
		return nil, err
	}
	if out.held {
		a := out.approval
		return &api.UniboxComposeAccepted{Result: api.UniboxComposeResultResultAwaitingApproval, ApprovalID: api.NewOptUUID(a.ID),
			ApprovalURL: approvalLink(h.approvals.URL(a.ID)), ExpiresAt: api.NewOptDateTime(a.ExpiresAt), Reasons: a.Reasons}, nil
	}
	task := out.task
	return &api.UniboxComposeOK{Result: api.UniboxComposeResultResultExecuted, TaskID: api.NewOptUUID(task.ID),
		ScheduledAt: api.NewOptDateTime(task.NotBefore), SendMode: api.NewOptUniboxComposeResultSendMode(api.UniboxComposeResultSendMode(task.SendMode)),
		ThreadID: threadIDOf(task.ThreadID)}, nil
}

// send queues a draft through the agent policy gate (sendThroughGate): a session's, or an API key's or OAuth
// grant's within its policy, is queued and audited; any other is held for a person's approval.
func (h *UniboxActions) send(ctx context.Context, g gatedSend) (sendOutcome, error) {
	var out sendOutcome
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, p *auth.Principal, s actions.Scope) error {
		var err error
		out, err = sendThroughGate(ctx, tx, h.jobs, h.approvals, p, s, g, h.now())
		return err
	})
	return out, err
}
