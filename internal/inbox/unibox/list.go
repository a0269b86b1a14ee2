package unibox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Folders are the folder roles a list may name, in sidebar order; AllFolders is the summary role of every
// folder but spam and trash, listed when none is named.
var Folders = []string{"inbox", "sent", "drafts", "archive", "spam", "trash"}

// AllFolders is the role of the summary rows over every folder but spam and trash.
const AllFolders = "all"

// ListSort names the list's order in its cursors.
const ListSort = "last_message_at:desc,thread_id:desc"

// ListInput is a thread list request as the client sent it.
type ListInput struct {
	// Folder is one of Folders, or "" for every folder but spam and trash.
	Folder        string
	From, Subject string
	Unseen        bool
	AwaitingReply bool
	// Snoozed is the raw value: "" or "false" leaves the caller's snoozed threads out, "true" lists only them.
	Snoozed string
	// Since and Until are days (UTC), both inclusive; nil when not given.
	Since, Until *time.Time
	// EmailID and EmailIDs (comma-separated, invalid ids dropped) name the mailboxes together.
	EmailID     *uuid.UUID
	EmailIDs    *string
	CategoryIDs *string
	// Uncategorized lists threads without a category (with CategoryIDs: either).
	Uncategorized bool
}

// Filter is a parsed, scoped thread list request.
type Filter struct {
	role          string
	from, subject string
	unseen        bool
	awaitingReply bool
	snoozed       bool
	user          uuid.UUID
	since, before *time.Time
	// mailboxes nil: every mailbox; empty: none (the list is empty).
	mailboxes     []uuid.UUID
	categories    []uuid.UUID
	byCategory    bool
	uncategorized bool
}

// ParseList checks in and scopes it to s: an unknown folder is 400 invalid_folder, a snoozed value other than
// true or false 400 invalid_snoozed, snoozed=true without a user 400 user_required. Mailboxes outside the
// scope are dropped like invalid ids.
func ParseList(in ListInput, s Scope) (Filter, error) {
	f := Filter{role: AllFolders, from: strings.TrimSpace(in.From), subject: strings.TrimSpace(in.Subject),
		unseen: in.Unseen, awaitingReply: in.AwaitingReply, user: s.User, uncategorized: in.Uncategorized}
	if in.Folder != "" {
		if !slices.Contains(Folders, in.Folder) {
			return Filter{}, InvalidFolder(in.Folder)
		}
		f.role = in.Folder
	}
	switch strings.ToLower(strings.TrimSpace(in.Snoozed)) {
	case "", "false":
	case "true":
		if s.User == uuid.Nil {
			return Filter{}, apierror.BadRequest("user_required",
				"snoozed=true lists the caller's snoozed threads, and this credential acts for no user: use an API key created by a user, or a session.")
		}
		f.snoozed = true
	default:
		return Filter{}, apierror.BadRequest("invalid_snoozed",
			fmt.Sprintf("snoozed must be true (only snoozed threads) or false (leave them out), and %q is neither.", in.Snoozed))
	}
	if in.Since != nil {
		d := day(*in.Since)
		f.since = &d
	}
	if in.Until != nil {
		d := day(*in.Until).AddDate(0, 0, 1)
		f.before = &d
	}
	var wanted []uuid.UUID
	if in.EmailID != nil || in.EmailIDs != nil {
		wanted = []uuid.UUID{}
		if in.EmailID != nil {
			wanted = append(wanted, *in.EmailID)
		}
		if in.EmailIDs != nil {
			wanted = append(wanted, idList(*in.EmailIDs)...)
		}
	}
	f.mailboxes = s.narrow(wanted)
	if in.CategoryIDs != nil {
		f.byCategory, f.categories = true, idList(*in.CategoryIDs)
	}
	return f, nil
}

// InvalidFolder is the 400 for a folder that is none of Folders.
func InvalidFolder(v string) error {
	return apierror.BadRequest("invalid_folder",
		fmt.Sprintf("folder must be one of %s (or left out for every folder but spam and trash), and %q is not.", strings.Join(Folders, ", "), v))
}

