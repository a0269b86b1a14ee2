package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/inbox/actions"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Limits of a direct send.
const (
	maxSendRecipients = 50      // per list: to, cc, bcc
	maxSendSubject    = 998     // one header line
	maxSendText       = 1 << 20 // the send_tasks CHECKs hold the same bounds
	maxSendHTML       = 2 << 20
	maxInReplyTo      = 100
	maxScheduleAhead  = 365 * 24 * time.Hour
)

// MailboxesSend queues a one-off message from the mailbox through the send pipeline: instant (after the
// organization's undo window), smart (in the mailbox's next sending gap) or scheduled; with a thread_id it
// replies within a thread synced from the mailbox. The pipeline's caps, gap and suppression checks apply when
// it is sent; suppressed recipients are refused here already (see actions.Send, shared with the inbox). It
// needs email.compose: an API key or OAuth grant outside its agent policy gets 202 awaiting_approval and
// nothing is queued (sendThroughGate).
func (h *Mailboxes) MailboxesSend(ctx context.Context, req *api.MailboxSendRequest, params api.MailboxesSendParams) (api.MailboxesSendRes, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	msg, err := directMessage(req)
	if err != nil {
		return nil, err
	}
	var out sendOutcome
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		p := auth.PrincipalFrom(ctx)
		out, err = sendThroughGate(ctx, tx, h.jobs, h.opts.Approvals, p, actions.Scope{Org: org, Mailboxes: p.AllowedMailboxes},
			gatedSend{capability: policy.EmailCompose, event: eventDirectSend, draft: actions.Draft{Mailbox: params.ID, Message: msg, Thread: req.ThreadID.Value}}, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.held {
		a := out.approval
		return &api.MailboxesSendAccepted{Result: api.MailboxSendResultResultAwaitingApproval, ApprovalID: api.NewOptUUID(a.ID),
			ApprovalURL: approvalLink(h.opts.Approvals.URL(a.ID)), ExpiresAt: api.NewOptDateTime(a.ExpiresAt), Reasons: a.Reasons}, nil
	}
	task := out.task
	return &api.MailboxesSendOK{Result: api.MailboxSendResultResultExecuted, TaskID: api.NewOptUUID(task.ID),
		ScheduledAt: api.NewOptDateTime(task.NotBefore), SendMode: api.NewOptMailboxSendResultSendMode(api.MailboxSendResultSendMode(task.SendMode))}, nil
}

// directMessage checks a direct-send body and turns it into the pipeline's message (NotBefore set for
// scheduled sends only; the others depend on the mailbox).
func directMessage(req *api.MailboxSendRequest) (sending.Message, error) {
	msg := sending.Message{Kind: sending.KindDirect, Mode: string(req.SendMode.Or(api.MailboxSendRequestSendModeInstant))}
	var err error
	if msg.To, err = sendRecipients("to", req.To, 1); err != nil {
		return msg, err
	}
	if msg.Cc, err = sendRecipients("cc", req.Cc, 0); err != nil {
		return msg, err
	}
	if msg.Bcc, err = sendRecipients("bcc", req.Bcc, 0); err != nil {
		return msg, err
	}
	msg.Subject = strings.TrimSpace(req.Subject)
	if msg.Subject == "" || len(msg.Subject) > maxSendSubject || strings.ContainsAny(msg.Subject, "\r\n") {
		return msg, apierror.BadRequest("invalid_subject", fmt.Sprintf("subject is required: one line of at most %d bytes.", maxSendSubject))
	}
	msg.Text, msg.HTML = req.BodyPlain.Value, req.BodyHTML.Value
	if strings.TrimSpace(msg.Text) == "" && strings.TrimSpace(msg.HTML) == "" {
		return msg, apierror.BadRequest("body_required", "Send body_plain, body_html or both.")
	}
	if len(msg.Text) > maxSendText || len(msg.HTML) > maxSendHTML {
		return msg, apierror.BadRequest("body_too_large", fmt.Sprintf("body_plain is limited to %d bytes and body_html to %d.", maxSendText, maxSendHTML))
	}
	if len(req.InReplyTo) > maxInReplyTo {
		return msg, apierror.BadRequest("invalid_in_reply_to", fmt.Sprintf("in_reply_to holds at most %d Message-IDs.", maxInReplyTo))
	}
	for _, id := range req.InReplyTo {
		id = strings.TrimSpace(id)
		bare := strings.Trim(id, "<>")
		if !strings.Contains(bare, "@") || len(id) > maxSendSubject || strings.ContainsAny(bare, " \t\r\n<>") {
			return msg, apierror.BadRequest("invalid_in_reply_to", fmt.Sprintf("%q is not a Message-ID (such as <id@example.com>).", id))
		}
		msg.References = append(msg.References, "<"+bare+">")
	}
	if n := len(msg.References); n > 0 {
		// The message answers the last of them; all of them are the thread it belongs to.
		msg.InReplyTo = msg.References[n-1]
	}
	switch {
	case msg.Mode == "scheduled" && !req.ScheduledAt.Set:
		return msg, apierror.BadRequest("invalid_scheduled_at", "send_mode scheduled needs scheduled_at.")
	case msg.Mode != "scheduled" && req.ScheduledAt.Set:
		return msg, apierror.BadRequest("invalid_scheduled_at", "scheduled_at is only for send_mode scheduled.")
	case msg.Mode == "scheduled":
		at := req.ScheduledAt.Value
		if now := time.Now(); !at.After(now) || at.After(now.Add(maxScheduleAhead)) {
			return msg, apierror.BadRequest("invalid_scheduled_at", "scheduled_at must be in the future and within a year.")
		}
		msg.NotBefore = at
	}
	return msg, nil
}

// sendRecipients normalizes one recipient list: at least least addresses, at most 50, each one address, no repeats.
func sendRecipients(field string, in []string, least int) ([]string, error) {
	if len(in) < least || len(in) > maxSendRecipients {
		return nil, apierror.BadRequest("invalid_"+field, fmt.Sprintf("%s takes %d to %d addresses.", field, least, maxSendRecipients))
	}
	out := make([]string, 0, len(in))
	for _, raw := range in {
		addr, ok := contacts.NormalizeEmail(raw)
		if !ok {
			return nil, apierror.BadRequest("invalid_"+field, fmt.Sprintf("%q in %s is not an email address.", raw, field))
		}
		if !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	return out, nil
}
