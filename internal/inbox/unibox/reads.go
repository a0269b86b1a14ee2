package unibox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// ScheduledPendingMax is the most replies and composed messages an organization may have queued (the
// overview's scheduled_pending_max).
const ScheduledPendingMax = 1000

// Count is the number of unread messages outside spam and trash in the scope's mailboxes, or in mailbox when
// given (the route has checked the scope may read it).
func Count(ctx context.Context, q Querier, s Scope, mailbox *uuid.UUID) (int64, error) {
	var only []uuid.UUID
	if mailbox != nil {
		only = []uuid.UUID{*mailbox}
	}
	n, err := queries.UniboxUnreadCount(ctx, q, dbq.UniboxUnreadCountParams{OrganizationID: s.Org, MailboxIds: s.narrow(only)})
	if err != nil {
		return 0, fmt.Errorf("unibox count: %w", err)
	}
	return n, nil
}

// Tally is a number of threads and how many of them have an unread message.
type Tally struct {
	Total, Unread int64
}

// FolderTally is one folder's tally.
type FolderTally struct {
	Folder string
	Tally
}

// MailboxTally is one mailbox's tally (threads outside spam and trash).
type MailboxTally struct {
	ID          uuid.UUID
	Email, Name string
	Tally
}

// LabelTally is one tag's or category's tally (threads outside spam and trash).
type LabelTally struct {
	Label
	Tally
}

// Overview is the sidebar's counts of threads.
type Overview struct {
	// Headline counts, outside spam and trash.
	Total, Unread, Today, Week, Snoozed, AwaitingReply int64
	// ScheduledPending counts queued replies and composed messages.
	ScheduledPending int64
	// Folders are the six folders in sidebar order (Folders).
	Folders []FolderTally
	// Mailboxes are every mailbox of the scope, by address.
	Mailboxes []MailboxTally
	// Tags are every mailbox tag, Categories every category, in label order.
	Tags, Categories []LabelTally
	// TodayStart is midnight UTC of now's day; WeekStart Monday 00:00 UTC of now's ISO week.
	TodayStart, WeekStart time.Time
}

// Windows are the starts of the today and week windows around now: midnight UTC and the ISO week's Monday.
func Windows(now time.Time) (today, week time.Time) {
	today = day(now.UTC())
	back := (int(today.Weekday()) + 6) % 7 // days since Monday
	return today, today.AddDate(0, 0, -back)
}

