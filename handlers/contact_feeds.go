package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// ContactFeeds implements what hangs off one contact: notes, the activity feed, the timeline, sent emails
// and deals. Reading needs READ_CONTACTS / view_contacts, writing notes WRITE_CONTACTS / manage_contacts (the
// route table checks both). Every operation answers 404 contact_not_found for a contact outside the caller's
// organization, and reads or writes nothing of it.
//
// Notes belong to the contact, not to their author: anyone allowed to manage contacts may edit or delete any
// note of the organization (the author stays the person who wrote it). Writing a note needs a person behind
// the credential: sessions write as themselves, API keys and OAuth tokens as the member who owns them.
type ContactFeeds struct {
	pool    *pgxpool.Pool
	cursors *pagination.Cursors
	queries *dbq.Queries
}

// NewContactFeeds builds the per-contact feeds; cursors are signed with a key derived from secret.
func NewContactFeeds(pool *pgxpool.Pool, secret []byte) *ContactFeeds {
	return &ContactFeeds{pool: pool, cursors: pagination.NewCursors(secret), queries: dbq.New()}
}

// Limits and cursor sorts of the per-contact feeds.
const (
	maxNoteContent        = 10000
	maxNotesPage          = 100
	maxActivitiesPage     = 100
	maxTimelinePage       = 200
	maxSentEmailsPage     = 200
	defaultFeedPage       = 50
	sortContactNotes      = "contact_notes:created_at:desc"
	sortContactActivities = "contact_activities:created_at:desc"
	sortContactTimeline   = "contact_timeline:at:desc"
)

// subject checks that the contact exists in the transaction's organization and returns its creation facts.
func (h *ContactFeeds) subject(ctx context.Context, tx pgx.Tx, org, contact uuid.UUID) (dbq.ContactFeedSubjectRow, error) {
	row, err := h.queries.ContactFeedSubject(ctx, tx, dbq.ContactFeedSubjectParams{OrganizationID: org, ID: contact})
	if errors.Is(err, pgx.ErrNoRows) {
		return row, apierror.NotFound("contact_not_found", "Contact not found.").WithCause(err)
	}
	return row, err
}

// noteContent trims a note's content and checks it is 1 to 10000 characters.
func noteContent(v string) (string, error) {
	v = strings.TrimSpace(v)
	if n := utf8.RuneCountInString(v); n < 1 || n > maxNoteContent {
		return "", apierror.BadRequest("invalid_content", fmt.Sprintf("content must be 1 to %d characters (leading and trailing spaces are trimmed).", maxNoteContent))
	}
	return v, nil
}

// noteAuthor is the person a note is written by: the signed-in person, or the member owning the API key or
// OAuth grant. A key nobody owns cannot write notes.
func noteAuthor(ctx context.Context) (uuid.UUID, error) {
	p := auth.PrincipalFrom(ctx)
	if p == nil || p.UserID == uuid.Nil {
		return uuid.Nil, apierror.Forbidden("author_required",
			"A note is written by a person: use a session, or an API key that belongs to a member.")
	}
	return p.UserID, nil
}

