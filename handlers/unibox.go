package handlers

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/inbox/unibox"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// Page sizes of the inbox's lists.
const (
	defaultUniboxPage = 50
	maxUniboxPage     = 100
)

// Unibox serves the unified inbox's reads: the thread list, the unread count, the sidebar overview, a
// conversation, one message (which marks it read) and a thread's categories. Every operation checks the
// unified-inbox feature first, in the same organization transaction as its reads. A mailbox-scoped API key
// reads only its mailboxes: threads and messages of others are left out of lists and counts, and answer 404
// when named. Snoozes are the calling user's (an API key's creator, an OAuth grant's user).
type Unibox struct {
	pool    *pgxpool.Pool
	cursors *pagination.Cursors
	jobs    events.Inserter
	edition orgs.Edition
	now     func() time.Time
}

// NewUnibox builds the inbox's reads: cursors are signed under secret, the read mark's relay is queued
// through jobs, edition decides who has the unified inbox (config OUTFLOW_EDITION), and now is the clock of
// the snoozes, the overview's windows and the feature check.
func NewUnibox(pool *pgxpool.Pool, secret []byte, jobs events.Inserter, edition orgs.Edition, now func() time.Time) *Unibox {
	return &Unibox{pool: pool, cursors: pagination.NewCursors(secret), jobs: jobs, edition: edition, now: now}
}

// inInbox runs fn in the caller's organization transaction once the organization has the unified inbox, with
// the caller's scope and the request's now.
func (h *Unibox) inInbox(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx, s unibox.Scope, now time.Time) error) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	now := h.now()
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := orgs.UnifiedInbox(ctx, tx, h.edition, org, now); err != nil {
			return err
		}
		return fn(ctx, tx, unibox.Scope{Org: org, User: p.UserID, Mailboxes: p.AllowedMailboxes}, now)
	})
}

// UniboxList pages through the threads matching the filters, newest activity first (see unibox.ParseList
// for the filters' rules).
func (h *Unibox) UniboxList(ctx context.Context, params api.UniboxListParams) (*api.UniboxThreadList, error) {
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultUniboxPage, maxUniboxPage, true)
	if err != nil {
		return nil, err
	}
	in := unibox.ListInput{Folder: string(params.Folder.Value), From: params.From.Value, Subject: params.Subject.Value,
		Unseen: params.Unseen.Value, AwaitingReply: params.AwaitingReply.Value, Snoozed: params.Snoozed.Value,
		Uncategorized: params.Uncategorized.Value}
	if v, ok := params.Since.Get(); ok {
		in.Since = &v
	}
	if v, ok := params.Until.Get(); ok {
		in.Until = &v
	}
	if v, ok := params.EmailID.Get(); ok {
		in.EmailID = &v
	}
	if v, ok := params.EmailIds.Get(); ok {
		in.EmailIDs = &v
	}
	if v, ok := params.CategoryIds.Get(); ok {
		in.CategoryIDs = &v
	}
	var rows []unibox.Row
	var hasMore bool
	err = h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, s unibox.Scope, now time.Time) error {
		f, err := unibox.ParseList(in, s)
		if err != nil {
			return err
		}
		after, err := keysetAfter[unibox.Position](h.cursors, unibox.ListSort, firstPageIfEmpty(params.Cursor))
		if err != nil {
			return err
		}
		rows, err = unibox.List(ctx, tx, s.Org, f, now, after, limit+1)
		hasMore = len(rows) > limit
		rows = rows[:min(len(rows), limit)]
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UniboxThreadList{Data: make([]api.UniboxThread, len(rows))}
	for i, r := range rows {
		out.Data[i] = uniboxThread(r)
	}
	if out.Pagination, err = h.pagination(unibox.ListSort, hasMore, func() any { return unibox.PositionOf(rows[len(rows)-1]) }); err != nil {
		return nil, err
	}
	return out, nil
}