// ReadOverview counts the scope's threads for the sidebar at now; Snoozed counts the scope user's running
// snoozes (0 without a user).
func ReadOverview(ctx context.Context, q Querier, s Scope, now time.Time) (Overview, error) {
	o := Overview{}
	o.TodayStart, o.WeekStart = Windows(now)
	mailboxes := s.mailboxFilter()
	counts, err := queries.UniboxFolderCounts(ctx, q, dbq.UniboxFolderCountsParams{OrganizationID: s.Org, MailboxIds: mailboxes,
		TodayStart: o.TodayStart, WeekStart: o.WeekStart})
	if err != nil {
		return o, fmt.Errorf("unibox folder counts: %w", err)
	}
	folders := map[string]Tally{}
	perMailbox := map[uuid.UUID]Tally{}
	for _, c := range counts {
		t := folders[c.FolderRole]
		t.Total, t.Unread = t.Total+c.Total, t.Unread+c.Unread
		folders[c.FolderRole] = t
		if c.FolderRole == AllFolders {
			o.Total, o.Unread, o.Today, o.Week = o.Total+c.Total, o.Unread+c.Unread, o.Today+c.Today, o.Week+c.Week
			perMailbox[c.MailboxID] = Tally{Total: c.Total, Unread: c.Unread}
		}
	}
	for _, f := range Folders {
		o.Folders = append(o.Folders, FolderTally{Folder: f, Tally: folders[f]})
	}
	if o.AwaitingReply, err = queries.UniboxAwaitingReplyCount(ctx, q, dbq.UniboxAwaitingReplyCountParams{OrganizationID: s.Org, MailboxIds: mailboxes}); err != nil {
		return o, fmt.Errorf("unibox awaiting reply: %w", err)
	}
	if s.User != uuid.Nil {
		if o.Snoozed, err = queries.UniboxSnoozedCount(ctx, q, dbq.UniboxSnoozedCountParams{OrganizationID: s.Org, UserID: s.User, Now: now, MailboxIds: mailboxes}); err != nil {
			return o, fmt.Errorf("unibox snoozed: %w", err)
		}
	}
	if o.ScheduledPending, err = queries.UniboxScheduledPendingCount(ctx, q, dbq.UniboxScheduledPendingCountParams{OrganizationID: s.Org, MailboxIds: mailboxes}); err != nil {
		return o, fmt.Errorf("unibox scheduled: %w", err)
	}
	boxes, err := queries.UniboxMailboxes(ctx, q, dbq.UniboxMailboxesParams{OrganizationID: s.Org, MailboxIds: mailboxes})
	if err != nil {
		return o, fmt.Errorf("unibox mailboxes: %w", err)
	}
	perTag := map[uuid.UUID]Tally{}
	o.Mailboxes = []MailboxTally{}
	for _, b := range boxes {
		t := perMailbox[b.ID]
		o.Mailboxes = append(o.Mailboxes, MailboxTally{ID: b.ID, Email: b.Email, Name: b.Name, Tally: t})
		for i, tag := range b.Tags {
			if slices.Contains(b.Tags[:i], tag) {
				continue // a tag listed twice counts once
			}
			sum := perTag[tag]
			sum.Total, sum.Unread = sum.Total+t.Total, sum.Unread+t.Unread
			perTag[tag] = sum
		}
	}
	if o.Tags, err = labelTallies(ctx, q, s.Org, "tag", perTag); err != nil {
		return o, err
	}
	cats, err := queries.UniboxCategoryCounts(ctx, q, dbq.UniboxCategoryCountsParams{OrganizationID: s.Org, MailboxIds: mailboxes})
	if err != nil {
		return o, fmt.Errorf("unibox category counts: %w", err)
	}
	perCategory := map[uuid.UUID]Tally{}
	for _, c := range cats {
		perCategory[c.LabelID] = Tally{Total: c.Total, Unread: c.Unread}
	}
	o.Categories, err = labelTallies(ctx, q, s.Org, "category", perCategory)
	return o, err
}

// labelTallies lists every label of kind in label order with its tally (zero when absent from counts).
func labelTallies(ctx context.Context, q Querier, org uuid.UUID, kind string, counts map[uuid.UUID]Tally) ([]LabelTally, error) {
	labels, err := queries.UniboxLabelsOfKind(ctx, q, dbq.UniboxLabelsOfKindParams{OrganizationID: org, Kind: kind})
	if err != nil {
		return nil, fmt.Errorf("unibox %s labels: %w", kind, err)
	}
	out := make([]LabelTally, len(labels))
	for i, l := range labels {
		out[i] = LabelTally{Label: Label{ID: l.ID, Title: l.Title, Color: l.Color}, Tally: counts[l.ID]}
	}
	return out, nil
}

// Message is one stored message as the inbox shows it.
type Message struct {
	ID, MailboxID, ThreadID uuid.UUID
	// MessageID is the Message-ID header; InReplyTo the In-Reply-To's first id; ParentID the stored message of
	// the thread that InReplyTo names ("" when none is stored).
	MessageID, InReplyTo, ParentID string
	GmailID                        string
	UID, ModSeq                    int64
	Flags, To, Cc, Bcc, ReplyTo    []string
	FromEmail, FromName            string
	Subject, Snippet               string
	Size                           int32
	ReceivedAt                     time.Time
	SentAt                         *time.Time
	Seen                           bool
	Text, HTML                     string
	Truncated                      bool
	UpdatedAt, CreatedAt           time.Time
	Verdict                        *Verdict
}

// MessagePosition is where a page of a conversation ended.
type MessagePosition struct {
	At time.Time `json:"t"`
	ID uuid.UUID `json:"i"`
}

// MessageSort names a conversation's order in its cursors.
const MessageSort = "received_at:asc,id:asc"