// ContactsNotesList lists the contact's notes, newest first, with their authors.
func (h *ContactFeeds) ContactsNotesList(ctx context.Context, params api.ContactsNotesListParams) (*api.ContactNoteList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultFeedPage, maxNotesPage, true)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortContactNotes, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.ContactNoteListRow, error) {
			if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
				return nil, err
			}
			args := dbq.ContactNoteListParams{OrganizationID: org, ContactID: params.ID, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.ContactNoteList(ctx, tx, args)
		},
		func(n dbq.ContactNoteListRow) timeKey { return timeKey{At: n.CreatedAt, ID: n.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.ContactNoteList{Data: make([]api.ContactNote, len(page.Data)), Pagination: feedPagination(page.HasMore, page.NextCursor)}
	for i, n := range page.Data {
		out.Data[i] = contactNoteOf(org, n)
	}
	return out, nil
}

// ContactsNotesCreate adds a note written by the caller and records a note_added activity with it.
func (h *ContactFeeds) ContactsNotesCreate(ctx context.Context, req *api.ContactNoteCreate, params api.ContactsNotesCreateParams) (*api.ContactNote, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	author, err := noteAuthor(ctx)
	if err != nil {
		return nil, err
	}
	content, err := noteContent(req.Content)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var note dbq.ContactNoteListRow
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
			return err
		}
		row, err := h.queries.ContactNoteInsert(ctx, tx, dbq.ContactNoteInsertParams{
			OrganizationID: org, ID: id, ContactID: params.ID, UserID: author, Content: content})
		if err != nil {
			return db.Classify(err, "Note")
		}
		note = dbq.ContactNoteListRow(row)
		return h.recordNote(ctx, tx, activity.NoteAdded, audit.ActionCreate, "contact_note.created", author, note)
	})
	if err != nil {
		return nil, err
	}
	out := contactNoteOf(org, note)
	return &out, nil
}

// ContactsNotesUpdate replaces a note's content and records a note_updated activity by the editor.
func (h *ContactFeeds) ContactsNotesUpdate(ctx context.Context, req *api.ContactNoteUpdate, params api.ContactsNotesUpdateParams) (*api.ContactNote, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	editor, err := noteAuthor(ctx)
	if err != nil {
		return nil, err
	}
	raw, ok := req.Content.Get()
	if !ok {
		return nil, apierror.BadRequest("invalid_content", "Send the note's new content.")
	}
	content, err := noteContent(raw)
	if err != nil {
		return nil, err
	}
	var note dbq.ContactNoteListRow
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
			return err
		}
		row, err := h.queries.ContactNoteUpdate(ctx, tx, dbq.ContactNoteUpdateParams{
			OrganizationID: org, ContactID: params.ID, ID: params.NoteId, Content: content})
		if errors.Is(err, pgx.ErrNoRows) {
			return apierror.NotFound("note_not_found", "Note not found on this contact.").WithCause(err)
		}
		if err != nil {
			return err
		}
		note = dbq.ContactNoteListRow(row)
		return h.recordNote(ctx, tx, activity.NoteUpdated, audit.ActionUpdate, "contact_note.updated", editor, note)
	})
	if err != nil {
		return nil, err
	}
	out := contactNoteOf(org, note)
	return &out, nil
}

// recordNote writes the activity and audit entries of a note written or edited by user.
func (h *ContactFeeds) recordNote(ctx context.Context, tx pgx.Tx, activityType, action, event string, user uuid.UUID, note dbq.ContactNoteListRow) error {
	err := activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{note.ContactID},
		UserID: uuid.NullUUID{UUID: user, Valid: true}, Type: activityType, Metadata: map[string]any{"note_id": note.ID}})
	if err != nil {
		return err
	}
	return audit.Record(ctx, tx, audit.Entry{Action: action, Event: event, EntityType: audit.EntityContactNote, EntityID: note.ID.String(),
		Metadata: map[string]any{"contact_id": note.ContactID, "length": utf8.RuneCountInString(note.Content)}})
}

// ContactsNotesDelete removes a note. Its note_added activity stays in the log; the timeline leaves it out.
func (h *ContactFeeds) ContactsNotesDelete(ctx context.Context, params api.ContactsNotesDeleteParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
			return err
		}
		n, err := h.queries.ContactNoteDelete(ctx, tx, dbq.ContactNoteDeleteParams{OrganizationID: org, ContactID: params.ID, ID: params.NoteId})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("note_not_found", "Note not found on this contact.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "contact_note.deleted", EntityType: audit.EntityContactNote,
			EntityID: params.NoteId.String(), Metadata: map[string]any{"contact_id": params.ID}})
	})
}