// day is the UTC day of t's calendar date.
func day(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// idList reads the uuids of a comma-separated list, skipping anything else and repeats.
func idList(s string) []uuid.UUID {
	out := []uuid.UUID{}
	for part := range strings.SplitSeq(s, ",") {
		if id, err := uuid.Parse(strings.TrimSpace(part)); err == nil && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Position is where a list page ended: the last row's time and thread.
type Position struct {
	At     time.Time `json:"t"`
	Thread uuid.UUID `json:"i"`
}

// Label is a category on a thread.
type Label struct {
	ID    uuid.UUID `json:"id"`
	Title string    `json:"title"`
	Color string    `json:"color"`
}

// Row is one thread of the list, shown by its newest message in the listed folder.
type Row struct {
	// MessageID is the newest message's id; MailboxID its mailbox.
	MessageID, MailboxID, ThreadID uuid.UUID
	LastMessageAt                  time.Time
	// Total and Unread count the thread's messages in the listed folder.
	Total, Unread       int32
	FromEmail, FromName string
	To                  []string
	Subject, Snippet    string
	Seen                bool
	Labels              []Label
	// Verdict is the thread's newest classified inbound message's; nil when none is classified.
	Verdict *Verdict
}

// PositionOf is r's place in the list.
func PositionOf(r Row) Position {
	return Position{At: r.LastMessageAt, Thread: r.ThreadID}
}

// builder collects positional arguments; $1 is always the organization.
type builder struct {
	args []any
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

// likeEscape makes s match itself inside a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// maxCandidates is how many threads a category filter may select before the list stops naming them: past it
// the categories are common, and a scan in the list's own order, which stops at the page's last row, beats
// reading every labelled thread first.
const maxCandidates = 10000

// candidates are the threads carrying any of the categories, when at most maxCandidates do (ok false
// otherwise). Naming them lets Postgres read a rare category's threads by key instead of probing the labels of
// every thread the list's order passes until the page is full.
func candidates(ctx context.Context, q Querier, org uuid.UUID, categories []uuid.UUID) (ids []uuid.UUID, ok bool, err error) {
	ids, err = queries.UniboxCategoryThreads(ctx, q, dbq.UniboxCategoryThreadsParams{OrganizationID: org, LabelIds: categories,
		RowLimit: maxCandidates + 1})
	if err != nil {
		return nil, false, fmt.Errorf("unibox category candidates: %w", err)
	}
	return ids, len(ids) <= maxCandidates, nil
}

// ListSQL compiles f into the list's statement: rowLimit rows after the position (nil: the first page) in
// the list's order, with each row's newest message, categories and verdict. now decides which snoozes are
// still running. A category filter alone first reads its threads when they are few (see candidates). The
// statement is sent per call (pgx.QueryExecModeCacheDescribe leads args): Postgres plans it with the actual
// values, so a selective filter never gets a generic plan.
func ListSQL(ctx context.Context, q Querier, org uuid.UUID, f Filter, now time.Time, after *Position, rowLimit int) (string, []any, error) {
	b := &builder{}
	b.arg(org)
	w := []string{"f.organization_id = $1", "f.folder_role = " + b.arg(f.role)}
	// The messages of the listed folder, for the sender filter.
	scope := "s.folder_role NOT IN ('spam', 'trash')"
	if f.role != AllFolders {
		scope = "s.folder_role = $2"
	}
	if after != nil {
		w = append(w, fmt.Sprintf("(f.last_message_at, f.thread_id) < (%s, %s)", b.arg(after.At), b.arg(after.Thread)))
	}
	if f.mailboxes != nil {
		switch len(f.mailboxes) {
		case 0:
			w = append(w, "false")
		case 1:
			// Equality, so the mailbox index (organization_id, mailbox_id, folder_role, ...) gives the order.
			w = append(w, "f.mailbox_id = "+b.arg(f.mailboxes[0]))
		default:
			w = append(w, "f.mailbox_id = ANY ("+b.arg(f.mailboxes)+"::uuid[])")
		}
	}
	if f.unseen {
		w = append(w, "f.unread > 0")
	}
	if f.since != nil {
		w = append(w, "f.last_message_at >= "+b.arg(*f.since))
	}
	if f.before != nil {
		w = append(w, "f.last_message_at < "+b.arg(*f.before))
	}
	if f.awaitingReply {
		w = append(w, "EXISTS (SELECT 1 FROM inbox_threads t WHERE t.organization_id = $1 AND t.id = f.thread_id AND t.awaiting_reply)")
	}
	if f.user != uuid.Nil {
		cond := fmt.Sprintf("EXISTS (SELECT 1 FROM inbox_snoozes z WHERE z.organization_id = $1 AND z.user_id = %s AND z.thread_id = f.thread_id AND z.snoozed_until > %s)",
			b.arg(f.user), b.arg(now))
		if !f.snoozed {
			cond = "NOT " + cond
		}
		w = append(w, cond)
	}
	var labelled []string
	switch {
	case f.byCategory && !f.uncategorized && len(f.categories) > 0:
		ids, few, err := candidates(ctx, q, org, f.categories)
		if err != nil {
			return "", nil, err
		}
		if few {
			labelled = append(labelled, "f.thread_id = ANY ("+b.arg(ids)+"::uuid[])")
			break
		}
		fallthrough
	case f.byCategory:
		labelled = append(labelled, "EXISTS (SELECT 1 FROM inbox_thread_labels tl WHERE tl.organization_id = $1 AND tl.thread_id = f.thread_id AND tl.label_id = ANY ("+b.arg(f.categories)+"::uuid[]))")
	}
	if f.uncategorized {
		labelled = append(labelled, "NOT EXISTS (SELECT 1 FROM inbox_thread_labels tl WHERE tl.organization_id = $1 AND tl.thread_id = f.thread_id)")
	}
	if len(labelled) > 0 {
		w = append(w, "("+strings.Join(labelled, " OR ")+")")
	}
	if f.subject != "" {
		w = append(w, "EXISTS (SELECT 1 FROM inbox_messages n WHERE n.organization_id = $1 AND n.id = f.last_message_id AND n.subject ILIKE "+
			b.arg("%"+likeEscape(f.subject)+"%")+")")
	}
	if f.from != "" {
		p := b.arg("%" + likeEscape(f.from) + "%")
		w = append(w, fmt.Sprintf("EXISTS (SELECT 1 FROM inbox_messages s WHERE s.organization_id = $1 AND s.thread_id = f.thread_id AND %s AND (s.from_email ILIKE %s OR s.from_name ILIKE %s))", scope, p, p))
	}
	// The page is cut from the summaries alone (the inner query, over the list's indexes), and only its rows
	// read their newest message, categories and verdict.
	sql := `SELECT f.last_message_id, f.mailbox_id, f.thread_id, f.last_message_at, f.total, f.unread,
  m.from_email, m.from_name, m.to_list, m.subject, m.snippet, m.seen, coalesce(lb.labels, '[]'),
  v.intent, v.intent_confidence, v.intent_evidence, v.unsubscribe_request, v.return_date
FROM (
  SELECT f.organization_id, f.thread_id, f.mailbox_id, f.last_message_at, f.last_message_id, f.total, f.unread
  FROM inbox_thread_folders f
  WHERE ` + strings.Join(w, "\n    AND ") + `
  ORDER BY f.last_message_at DESC, f.thread_id DESC
  LIMIT ` + b.arg(rowLimit) + `
) f
JOIN inbox_messages m ON m.organization_id = f.organization_id AND m.id = f.last_message_id
LEFT JOIN LATERAL (
  SELECT jsonb_agg(jsonb_build_object('id', l.id, 'title', l.title, 'color', l.color) ORDER BY l.position, l.id) AS labels
  FROM inbox_thread_labels tl JOIN labels l ON l.organization_id = tl.organization_id AND l.id = tl.label_id AND l.kind = 'category'
  WHERE tl.organization_id = f.organization_id AND tl.thread_id = f.thread_id
) lb ON true
LEFT JOIN LATERAL (
  SELECT c.intent, c.intent_confidence, c.intent_evidence, c.unsubscribe_request, c.return_date FROM inbox_messages c
  WHERE c.organization_id = f.organization_id AND c.thread_id = f.thread_id AND c.intent <> '' AND NOT c.outbound
  ORDER BY c.received_at DESC, c.id DESC LIMIT 1
) v ON true
ORDER BY f.last_message_at DESC, f.thread_id DESC`
	return sql, append([]any{pgx.QueryExecModeCacheDescribe}, b.args...), nil
}

// List reads rowLimit rows of the list after the position (nil: the first page).
func List(ctx context.Context, q Querier, org uuid.UUID, f Filter, now time.Time, after *Position, rowLimit int) ([]Row, error) {
	sql, args, err := ListSQL(ctx, q, org, f, now, after, rowLimit)
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("unibox list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Row, error) {
		var (
			row    Row
			labels []byte
			v      verdictCols
		)
		err := r.Scan(&row.MessageID, &row.MailboxID, &row.ThreadID, &row.LastMessageAt, &row.Total, &row.Unread,
			&row.FromEmail, &row.FromName, &row.To, &row.Subject, &row.Snippet, &row.Seen, &labels,
			&v.intent, &v.confidence, &v.evidence, &v.unsubscribe, &v.returnDate)
		if err != nil {
			return row, err
		}
		if err := json.Unmarshal(labels, &row.Labels); err != nil {
			return row, fmt.Errorf("thread labels: %w", err)
		}
		row.Verdict, err = v.verdict()
		return row, err
	})
	if err != nil {
		return nil, fmt.Errorf("unibox list: %w", err)
	}
	return out, nil
}