// UniboxCount counts unread messages outside spam and trash, in one mailbox when email_id is given.
func (h *Unibox) UniboxCount(ctx context.Context, params api.UniboxCountParams) (*api.UniboxCount, error) {
	var mailbox *uuid.UUID
	if v, ok := params.EmailID.Get(); ok {
		mailbox = &v
	}
	var n int64
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, s unibox.Scope, _ time.Time) error {
		var err error
		n, err = unibox.Count(ctx, tx, s, mailbox)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.UniboxCount{Count: int(n)}, nil
}

// UniboxOverview answers the sidebar's thread counts.
func (h *Unibox) UniboxOverview(ctx context.Context) (*api.UniboxOverview, error) {
	var o unibox.Overview
	var at time.Time
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, s unibox.Scope, now time.Time) error {
		var err error
		at = now
		o, err = unibox.ReadOverview(ctx, tx, s, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UniboxOverview{Total: int(o.Total), Unread: int(o.Unread), Today: int(o.Today), Week: int(o.Week),
		Snoozed: int(o.Snoozed), AwaitingReply: int(o.AwaitingReply), ScheduledPending: int(o.ScheduledPending),
		ScheduledPendingMax: api.NewOptInt(unibox.ScheduledPendingMax),
		GeneratedAt:         api.NewOptDateTime(at.UTC()), WindowTodayStart: api.NewOptDateTime(o.TodayStart),
		WindowWeekStart: api.NewOptDateTime(o.WeekStart),
		Folders:         make([]api.UniboxOverviewFolder, len(o.Folders)), Mailboxes: make([]api.UniboxOverviewMailbox, len(o.Mailboxes))}
	for i, f := range o.Folders {
		out.Folders[i] = api.UniboxOverviewFolder{Folder: api.UniboxOverviewFolderFolder(f.Folder), Total: int(f.Total), Unread: int(f.Unread)}
	}
	for i, m := range o.Mailboxes {
		out.Mailboxes[i] = api.UniboxOverviewMailbox{ID: m.ID, Email: m.Email, Name: api.NewOptString(m.Name), Total: int(m.Total), Unread: int(m.Unread)}
	}
	out.Tags, out.Categories = overviewBuckets(o.Tags), overviewBuckets(o.Categories)
	return out, nil
}

func overviewBuckets(in []unibox.LabelTally) []api.UniboxOverviewBucket {
	out := make([]api.UniboxOverviewBucket, len(in))
	for i, l := range in {
		out[i] = api.UniboxOverviewBucket{ID: l.ID, Title: l.Title, Color: api.NewOptString(l.Color), Total: int(l.Total), Unread: int(l.Unread)}
	}
	return out
}

// UniboxGetThread pages through a conversation's messages, oldest first: the thread's own in the mailbox
// email_id (alias email) names, else every copy of the conversation in the mailboxes the caller may read.
func (h *Unibox) UniboxGetThread(ctx context.Context, params api.UniboxGetThreadParams) (*api.UniboxMessageList, error) {
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultUniboxPage, maxUniboxPage, true)
	if err != nil {
		return nil, err
	}
	mailbox, inMailbox := params.EmailID.Get()
	if !inMailbox {
		mailbox, inMailbox = params.Email.Get()
	}
	var msgs []unibox.Message
	var hasMore bool
	err = h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, s unibox.Scope, _ time.Time) error {
		t, err := unibox.ResolveThread(ctx, tx, s, threadParam(params.ThreadID, params.ID))
		if err != nil {
			return err
		}
		if inMailbox && t.MailboxID != mailbox {
			return unibox.ErrThreadNotFound
		}
		after, err := keysetAfter[unibox.MessagePosition](h.cursors, unibox.MessageSort, firstPageIfEmpty(params.Cursor))
		if err != nil {
			return err
		}
		msgs, err = unibox.Conversation(ctx, tx, s, t, inMailbox, after, limit+1)
		hasMore = len(msgs) > limit
		msgs = msgs[:min(len(msgs), limit)]
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UniboxMessageList{Data: make([]api.UniboxMessage, len(msgs))}
	for i, m := range msgs {
		out.Data[i] = uniboxMessage(m)
	}
	if out.Pagination, err = h.pagination(unibox.MessageSort, hasMore, func() any { return unibox.PositionOfMessage(msgs[len(msgs)-1]) }); err != nil {
		return nil, err
	}
	return out, nil
}

