package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/inbox/actions"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// UniboxActions serves what people do in the unified inbox besides reading it: read/unread, moves, snoozes,
// a thread's categories, replies and new messages, and the sends still waiting to leave. Every operation
// checks the unified-inbox feature first, in the same organization transaction as its work. A mailbox-scoped
// API key only touches its mailboxes: messages, threads and sends of others are ignored (lists, read/unread)
// or answered 404 (one named thread, mailbox or send), as if they did not exist.
type UniboxActions struct {
	pool      *pgxpool.Pool
	jobs      events.Inserter
	edition   orgs.Edition
	approvals *approvals.Service
	now       func() time.Time
}

// NewUniboxActions builds the inbox's write operations; relays and sends are queued through jobs, edition
// decides who has the unified inbox (config OUTFLOW_EDITION), and held keeps the replies and composed messages
// of API keys and OAuth grants that their agent policy does not allow for a person's approval.
func NewUniboxActions(pool *pgxpool.Pool, jobs events.Inserter, edition orgs.Edition, held *approvals.Service) *UniboxActions {
	return &UniboxActions{pool: pool, jobs: jobs, edition: edition, approvals: held, now: time.Now}
}

// inInbox runs fn in the caller's organization transaction once the organization has the unified inbox, with
// the caller and the mailboxes it may touch.
func (h *UniboxActions) inInbox(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx, p *auth.Principal, s actions.Scope) error) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := orgs.UnifiedInbox(ctx, tx, h.edition, org, h.now()); err != nil {
			return err
		}
		return fn(ctx, tx, p, actions.Scope{Org: org, Mailboxes: p.AllowedMailboxes})
	})
}

// UniboxMarkSeen marks messages read or unread: the listed email_ids (1 to 500) or a whole folder, exactly
// one of the two, and seen. Only messages whose state changes are written and relayed to their server, after
// the response (see actions.MarkSeen). Ids of messages a mailbox-scoped key may not touch are ignored, like
// ids of no message. The request is echoed.
func (h *UniboxActions) UniboxMarkSeen(ctx context.Context, req *api.UniboxMarkSeenRequest, _ api.UniboxMarkSeenParams) (*api.UniboxMarkSeenRequest, error) {
	ids, folder := req.EmailIds, string(req.Folder.Value)
	switch {
	case ids != nil && req.Folder.Set:
		return nil, apierror.BadRequest("invalid_selection", "Send email_ids or folder, not both: email_ids marks those messages, folder every message of the folder.")
	case ids == nil && !req.Folder.Set:
		return nil, apierror.BadRequest("invalid_selection", "Send email_ids (1 to 500 message ids) or folder, to say which messages to mark.")
	case ids != nil && (len(ids) == 0 || len(ids) > actions.MaxSeenIDs):
		return nil, apierror.BadRequest("invalid_email_ids", fmt.Sprintf("email_ids takes 1 to %d message ids.", actions.MaxSeenIDs))
	case !req.Seen.Set:
		return nil, apierror.BadRequest("seen_required", "seen is required: true marks the messages read, false unread.")
	}
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, _ *auth.Principal, s actions.Scope) error {
		_, err := actions.MarkSeen(ctx, tx, h.jobs, s, ids, folder, req.Seen.Value)
		return err
	})
	if err != nil {
		return nil, err
	}
	return req, nil
}

// UniboxMoveFolder moves the listed messages (1 to 500) to the inbox, archive or trash folder of their
// mailbox; each keeps its id, shows in its new folder at once, and is moved on its server after the response
// (see actions.Move). Ids of messages a mailbox-scoped key may not touch are ignored, like ids of no message.
// The request is echoed.
func (h *UniboxActions) UniboxMoveFolder(ctx context.Context, req *api.UniboxMoveFolderRequest, _ api.UniboxMoveFolderParams) (*api.UniboxMoveFolderRequest, error) {
	if len(req.EmailIds) == 0 || len(req.EmailIds) > actions.MaxMoveIDs {
		return nil, apierror.BadRequest("invalid_email_ids", fmt.Sprintf("email_ids takes 1 to %d message ids.", actions.MaxMoveIDs))
	}
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, _ *auth.Principal, s actions.Scope) error {
		_, err := actions.Move(ctx, tx, h.jobs, s, req.EmailIds, string(req.Folder))
		return err
	})
	if err != nil {
		return nil, err
	}
	return req, nil
}