// PositionOfMessage is m's place in its conversation.
func PositionOfMessage(m Message) MessagePosition {
	return MessagePosition{At: m.ReceivedAt, ID: m.ID}
}

// Conversation reads rowLimit messages of thread t, oldest first, after the position (nil: the first page).
// inMailbox reads only t's own messages (the client named its mailbox); otherwise every thread of the same
// conversation in the scope's mailboxes is read, one copy per Message-ID.
func Conversation(ctx context.Context, q Querier, s Scope, t Thread, inMailbox bool, after *MessagePosition, rowLimit int) ([]Message, error) {
	threads := []uuid.UUID{t.ID}
	if !inMailbox {
		var err error
		threads, err = queries.UniboxConversationThreads(ctx, q, dbq.UniboxConversationThreadsParams{OrganizationID: s.Org, ThreadID: t.ID,
			ConversationKey: t.ConversationKey, MailboxIds: s.mailboxFilter()})
		if err != nil {
			return nil, fmt.Errorf("unibox conversation: %w", err)
		}
	}
	p := dbq.UniboxThreadMessagesParams{OrganizationID: s.Org, ThreadIds: threads, ThreadID: t.ID, RowLimit: int32(rowLimit)}
	if after != nil {
		p.AfterAt, p.AfterID = &after.At, uuid.NullUUID{UUID: after.ID, Valid: true}
	}
	rows, err := queries.UniboxThreadMessages(ctx, q, p)
	if err != nil {
		return nil, fmt.Errorf("unibox conversation messages: %w", err)
	}
	out := make([]Message, len(rows))
	for i, r := range rows {
		if out[i], err = message(dbq.UniboxMessageGetRow(r)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadMessage reads one message of the scope.
func ReadMessage(ctx context.Context, q Querier, s Scope, id uuid.UUID) (Message, error) {
	r, err := queries.UniboxMessageGet(ctx, q, dbq.UniboxMessageGetParams{OrganizationID: s.Org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !s.allows(r.MailboxID) {
		return Message{}, ErrMessageNotFound
	}
	if err != nil {
		return Message{}, fmt.Errorf("unibox message: %w", err)
	}
	return message(r)
}

func message(r dbq.UniboxMessageGetRow) (Message, error) {
	v, err := verdictCols{intent: &r.Intent, confidence: &r.IntentConfidence, evidence: r.IntentEvidence,
		unsubscribe: &r.UnsubscribeRequest, returnDate: r.ReturnDate}.verdict()
	if err != nil {
		return Message{}, err
	}
	return Message{ID: r.ID, MailboxID: r.MailboxID, ThreadID: r.ThreadID, MessageID: r.MessageID, InReplyTo: r.InReplyTo,
		ParentID: r.ParentID, GmailID: r.GmailID, UID: r.Uid, ModSeq: r.ModSeq, Flags: r.Flags, To: r.ToList, Cc: r.CcList,
		Bcc: r.BccList, ReplyTo: r.ReplyToList, FromEmail: r.FromEmail, FromName: r.FromName, Subject: r.Subject,
		Snippet: r.Snippet, Size: r.Size, ReceivedAt: r.ReceivedAt, SentAt: r.SentAt, Seen: r.Seen, Text: r.BodyText,
		HTML: r.BodyHtml, Truncated: r.BodyTruncated, UpdatedAt: r.UpdatedAt, CreatedAt: r.CreatedAt, Verdict: v}, nil
}

// ThreadLabels lists the categories on thread t, in label order.
func ThreadLabels(ctx context.Context, q Querier, s Scope, t Thread) ([]Label, error) {
	rows, err := queries.UniboxThreadLabels(ctx, q, dbq.UniboxThreadLabelsParams{OrganizationID: s.Org, ThreadID: t.ID})
	if err != nil {
		return nil, fmt.Errorf("unibox thread labels: %w", err)
	}
	out := make([]Label, len(rows))
	for i, l := range rows {
		out[i] = Label{ID: l.ID, Title: l.Title, Color: l.Color}
	}
	return out, nil
}
