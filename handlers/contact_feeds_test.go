package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// feedContact writes a contact of org with SQL (source import) and returns its id and created_at.
func feedContact(t *testing.T, env *apitest.Env, org uuid.UUID, email string) (uuid.UUID, time.Time) {
	t.Helper()
	id, at, err := contacts.NewID()
	require.NoError(t, err)
	feedExec(t, env, `INSERT INTO contacts (organization_id, id, email, source, created_at, updated_at)
		VALUES ($1, $2, $3, 'import', $4, $4)`, org, id, email, at)
	return id, at
}

// feedExec runs seed SQL as the database owner (row-level security does not apply).
func feedExec(t *testing.T, env *apitest.Env, sql string, args ...any) {
	t.Helper()
	_, err := env.DB.OwnerPool(t).Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// feedRawError sends a request the SDK would not build and returns the answer's status and error code.
func feedRawError(t *testing.T, env *apitest.Env, method, path, token, body string) (int, string) {
	t.Helper()
	resp := env.Do(t, method, path, token, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
	var envelope struct {
		Code string `json:"code"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&envelope)
	return resp.StatusCode, envelope.Code
}

// feedActivityRows returns a contact's activity rows (type, user id, metadata) oldest first.
func feedActivityRows(t *testing.T, env *apitest.Env, contact uuid.UUID) []string {
	t.Helper()
	rows, err := env.DB.OwnerPool(t).Query(context.Background(),
		`SELECT activity_type || ' ' || coalesce(user_id::text, '-') || ' ' || metadata::text
		 FROM contact_activities WHERE contact_id = $1 ORDER BY created_at, id`, contact)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

func userField(t *testing.T, u map[string][]byte, key string) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(u[key], &s))
	return s
}

func TestContactNotes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	feedExec(t, env, `UPDATE users SET first_name = 'Ada', last_name = 'Lovelace' WHERE id = $1`, boot.UserID)
	ada, _ := feedContact(t, env, boot.OrganizationID, "ada@example.com")
	bob, _ := feedContact(t, env, boot.OrganizationID, "bob@example.com")

	// Create: content trimmed, written by the key's owner, with the author's {id, name, email}.
	note, err := c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "  Called, wants a demo.  "}, api.ContactsNotesCreateParams{ID: ada})
	require.NoError(t, err)
	require.Equal(t, "Called, wants a demo.", note.Content)
	require.Equal(t, ada, note.ContactID)
	require.Equal(t, boot.OrganizationID, note.OrganizationID)
	require.Equal(t, boot.UserID, note.UserID)
	require.True(t, note.User.Set)
	user := map[string][]byte{}
	for k, v := range note.User.Value {
		user[k] = v
	}
	require.Equal(t, boot.UserID.String(), userField(t, user, "id"))
	require.Equal(t, "Ada Lovelace", userField(t, user, "name"))
	require.Equal(t, "owner@acme.example", userField(t, user, "email"))
	require.WithinDuration(t, time.Now(), note.CreatedAt, time.Minute)

	// Update replaces the content; the author stays.
	updated, err := c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString(" Demo booked ")},
		api.ContactsNotesUpdateParams{ID: ada, NoteId: note.ID})
	require.NoError(t, err)
	require.Equal(t, "Demo booked", updated.Content)
	require.Equal(t, note.ID, updated.ID)
	require.Equal(t, boot.UserID, updated.UserID)
	require.False(t, updated.UpdatedAt.Before(note.UpdatedAt))

	list, err := c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.Equal(t, "Demo booked", list.Data[0].Content)
	require.True(t, list.Data[0].User.Set)
	require.False(t, list.Pagination.HasMore)
	require.True(t, list.Pagination.NextCursor.Null)
	other, err := c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: bob})
	require.NoError(t, err)
	require.Empty(t, other.Data, "notes belong to their contact")

	// Writing a note records note_added and note_updated activities by the writer, naming the note.
	meta := fmt.Sprintf(`{"note_id": "%s"}`, note.ID)
	require.Equal(t, []string{"note_added " + boot.UserID.String() + " " + meta, "note_updated " + boot.UserID.String() + " " + meta},
		feedActivityRows(t, env, ada))

	// Content: empty after trimming, missing on update, or too long.
	_, err = c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "   "}, api.ContactsNotesCreateParams{ID: ada})
	requireAPIError(t, err, 400, "invalid_content")
	_, err = c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString(" \n ")}, api.ContactsNotesUpdateParams{ID: ada, NoteId: note.ID})
	requireAPIError(t, err, 400, "invalid_content")
	_, err = c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{}, api.ContactsNotesUpdateParams{ID: ada, NoteId: note.ID})
	requireAPIError(t, err, 400, "invalid_content")
	long := strings.Repeat("é", 10000)
	_, err = c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: long}, api.ContactsNotesCreateParams{ID: bob})
	require.NoError(t, err, "10000 characters is the limit, not 10000 bytes")
	status, _ := feedRawError(t, env, "POST", "/v1/contacts/"+ada.String()+"/notes", boot.APIKey, `{"content":"`+long+`x"}`)
	require.Equal(t, http.StatusBadRequest, status)
	status, _ = feedRawError(t, env, "PATCH", "/v1/contacts/"+ada.String()+"/notes/"+note.ID.String(), boot.APIKey, `{"content":"`+long+`x"}`)
	require.Equal(t, http.StatusBadRequest, status)

	// A note of another contact, or none, is note_not_found; an unknown contact is contact_not_found.
	_, err = c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString("x")}, api.ContactsNotesUpdateParams{ID: bob, NoteId: note.ID})
	requireAPIError(t, err, 404, "note_not_found")
	_, err = c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString("x")}, api.ContactsNotesUpdateParams{ID: ada, NoteId: uuid.New()})
	requireAPIError(t, err, 404, "note_not_found")
	requireAPIError(t, c.ContactsNotesDelete(ctx, api.ContactsNotesDeleteParams{ID: bob, NoteId: note.ID}), 404, "note_not_found")
	missing := uuid.New()
	_, err = c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "x"}, api.ContactsNotesCreateParams{ID: missing})
	requireAPIError(t, err, 404, "contact_not_found")
	_, err = c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: missing})
	requireAPIError(t, err, 404, "contact_not_found")
	_, err = c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString("x")}, api.ContactsNotesUpdateParams{ID: missing, NoteId: note.ID})
	requireAPIError(t, err, 404, "contact_not_found")
	requireAPIError(t, c.ContactsNotesDelete(ctx, api.ContactsNotesDeleteParams{ID: missing, NoteId: note.ID}), 404, "contact_not_found")

	// Another organization sees none of it.
	globex := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = globex.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada})
	requireAPIError(t, err, 404, "contact_not_found")
	_, err = globex.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "x"}, api.ContactsNotesCreateParams{ID: ada})
	requireAPIError(t, err, 404, "contact_not_found")
	_, err = globex.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString("x")}, api.ContactsNotesUpdateParams{ID: ada, NoteId: note.ID})
	requireAPIError(t, err, 404, "contact_not_found")
	requireAPIError(t, globex.ContactsNotesDelete(ctx, api.ContactsNotesDeleteParams{ID: ada, NoteId: note.ID}), 404, "contact_not_found")

	// Reading needs READ_CONTACTS, writing WRITE_CONTACTS; a key nobody owns cannot author a note.
	reader := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts))
	_, err = reader.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada})
	require.NoError(t, err)
	_, err = reader.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "x"}, api.ContactsNotesCreateParams{ID: ada})
	requireAPIError(t, err, 403, "missing_scope")
	ownerless := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts|auth.WriteContacts))
	_, err = ownerless.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "x"}, api.ContactsNotesCreateParams{ID: ada})
	requireAPIError(t, err, 403, "author_required")

	// Delete: 204, then note_not_found; audited throughout.
	require.NoError(t, c.ContactsNotesDelete(ctx, api.ContactsNotesDeleteParams{ID: ada, NoteId: note.ID}))
	requireAPIError(t, c.ContactsNotesDelete(ctx, api.ContactsNotesDeleteParams{ID: ada, NoteId: note.ID}), 404, "note_not_found")
	list, err = c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada})
	require.NoError(t, err)
	require.Empty(t, list.Data)
	actions := orgAuditActions(t, env, boot.OrganizationID)
	require.Equal(t, []string{"contact_note.created", "contact_note.updated", "contact_note.created", "contact_note.deleted"}, actions[len(actions)-4:])
}

func TestContactNotesPaging(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ada, _ := feedContact(t, env, boot.OrganizationID, "ada@example.com")

	var want []string
	for i := range 5 {
		n, err := c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: fmt.Sprintf("note %d", i)}, api.ContactsNotesCreateParams{ID: ada})
		require.NoError(t, err)
		want = append([]string{n.Content}, want...) // newest first
	}
	var got []string
	params := api.ContactsNotesListParams{ID: ada, Limit: api.NewOptInt(2)}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		page, err := c.ContactsNotesList(ctx, params)
		require.NoError(t, err)
		for _, n := range page.Data {
			got = append(got, n.Content)
		}
		if !page.Pagination.HasMore {
			require.True(t, page.Pagination.NextCursor.Null)
			break
		}
		require.Len(t, page.Data, 2)
		params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Equal(t, want, got)

	all, err := c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada, Limit: api.NewOptInt(100)})
	require.NoError(t, err)
	require.Len(t, all.Data, 5)

	// Limits 1 to 100; a cursor of another list, or none of ours, is refused.
	base := "/v1/contacts/" + ada.String() + "/notes?"
	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "cursor=nope"} {
		status, _ := feedRawError(t, env, "GET", base+bad, boot.APIKey, "")
		require.Equal(t, http.StatusBadRequest, status, bad)
	}
	acts, err := c.ContactsActivitiesList(ctx, api.ContactsActivitiesListParams{ID: ada, Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.True(t, acts.Pagination.HasMore)
	_, err = c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada, Cursor: api.NewOptString(acts.Pagination.NextCursor.Value)})
	requireAPIError(t, err, 400, "invalid_cursor")
}

func TestContactActivities(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ada, _ := feedContact(t, env, boot.OrganizationID, "ada@example.com")
	bob, _ := feedContact(t, env, boot.OrganizationID, "bob@example.com")
	campaign := uuid.New()
	category := uuid.New()

	// activity.Record writes one row per contact in one statement, in the caller's transaction.
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, boot.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{ada, bob}, Type: activity.ContactCreated,
			Metadata: map[string]any{"source": "api"}}); err != nil {
			return err
		}
		if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{ada, bob}, Type: activity.CategoryAdded,
			UserID: uuid.NullUUID{UUID: boot.UserID, Valid: true}, Metadata: map[string]any{"category_id": category, "category_title": "VIP"}}); err != nil {
			return err
		}
		if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{ada}, Type: activity.CampaignAdded,
			UserID: uuid.NullUUID{UUID: boot.UserID, Valid: true}, Metadata: map[string]any{"campaign_id": campaign, "campaign_name": "Launch"}}); err != nil {
			return err
		}
		return activity.Record(ctx, tx, activity.Entry{Type: activity.ContactUpdated}) // no contacts: nothing
	}))
	// Unknown types and calls outside an organization's transaction write nothing.
	err := db.WithOrgTx(ctx, env.DB.Pool, boot.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{ada}, Type: "note_deleted"})
	})
	require.ErrorContains(t, err, "unknown type")
	require.NoError(t, db.WithTx(ctx, env.DB.Pool, func(ctx context.Context, tx pgx.Tx) error {
		require.ErrorContains(t, activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{ada}, Type: activity.ContactUpdated}),
			"outside an organization-scoped transaction")
		return nil
	}))
	require.Len(t, feedActivityRows(t, env, ada), 3)
	require.Len(t, feedActivityRows(t, env, bob), 2)

	// The feed: newest first, category changes left out (the timeline shows them), metadata as recorded.
	list, err := c.ContactsActivitiesList(ctx, api.ContactsActivitiesListParams{ID: ada})
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	added, created := list.Data[0], list.Data[1]
	require.Equal(t, api.ContactActivityActivityTypeCampaignAdded, added.ActivityType)
	require.Equal(t, api.ContactActivityActivityTypeContactCreated, created.ActivityType)
	require.Equal(t, ada, added.ContactID)
	require.Equal(t, boot.OrganizationID, added.OrganizationID)
	require.Equal(t, boot.UserID, added.UserID.Value)
	require.Equal(t, `"Launch"`, string(added.Metadata["campaign_name"]))
	require.Equal(t, `"`+campaign.String()+`"`, string(added.Metadata["campaign_id"]))
	require.True(t, added.User.Set)
	require.Equal(t, `"owner@acme.example"`, string(added.User.Value["email"]))
	require.True(t, created.UserID.Null, "the system acted")
	require.False(t, created.User.Set)
	require.Equal(t, `"api"`, string(created.Metadata["source"]))

	// Paging across pages without repeats, limits 1 to 100, 404 for contacts outside the organization.
	for range 4 {
		_, err := c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "n"}, api.ContactsNotesCreateParams{ID: ada})
		require.NoError(t, err)
	}
	all, err := c.ContactsActivitiesList(ctx, api.ContactsActivitiesListParams{ID: ada})
	require.NoError(t, err)
	require.Len(t, all.Data, 6)
	var paged []uuid.UUID
	params := api.ContactsActivitiesListParams{ID: ada, Limit: api.NewOptInt(4)}
	for {
		page, err := c.ContactsActivitiesList(ctx, params)
		require.NoError(t, err)
		for _, a := range page.Data {
			paged = append(paged, a.ID)
		}
		if !page.Pagination.HasMore {
			break
		}
		params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Len(t, paged, 6)
	for i, a := range all.Data {
		require.Equal(t, a.ID, paged[i])
	}
	base := "/v1/contacts/" + ada.String() + "/activities?"
	for _, bad := range []string{"limit=0", "limit=101", "cursor=nope"} {
		status, _ := feedRawError(t, env, "GET", base+bad, boot.APIKey, "")
		require.Equal(t, http.StatusBadRequest, status, bad)
	}
	_, err = c.ContactsActivitiesList(ctx, api.ContactsActivitiesListParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "contact_not_found")
	globex := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = globex.ContactsActivitiesList(ctx, api.ContactsActivitiesListParams{ID: ada})
	requireAPIError(t, err, 404, "contact_not_found")
}

func TestContactEmails(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	ada, created := feedContact(t, env, org, "ada@example.com")
	bob, _ := feedContact(t, env, org, "bob@example.com")
	campaign, step, mailbox := uuid.New(), uuid.New(), uuid.New()
	feedExec(t, env, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'Launch')`, org, campaign)
	base := created.Truncate(time.Second).Add(time.Hour)

	// Seven delivered tasks, three of them within one second (the API shows seconds), plus tasks that were
	// never delivered or belong to another contact.
	sentAt := []time.Time{base, base.Add(time.Minute), base.Add(2 * time.Minute), base.Add(2*time.Minute + 100*time.Millisecond),
		base.Add(2*time.Minute + 700*time.Millisecond), base.Add(3 * time.Minute), base.Add(4 * time.Minute)}
	for i, at := range sentAt {
		feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, subject, message_id, sent_at)
			VALUES ($1, $2, 'direct', 'sent', $3, 'ada@example.com', $4, $5, $6)`,
			org, uuid.New(), ada, fmt.Sprintf("mail %d", i), fmt.Sprintf("<%d@acme>", i), at)
	}
	rich := uuid.New()
	feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, from_email, from_name, contact_id,
		to_email, campaign_id, step_id, step_name, subject, message_id, sent_at, opened_at, clicked_at, replied_at, bounced_at)
		VALUES ($1, $2, 'campaign', 'sent', $3, 'sales@acme.example', 'Acme Sales', $4, 'ada@example.com', $5, $6, 'Intro',
		'Hello Ada', '<rich@acme>', $7, $8, $9, $10, $11)`,
		org, rich, mailbox, ada, campaign, step, base.Add(time.Hour), base.Add(2*time.Hour), base.Add(3*time.Hour), base.Add(4*time.Hour), base.Add(5*time.Hour))
	for _, status := range []string{"queued", "sending", "failed", "ambiguous", "canceled"} {
		feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, subject, sent_at)
			VALUES ($1, $2, 'direct', $3, $4, 'ada@example.com', $3, $5)`, org, uuid.New(), status, ada, base.Add(10*time.Hour))
	}
	feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, subject, sent_at)
		VALUES ($1, $2, 'direct', 'sent', $3, 'bob@example.com', 'bob', $4)`, org, uuid.New(), bob, base)

	all, err := c.ContactsEmailsList(ctx, api.ContactsEmailsListParams{ID: ada})
	require.NoError(t, err)
	require.Len(t, all.Data, 8, "only delivered mail of this contact")
	require.False(t, all.Pagination.HasMore)
	first := all.Data[0]
	require.Equal(t, rich, first.TaskID)
	require.Equal(t, "sent", first.Status)
	require.Equal(t, "<rich@acme>", first.MessageID)
	require.Equal(t, "Hello Ada", first.Subject)
	require.True(t, base.Add(time.Hour).Equal(first.SentAt))
	require.Equal(t, mailbox, first.EmailAccountID.Value)
	require.Equal(t, "sales@acme.example", first.EmailAccountEmail.Value)
	require.Equal(t, "Acme Sales", first.EmailAccountName.Value)
	require.Equal(t, campaign, first.CampaignID.Value)
	require.Equal(t, "Launch", first.CampaignName.Value)
	require.Equal(t, step, first.StepID.Value)
	require.Equal(t, "Intro", first.StepName.Value)
	require.True(t, base.Add(2*time.Hour).Equal(first.OpenedAt.Value))
	require.True(t, base.Add(3*time.Hour).Equal(first.ClickedAt.Value))
	require.True(t, base.Add(4*time.Hour).Equal(first.RepliedAt.Value))
	require.True(t, base.Add(5*time.Hour).Equal(first.BouncedAt.Value))
	plain := all.Data[1]
	require.Equal(t, "mail 6", plain.Subject)
	require.True(t, plain.EmailAccountID.Null)
	require.True(t, plain.EmailAccountEmail.Null)
	require.True(t, plain.CampaignID.Null)
	require.True(t, plain.CampaignName.Null)
	require.True(t, plain.StepName.Null)
	require.True(t, plain.OpenedAt.Null)
	for i := 1; i < len(all.Data); i++ {
		require.False(t, all.Data[i].SentAt.After(all.Data[i-1].SentAt), "newest first")
	}

	// Pages of two, continued with the last row's sent_at and task_id, repeat and skip nothing, even
	// across rows sent within one second.
	var paged []uuid.UUID
	params := api.ContactsEmailsListParams{ID: ada, Limit: api.NewOptInt(2)}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4)
		page, err := c.ContactsEmailsList(ctx, params)
		require.NoError(t, err)
		require.True(t, page.Pagination.NextCursor.Null)
		for _, e := range page.Data {
			paged = append(paged, e.TaskID)
		}
		if !page.Pagination.HasMore {
			break
		}
		last := page.Data[len(page.Data)-1]
		params.BeforeAt, params.BeforeID = api.NewOptDateTime(last.SentAt), api.NewOptUUID(last.TaskID)
	}
	require.Len(t, paged, 8)
	for i, e := range all.Data {
		require.Equal(t, e.TaskID, paged[i])
	}

	// before_at and before_id go together; limits 1 to 200; 404 outside the organization.
	_, err = c.ContactsEmailsList(ctx, api.ContactsEmailsListParams{ID: ada, BeforeAt: api.NewOptDateTime(base)})
	requireAPIError(t, err, 400, "invalid_cursor")
	_, err = c.ContactsEmailsList(ctx, api.ContactsEmailsListParams{ID: ada, BeforeID: api.NewOptUUID(rich)})
	requireAPIError(t, err, 400, "invalid_cursor")
	path := "/v1/contacts/" + ada.String() + "/emails?"
	for _, bad := range []string{"limit=0", "limit=201", "before_id=nope&before_at=2026-01-01T00:00:00Z", "before_at=nope&before_id=" + rich.String()} {
		status, _ := feedRawError(t, env, "GET", path+bad, boot.APIKey, "")
		require.Equal(t, http.StatusBadRequest, status, bad)
	}
	big, err := c.ContactsEmailsList(ctx, api.ContactsEmailsListParams{ID: ada, Limit: api.NewOptInt(200)})
	require.NoError(t, err)
	require.Len(t, big.Data, 8)
	_, err = c.ContactsEmailsList(ctx, api.ContactsEmailsListParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "contact_not_found")
	globex := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = globex.ContactsEmailsList(ctx, api.ContactsEmailsListParams{ID: ada})
	requireAPIError(t, err, 404, "contact_not_found")
}