// contactNoteOf maps a note with its author.
func contactNoteOf(org uuid.UUID, n dbq.ContactNoteListRow) api.ContactNote {
	out := api.ContactNote{ID: n.ID, ContactID: n.ContactID, OrganizationID: org, UserID: n.UserID, Content: n.Content,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
	if u, ok := feedUser(n.AuthorID, n.AuthorEmail, n.AuthorFirstName, n.AuthorLastName); ok {
		out.User = api.NewOptContactNoteUser(api.ContactNoteUser(u))
	}
	return out
}

// feedUser is the {id, name, email} object of a note's author or an activity's actor; ok is false when the
// person's account no longer exists (or nobody acted).
func feedUser(id uuid.NullUUID, email, first, last *string) (map[string]jx.Raw, bool) {
	if !id.Valid {
		return nil, false
	}
	name := strings.TrimSpace(feedText(first) + " " + feedText(last))
	return map[string]jx.Raw{"id": auditJSON(id.UUID.String()), "name": auditJSON(name), "email": auditJSON(feedText(email))}, true
}

// feedText reads a column of a left-joined row, empty when the join found nothing.
func feedText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// feedPagination is the pagination object of a per-contact feed; none of them counts its rows.
func feedPagination(hasMore bool, next *string) api.Pagination {
	out := api.Pagination{HasMore: hasMore}
	out.Total.SetToNull()
	out.NextCursor = optNilStringPtr(next)
	return out
}

// ContactsActivitiesList lists the contact's recorded activities, newest first, with the acting person.
func (h *ContactFeeds) ContactsActivitiesList(ctx context.Context, params api.ContactsActivitiesListParams) (*api.ContactActivityList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultFeedPage, maxActivitiesPage, true)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortContactActivities, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.ContactActivityListRow, error) {
			if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
				return nil, err
			}
			args := dbq.ContactActivityListParams{OrganizationID: org, ContactID: params.ID, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.ContactActivityList(ctx, tx, args)
		},
		func(a dbq.ContactActivityListRow) timeKey { return timeKey{At: a.CreatedAt, ID: a.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.ContactActivityList{Data: make([]api.ContactActivity, len(page.Data)), Pagination: feedPagination(page.HasMore, page.NextCursor)}
	for i, a := range page.Data {
		if out.Data[i], err = contactActivityOf(org, a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// contactActivityOf maps an activity with its metadata as recorded.
func contactActivityOf(org uuid.UUID, a dbq.ContactActivityListRow) (api.ContactActivity, error) {
	out := api.ContactActivity{ID: a.ID, ContactID: a.ContactID, OrganizationID: org,
		ActivityType: api.ContactActivityActivityType(a.ActivityType), Metadata: api.ContactActivityMetadata{}, CreatedAt: a.CreatedAt}
	if err := out.Metadata.UnmarshalJSON(a.Metadata); err != nil {
		return out, fmt.Errorf("decode activity %s metadata: %w", a.ID, err)
	}
	out.UserID = feedNilUUID(a.UserID)
	if u, ok := feedUser(a.AuthorID, a.AuthorEmail, a.AuthorFirstName, a.AuthorLastName); ok {
		out.User = api.NewOptContactActivityUser(api.ContactActivityUser(u))
	}
	return out, nil
}

func feedNilUUID(v uuid.NullUUID) api.OptNilUUID {
	var out api.OptNilUUID
	if v.Valid {
		out.SetTo(v.UUID)
	} else {
		out.SetToNull()
	}
	return out
}

// ContactsEmailsList lists the mail delivered to the contact, newest first. A send task counts once the
// worker handed it to the mailbox provider (status sent); queued, failed, canceled and ambiguous tasks (the
// last may or may not have reached the provider) are not listed. Paging: pass the last row's sent_at and
// task_id as before_at and before_id; pagination.next_cursor stays null because the route takes no cursor.
func (h *ContactFeeds) ContactsEmailsList(ctx context.Context, params api.ContactsEmailsListParams) (*api.ContactSentEmailList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultFeedPage, maxSentEmailsPage, true)
	if err != nil {
		return nil, err
	}
	if params.BeforeAt.Set != params.BeforeID.Set {
		return nil, apierror.BadRequest("invalid_cursor", "Send before_at and before_id together (the last row's sent_at and task_id), or neither.")
	}
	args := dbq.ContactSentEmailListParams{OrganizationID: org, ContactID: params.ID}
	if params.BeforeAt.Set {
		args.BeforeSentAt, args.BeforeID = &params.BeforeAt.Value, uuid.NullUUID{UUID: params.BeforeID.Value, Valid: true}
	}
	rows, hasMore, err := keysetRows(ctx, h.pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]dbq.ContactSentEmailListRow, error) {
			if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
				return nil, err
			}
			args.RowLimit = rowLimit
			return h.queries.ContactSentEmailList(ctx, tx, args)
		}, nil)
	if err != nil {
		return nil, err
	}
	out := &api.ContactSentEmailList{Data: make([]api.ContactSentEmail, len(rows)), Pagination: feedPagination(hasMore, nil)}
	for i, r := range rows {
		out.Data[i] = sentEmailOf(r)
	}
	return out, nil
}