// UniboxSetThreadLabels makes the thread's categories exactly category_ids (empty clears them) and answers
// the labels now on it; ids that are not this organization's categories are dropped.
func (h *UniboxActions) UniboxSetThreadLabels(ctx context.Context, req *api.UniboxSetThreadLabelsRequest, _ api.UniboxSetThreadLabelsParams) (*api.UniboxLabelList, error) {
	var rows []dbq.InboxActionThreadLabelsRow
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, _ *auth.Principal, s actions.Scope) error {
		var err error
		rows, err = actions.SetThreadLabels(ctx, tx, s, req.ThreadID, req.CategoryIds)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UniboxLabelList{Data: make([]api.UniboxLabel, len(rows))}
	for i, r := range rows {
		out.Data[i] = api.UniboxLabel{ID: r.ID, Title: r.Title, Color: r.Color}
	}
	return out, nil
}

// UniboxSnooze hides a thread from the caller's list until snoozed_until; snoozing it again moves the time.
// Snoozes belong to the person behind the credential (see actions.ErrUserRequired).
func (h *UniboxActions) UniboxSnooze(ctx context.Context, req *api.UniboxSnoozeRequest, _ api.UniboxSnoozeParams) (*api.UniboxSnooze, error) {
	var row dbq.InboxSnooze
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, p *auth.Principal, s actions.Scope) error {
		var err error
		row, err = actions.Snooze(ctx, tx, s, p.UserID, req.ThreadID, req.SnoozedUntil, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	out := snoozeOf(row)
	return &out, nil
}

// UniboxUnsnooze removes the caller's snooze of a thread; idempotent (204 whether or not there was one).
func (h *UniboxActions) UniboxUnsnooze(ctx context.Context, params api.UniboxUnsnoozeParams) error {
	return h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, p *auth.Principal, s actions.Scope) error {
		return actions.Unsnooze(ctx, tx, s, p.UserID, params.ThreadID)
	})
}

// UniboxListSnoozes lists the caller's snoozes that still hide their thread, soonest first.
func (h *UniboxActions) UniboxListSnoozes(ctx context.Context) (*api.UniboxSnoozeList, error) {
	var rows []dbq.InboxSnooze
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, p *auth.Principal, s actions.Scope) error {
		var err error
		rows, err = actions.Snoozes(ctx, tx, s, p.UserID, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UniboxSnoozeList{Data: make([]api.UniboxSnooze, len(rows))}
	for i, r := range rows {
		out.Data[i] = snoozeOf(r)
	}
	return out, nil
}

func snoozeOf(r dbq.InboxSnooze) api.UniboxSnooze {
	return api.UniboxSnooze{ID: r.ID, UserID: r.UserID, ThreadID: r.ThreadID.String(), SnoozedUntil: r.SnoozedUntil,
		CreatedAt: api.NewOptDateTime(r.CreatedAt), UpdatedAt: api.NewOptDateTime(r.UpdatedAt)}
}

// UniboxListScheduled lists the replies and direct messages queued and not yet sent, next first, optionally
// of one thread.
func (h *UniboxActions) UniboxListScheduled(ctx context.Context, params api.UniboxListScheduledParams) (*api.UniboxScheduledList, error) {
	var rows []dbq.InboxActionScheduledRow
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, _ *auth.Principal, s actions.Scope) error {
		var err error
		rows, err = actions.Scheduled(ctx, tx, s, params.ThreadID.Value)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UniboxScheduledList{Data: make([]api.UniboxScheduledSend, len(rows))}
	for i, r := range rows {
		out.Data[i] = api.UniboxScheduledSend{TaskID: r.ID, ScheduledAt: r.NotBefore, CreatedAt: api.NewOptDateTime(r.CreatedAt),
			AccountID: r.MailboxID, AccountEmail: api.NewOptString(r.MailboxEmail), AccountName: api.NewOptString(r.MailboxName),
			To: r.ToList, Subject: r.Subject, Snippet: api.NewOptString(r.Snippet), ThreadID: threadIDOf(r.ThreadID)}
	}
	return out, nil
}

// UniboxCancelScheduled cancels a queued reply or direct message before it leaves (204); anything else the
// id could name (unknown, sent, a campaign or warmup send) is a 404.
func (h *UniboxActions) UniboxCancelScheduled(ctx context.Context, params api.UniboxCancelScheduledParams) error {
	return h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, _ *auth.Principal, s actions.Scope) error {
		return actions.CancelScheduled(ctx, tx, s, params.TaskID)
	})
}

// threadIDOf is a task's thread as the API spells it.
func threadIDOf(id uuid.NullUUID) api.OptString {
	if !id.Valid {
		return api.OptString{}
	}
	return api.NewOptString(id.UUID.String())
}