func TestContactDeals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	ada, created := feedContact(t, env, org, "ada@example.com")
	bob, _ := feedContact(t, env, org, "bob@example.com")

	empty, err := c.ContactsDealsList(ctx, api.ContactsDealsListParams{ID: ada})
	require.NoError(t, err)
	require.Empty(t, empty)

	pipeline, stage, campaign, mailbox := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	won, open := uuid.New(), uuid.New()
	base := created.Truncate(time.Second)
	feedExec(t, env, `INSERT INTO deals (organization_id, id, pipeline_id, stage_id, contact_id, name, value, currency, status,
		expected_close_date, won_at, assigned_to, campaign_id, source_mailbox_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'Annual plan', 1234.50, 'EUR', 'won', $6, $7, $8, $9, $10, $11, $11)`,
		org, won, pipeline, stage, ada, base.Add(48*time.Hour), base.Add(24*time.Hour), boot.UserID, campaign, mailbox, base.Add(time.Hour))
	feedExec(t, env, `INSERT INTO deals (organization_id, id, pipeline_id, stage_id, contact_id, name, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'Pilot', $6, $6)`, org, open, pipeline, stage, ada, base.Add(2*time.Hour))
	feedExec(t, env, `INSERT INTO deals (organization_id, id, pipeline_id, stage_id, contact_id, name)
		VALUES ($1, $2, $3, $4, $5, 'Bob deal')`, org, uuid.New(), pipeline, stage, bob)
	feedExec(t, env, `INSERT INTO deals (organization_id, id, pipeline_id, stage_id, name)
		VALUES ($1, $2, $3, $4, 'No contact')`, org, uuid.New(), pipeline, stage)

	deals, err := c.ContactsDealsList(ctx, api.ContactsDealsListParams{ID: ada})
	require.NoError(t, err)
	require.Len(t, deals, 2)
	require.Equal(t, open, deals[0].ID, "newest first")
	require.Equal(t, "Pilot", deals[0].Name)
	require.Equal(t, api.DealStatusOpen, deals[0].Status)
	require.Equal(t, "USD", deals[0].Currency)
	require.True(t, deals[0].Value.Null)
	require.True(t, deals[0].WonAt.Null)
	require.True(t, deals[0].AssignedTo.Null)
	d := deals[1]
	require.Equal(t, won, d.ID)
	require.Equal(t, org, d.OrganizationID)
	require.Equal(t, pipeline, d.PipelineID)
	require.Equal(t, stage, d.StageID)
	require.Equal(t, ada, d.ContactID.Value)
	require.Equal(t, 1234.5, d.Value.Value)
	require.Equal(t, "EUR", d.Currency)
	require.Equal(t, api.DealStatusWon, d.Status)
	require.True(t, base.Add(48*time.Hour).Equal(d.ExpectedCloseDate.Value))
	require.True(t, base.Add(24*time.Hour).Equal(d.WonAt.Value))
	require.True(t, d.LostAt.Null)
	require.True(t, d.LostReason.Null)
	require.Equal(t, boot.UserID, d.AssignedTo.Value)
	require.Equal(t, campaign, d.CampaignID.Value)
	require.Equal(t, mailbox, d.SourceMailboxID.Value)
	require.True(t, base.Add(time.Hour).Equal(d.CreatedAt))
	require.False(t, d.Contact.Set, "the contact's own list carries no joins")

	_, err = c.ContactsDealsList(ctx, api.ContactsDealsListParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "contact_not_found")
	globex := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = globex.ContactsDealsList(ctx, api.ContactsDealsListParams{ID: ada})
	requireAPIError(t, err, 404, "contact_not_found")
	reader := env.Client(t, scopedKey(t, env, org, auth.ReadContacts))
	deals, err = reader.ContactsDealsList(ctx, api.ContactsDealsListParams{ID: ada})
	require.NoError(t, err)
	require.Len(t, deals, 2)
	none := env.Client(t, scopedKey(t, env, org, auth.ReadCRM))
	_, err = none.ContactsDealsList(ctx, api.ContactsDealsListParams{ID: ada})
	requireAPIError(t, err, 403, "missing_scope")
}