// sentEmailOf maps a delivered send task; the mailbox fields are the sender as it was when the task was written.
func sentEmailOf(r dbq.ContactSentEmailListRow) api.ContactSentEmail {
	out := api.ContactSentEmail{TaskID: r.ID, Status: r.Status, MessageID: r.MessageID, Subject: r.Subject,
		EmailAccountID: feedNilUUID(r.MailboxID), EmailAccountEmail: optNilString(r.FromEmail), EmailAccountName: optNilString(r.FromName),
		CampaignID: feedNilUUID(r.CampaignID), CampaignName: optNilStringPtr(r.CampaignName),
		StepID: feedNilUUID(r.StepID), StepName: optNilString(r.StepName),
		OpenedAt: optNilTime(r.OpenedAt), ClickedAt: optNilTime(r.ClickedAt), RepliedAt: optNilTime(r.RepliedAt), BouncedAt: optNilTime(r.BouncedAt)}
	if r.SentAt != nil {
		out.SentAt = *r.SentAt
	}
	return out
}

// ContactsDealsList returns every deal linked to the contact, newest first.
func (h *ContactFeeds) ContactsDealsList(ctx context.Context, params api.ContactsDealsListParams) ([]api.Deal, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var rows []dbq.Deal
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.subject(ctx, tx, org, params.ID); err != nil {
			return err
		}
		rows, err = h.queries.ContactDealList(ctx, tx, dbq.ContactDealListParams{OrganizationID: org, ContactID: params.ID})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]api.Deal, len(rows))
	for i, d := range rows {
		if out[i], err = contactDealOf(d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// contactDealOf maps a deal without the joins only the CRM lists add.
func contactDealOf(d dbq.Deal) (api.Deal, error) {
	out := api.Deal{ID: d.ID, OrganizationID: d.OrganizationID, PipelineID: d.PipelineID, StageID: d.StageID,
		ContactID: feedNilUUID(d.ContactID), Name: d.Name, Currency: d.Currency, Status: api.DealStatus(d.Status),
		ExpectedCloseDate: optNilTime(d.ExpectedCloseDate), WonAt: optNilTime(d.WonAt), LostAt: optNilTime(d.LostAt),
		LostReason: optNilStringPtr(d.LostReason), AssignedTo: feedNilUUID(d.AssignedTo), CampaignID: feedNilUUID(d.CampaignID),
		SourceMailboxID: feedNilUUID(d.SourceMailboxID), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	v, err := d.Value.Float64Value()
	if err != nil {
		return out, fmt.Errorf("deal %s value: %w", d.ID, err)
	}
	if v.Valid {
		out.Value = api.NewOptNilFloat64(v.Float64)
	} else {
		out.Value.SetToNull()
	}
	return out, nil
}