// UniboxGetThreadLabels lists a thread's categories.
func (h *Unibox) UniboxGetThreadLabels(ctx context.Context, params api.UniboxGetThreadLabelsParams) (*api.UniboxLabelList, error) {
	var labels []unibox.Label
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, s unibox.Scope, _ time.Time) error {
		t, err := unibox.ResolveThread(ctx, tx, s, threadParam(params.ThreadID, params.ID))
		if err != nil {
			return err
		}
		labels, err = unibox.ThreadLabels(ctx, tx, s, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.UniboxLabelList{Data: uniboxLabels(labels)}, nil
}

// UniboxGet reads one message and marks it read when it was unread: the change is recorded with the thread's
// summaries and relayed to the mailbox's server after the response (mailsync.MarkSeen).
func (h *Unibox) UniboxGet(ctx context.Context, params api.UniboxGetParams) (*api.UniboxEmail, error) {
	var m unibox.Message
	err := h.inInbox(ctx, func(ctx context.Context, tx pgx.Tx, s unibox.Scope, _ time.Time) error {
		var err error
		if m, err = unibox.ReadMessage(ctx, tx, s, params.ID); err != nil || m.Seen {
			return err
		}
		if _, err := mailsync.MarkSeen(ctx, tx, h.jobs, s.Org, m.MailboxID, []uuid.UUID{m.ID}, true); err != nil {
			return err
		}
		m, err = unibox.ReadMessage(ctx, tx, s, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return uniboxEmail(m), nil
}

// pagination is a page's envelope: the next cursor, at the page's last row (position), when more follow.
func (h *Unibox) pagination(sort string, hasMore bool, position func() any) (api.Pagination, error) {
	out := api.Pagination{HasMore: hasMore}
	out.NextCursor.SetToNull()
	if hasMore {
		next, err := h.cursors.Encode(sort, position())
		if err != nil {
			return out, err
		}
		out.NextCursor.SetTo(next)
	}
	return out, nil
}

// firstPageIfEmpty treats an empty cursor as none: it asks for the first page.
func firstPageIfEmpty(c api.OptString) api.OptString {
	if c.Value == "" {
		return api.OptString{}
	}
	return c
}

// threadParam is the thread a read names: thread_id, else its alias id ("" when neither).
func threadParam(threadID, id api.OptString) string {
	if v := strings.TrimSpace(threadID.Value); v != "" {
		return v
	}
	return strings.TrimSpace(id.Value)
}

// mailboxAddress writes a sender as `Name <address>` (the name quoted when it holds characters an address
// header reserves), or the bare address when no name is known.
func mailboxAddress(name, email string) string {
	if name == "" {
		return email
	}
	if strings.ContainsAny(name, `"(),.:;<>@[\]`) {
		name = strconv.Quote(name)
	}
	return name + " <" + email + ">"
}

// senders is a message's From as a list (empty when it had none).
func senders(name, email string) []string {
	if email == "" {
		return []string{}
	}
	return []string{mailboxAddress(name, email)}
}

func uniboxThread(r unibox.Row) api.UniboxThread {
	return api.UniboxThread{ID: r.MessageID, EmailID: r.MailboxID, ThreadID: r.ThreadID.String(),
		FromAddr: senders(r.FromName, r.FromEmail), ToAddr: r.To, Subject: r.Subject, Snippet: api.NewOptString(r.Snippet),
		InternalDate: r.LastMessageAt, Seen: r.Seen, MessageCount: int(r.Total), HasUnread: r.Unread > 0,
		Labels: uniboxLabels(r.Labels), Classification: classification(r.Verdict)}
}

func uniboxLabels(in []unibox.Label) []api.UniboxLabel {
	out := make([]api.UniboxLabel, len(in))
	for i, l := range in {
		out[i] = api.UniboxLabel{ID: l.ID, Title: l.Title, Color: l.Color}
	}
	return out
}

// inReplyTo is the In-Reply-To id as the list the contract spells it.
func inReplyTo(id string) []string {
	if id == "" {
		return []string{}
	}
	return []string{id}
}

func uniboxMessage(m unibox.Message) api.UniboxMessage {
	out := api.UniboxMessage{ID: m.ID, EmailID: m.MailboxID, ThreadID: m.ThreadID.String(), MessageID: api.NewOptString(m.MessageID),
		GmailID: optString(m.GmailID), ParentID: optString(m.ParentID), UID: api.NewOptInt(int(m.UID)), ModSeq: api.NewOptInt(int(m.ModSeq)),
		Flags: m.Flags, Bcc: m.Bcc, Cc: m.Cc, FromAddr: senders(m.FromName, m.FromEmail), InReplyTo: inReplyTo(m.InReplyTo),
		ReplyTo: m.ReplyTo, ToAddr: m.To, Subject: m.Subject, Size: api.NewOptInt(int(m.Size)), InternalDate: m.ReceivedAt,
		Snippet: api.NewOptString(m.Snippet), Seen: m.Seen, BodyPlain: api.NewOptString(m.Text), BodyHTML: api.NewOptString(m.HTML),
		UpdatedAt: api.NewOptDateTime(m.UpdatedAt), CreatedAt: api.NewOptDateTime(m.CreatedAt), Classification: classification(m.Verdict)}
	if m.SentAt != nil {
		out.SentDate = api.NewOptDateTime(*m.SentAt)
	}
	return out
}

// uniboxEmail is the message in GET /unibox/{id}'s spelling (date, from, to, ReplyTo; body_truncated).
func uniboxEmail(m unibox.Message) *api.UniboxEmail {
	out := &api.UniboxEmail{ID: m.ID, EmailID: m.MailboxID, ThreadID: m.ThreadID.String(), MessageID: api.NewOptString(m.MessageID),
		GmailID: optString(m.GmailID), ParentID: optString(m.ParentID), UID: api.NewOptInt(int(m.UID)), ModSeq: api.NewOptInt(int(m.ModSeq)),
		Flags: m.Flags, Bcc: m.Bcc, Cc: m.Cc, From: senders(m.FromName, m.FromEmail), InReplyTo: inReplyTo(m.InReplyTo),
		ReplyTo: m.ReplyTo, To: m.To, Subject: m.Subject, Size: api.NewOptInt(int(m.Size)), InternalDate: api.NewOptDateTime(m.ReceivedAt),
		Snippet: api.NewOptString(m.Snippet), Seen: m.Seen, BodyPlain: api.NewOptString(m.Text), BodyHTML: api.NewOptString(m.HTML),
		BodyTruncated: api.NewOptBool(m.Truncated), UpdatedAt: api.NewOptDateTime(m.UpdatedAt), CreatedAt: api.NewOptDateTime(m.CreatedAt),
		Classification: classification(m.Verdict)}
	if m.SentAt != nil {
		out.Date = api.NewOptDateTime(*m.SentAt)
	}
	return out
}

// classification is a stored verdict in the API's words; null for a message not classified.
func classification(v *unibox.Verdict) api.OptNilReplyClassification {
	var out api.OptNilReplyClassification
	if v == nil {
		out.SetToNull()
		return out
	}
	c := api.ReplyClassification{Intent: api.ReplyClassificationIntent(v.Intent), Confidence: v.Confidence,
		Evidence: make([]api.ReplyEvidence, len(v.Evidence)), UnsubscribeRequest: v.Unsubscribe}
	for i, e := range v.Evidence {
		c.Evidence[i] = api.ReplyEvidence{Kind: api.ReplyEvidenceKind(e.Kind), Name: e.Name, Value: e.Value}
	}
	if v.ReturnDate != nil {
		c.ReturnDate.SetTo(*v.ReturnDate)
	} else {
		c.ReturnDate.SetToNull()
	}
	out.SetTo(c)
	return out
}
