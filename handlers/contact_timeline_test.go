package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// timelineLine is a compact spelling of a timeline entry for comparisons.
func timelineLine(e api.ContactTimelineEvent) string {
	s := string(e.Type)
	for _, f := range []struct {
		name string
		v    string
		ok   bool
	}{
		{"task", e.TaskID.Value.String(), e.TaskID.Set},
		{"subject", e.Subject.Value, e.Subject.Set},
		{"from", e.EmailAccountEmail.Value + "/" + e.EmailAccountName.Value + "/" + e.EmailAccountID.Value.String(), e.EmailAccountEmail.Set},
		{"campaign", e.CampaignID.Value.String() + "/" + e.CampaignName.Value, e.CampaignID.Set},
		{"step", e.StepID.Value.String() + "/" + e.StepName.Value, e.StepID.Set},
		{"category", e.CategoryID.Value.String() + "/" + e.CategoryTitle.Value, e.CategoryID.Set},
		{"content", e.Content.Value, e.Content.Set},
		{"source", e.Source.Value, e.Source.Set},
		{"user", e.UserID.Value.String(), e.UserID.Set},
		{"machine", fmt.Sprint(e.Machine.Value), e.Machine.Set && !e.Machine.Null},
		{"rule", e.MachineReason.Value, e.MachineReason.Set && !e.MachineReason.Null},
		{"link", e.Link.Value.URL + "/" + e.Link.Value.UtmContent.Value + "/" + e.Link.Value.UserAgent.Value, e.Link.Set && !e.Link.Null},
		{"provider", e.Provider.Value, e.Provider.Set},
		{"reason", e.Reason.Value, e.Reason.Set},
	} {
		if f.ok {
			s += " " + f.name + "=" + f.v
		}
	}
	return s
}

func TestContactTimeline(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	ada, created := feedContact(t, env, org, "ada@example.com")
	bob, _ := feedContact(t, env, org, "bob@example.com")
	base := created.Truncate(time.Second).Add(time.Hour)
	campaign, step, mailbox, category := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	feedExec(t, env, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'Launch')`, org, campaign)

	// A delivered task with a reply; a failed one and an ambiguous one (never shown as sent); another
	// contact's task.
	taskA, taskFailed, taskAmbiguous, taskBob := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, from_email, from_name, contact_id,
		to_email, campaign_id, step_id, step_name, subject, message_id, sent_at, opened_at, clicked_at, replied_at)
		VALUES ($1, $2, 'campaign', 'sent', $3, 'sales@acme.example', 'Acme Sales', $4, 'ada@example.com', $5, $6, 'Intro',
		'Hello Ada', '<a@acme>', $7, $8, $9, $10)`,
		org, taskA, mailbox, ada, campaign, step, base.Add(time.Hour), base.Add(2*time.Hour), base.Add(3*time.Hour), base.Add(4*time.Hour))
	// Its opens and clicks, each with its verdict and rule: a gateway's open seconds after the send, the
	// reader's open, a click (one not yet judged shows no verdict).
	trackingEvent := func(kind string, at time.Time, verdict, rule, url any) {
		var link any
		if url != nil {
			link = 0
		}
		feedExec(t, env, `INSERT INTO tracking_events (organization_id, id, task_id, kind, at, user_agent, verdict, rule, link_index, url)
			VALUES ($1, $2, $3, $4, $5, 'Mozilla/5.0', $6, $7, $8, $9)`, org, uuid.Must(uuid.NewV7()), taskA, kind, at, verdict, rule, link, url)
	}
	trackingEvent("open", base.Add(time.Hour+5*time.Second), "machine", "open_machine_window", nil)
	trackingEvent("open", base.Add(2*time.Hour), "human", "human", nil)
	trackingEvent("click", base.Add(3*time.Hour), "human", "human", "https://acme.example/demo?utm_content=link-1")
	trackingEvent("click", base.Add(3*time.Hour+time.Minute), nil, nil, "https://acme.example/demo?utm_content=link-1")
	// A soft bounce of a later attempt and the address suppressed after a complaint.
	feedExec(t, env, `INSERT INTO deliverability_events (organization_id, id, event_type, source, at, recipient_email, contact_id,
		task_id, bounce_type, status_code, reason, diagnostic, matched_by)
		VALUES ($1, $2, 'bounce', 'dsn', $3, 'ada@example.com', $4, $5, 'soft', '4.2.2', 'mailbox_full', '452 4.2.2 over quota', 'message_id')`,
		org, uuid.Must(uuid.NewV7()), base.Add(270*time.Minute), ada, taskA)
	feedExec(t, env, `INSERT INTO deliverability_events (organization_id, id, event_type, source, at, recipient_email, contact_id,
		campaign_id, provider, feedback_type)
		VALUES ($1, $2, 'complaint', 'arf', $3, 'ada@example.com', $4, $5, 'yahoo', 'abuse')`,
		org, uuid.Must(uuid.NewV7()), base.Add(280*time.Minute), ada, campaign)
	feedExec(t, env, `INSERT INTO suppressions (organization_id, id, kind, value, source, reason, campaign_id, created_at)
		VALUES ($1, $2, 'email', 'ada@example.com', 'complaint', 'Marked as spam', $3, $4)`,
		org, uuid.Must(uuid.NewV7()), campaign, base.Add(281*time.Minute))
	feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, subject)
		VALUES ($1, $2, 'direct', 'failed', $3, 'ada@example.com', 'Failed')`, org, taskFailed, ada)
	feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, subject, sent_at)
		VALUES ($1, $2, 'direct', 'ambiguous', $3, 'ada@example.com', 'Unknown', $4)`, org, taskAmbiguous, ada, base.Add(90*time.Minute))
	feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, subject, sent_at)
		VALUES ($1, $2, 'direct', 'sent', $3, 'bob@example.com', 'Bob', $4)`, org, taskBob, bob, base.Add(time.Hour))

	// Recorded activities: a campaign and a category change, an email_sent naming taskA (shown once, from
	// the task), an open recorded without a task, and a note changed to a type the timeline does not show.
	activityAt := func(typ string, at time.Time, meta string, user any) {
		feedExec(t, env, `INSERT INTO contact_activities (organization_id, id, contact_id, user_id, activity_type, metadata, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, org, uuid.Must(uuid.NewV7()), ada, user, typ, meta, at)
	}
	activityAt("campaign_added", base.Add(30*time.Minute), fmt.Sprintf(`{"campaign_id":"%s","campaign_name":"Launch"}`, campaign), boot.UserID)
	activityAt("category_added", base.Add(5*time.Hour), fmt.Sprintf(`{"category_id":"%s","category_title":"VIP"}`, category), boot.UserID)
	activityAt("email_sent", base.Add(time.Hour), fmt.Sprintf(`{"task_id":"%s","subject":"Hello Ada"}`, taskA), nil)
	activityAt("email_opened", base.Add(150*time.Minute), `{"subject":"Forwarded copy"}`, nil)
	activityAt("deal_created", base.Add(6*time.Hour), `{}`, nil)

	// Notes: one kept (shows its current content), one deleted (left out).
	kept, err := c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "first draft"}, api.ContactsNotesCreateParams{ID: ada})
	require.NoError(t, err)
	_, err = c.ContactsNotesUpdate(ctx, &api.ContactNoteUpdate{Content: api.NewOptString("Wants a demo")}, api.ContactsNotesUpdateParams{ID: ada, NoteId: kept.ID})
	require.NoError(t, err)
	gone, err := c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "oops"}, api.ContactsNotesCreateParams{ID: ada})
	require.NoError(t, err)
	require.NoError(t, c.ContactsNotesDelete(ctx, api.ContactsNotesDeleteParams{ID: ada, NoteId: gone.ID}))

	from := fmt.Sprintf("from=sales@acme.example/Acme Sales/%s", mailbox)
	task := fmt.Sprintf("task=%s subject=Hello Ada %s campaign=%s/Launch step=%s/Intro", taskA, from, campaign, step)
	want := []string{
		fmt.Sprintf("category_added category=%s/VIP user=%s", category, boot.UserID),
		fmt.Sprintf("suppressed campaign=%s/Launch source=complaint reason=Marked as spam", campaign),
		fmt.Sprintf("deliverability campaign=%s/Launch source=arf provider=yahoo reason=complaint", campaign),
		"email_bounced " + task + " source=dsn reason=soft bounce 4.2.2 (mailbox_full): 452 4.2.2 over quota",
		"email_replied " + task,
		"email_clicked " + task + " link=https://acme.example/demo?utm_content=link-1/link-1/Mozilla/5.0",
		"email_clicked " + task + " machine=false link=https://acme.example/demo?utm_content=link-1/link-1/Mozilla/5.0",
		"email_opened subject=Forwarded copy",
		"email_opened " + task + " machine=false",
		"email_opened " + task + " machine=true rule=open_machine_window",
		"email_sent " + task,
		fmt.Sprintf("campaign_added campaign=%s/Launch user=%s", campaign, boot.UserID),
		fmt.Sprintf("note content=Wants a demo user=%s", boot.UserID),
		"contact_created source=import",
	}
	wantAt := []time.Time{base.Add(5 * time.Hour), base.Add(281 * time.Minute), base.Add(280 * time.Minute), base.Add(270 * time.Minute),
		base.Add(4 * time.Hour), base.Add(3*time.Hour + time.Minute), base.Add(3 * time.Hour), base.Add(150 * time.Minute),
		base.Add(2 * time.Hour), base.Add(time.Hour + 5*time.Second), base.Add(time.Hour), base.Add(30 * time.Minute)}

	full, err := c.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: ada})
	require.NoError(t, err)
	var got []string
	for i, e := range full.Data {
		got = append(got, timelineLine(e))
		if i < len(wantAt) {
			require.True(t, wantAt[i].Equal(e.At), "entry %d at %v, want %v", i, e.At, wantAt[i])
		}
	}
	require.Equal(t, want, got)
	require.False(t, full.HasMore)
	require.False(t, full.Pagination.HasMore)
	require.True(t, full.Data[len(full.Data)-1].At.Equal(created.Truncate(time.Second)))

	// Pages of two give the same entries in the same order, with has_more mirroring pagination.
	got = nil
	params := api.ContactsTimelineListParams{ID: ada, Limit: api.NewOptInt(2)}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 9)
		page, err := c.ContactsTimelineList(ctx, params)
		require.NoError(t, err)
		require.Equal(t, page.Pagination.HasMore, page.HasMore)
		for _, e := range page.Data {
			got = append(got, timelineLine(e))
		}
		if !page.HasMore {
			break
		}
		params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Equal(t, want, got)

	// before (deprecated) keeps only older entries.
	//lint:ignore SA1019 the deprecated parameter is in the contract and must keep working
	older, err := c.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: ada, Before: api.NewOptDateTime(base.Add(135 * time.Minute))})
	require.NoError(t, err)
	require.Len(t, older.Data, 6)
	require.Equal(t, "email_opened "+task+" machine=false", timelineLine(older.Data[0]))

	// A recorded contact_created replaces the contact's own; its source falls back to the contact's.
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return activity.Record(ctx, tx, activity.Entry{ContactIDs: []uuid.UUID{bob}, Type: activity.ContactCreated})
	}))
	bobs, err := c.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: bob})
	require.NoError(t, err)
	got = nil
	for _, e := range bobs.Data {
		got = append(got, timelineLine(e))
	}
	require.Equal(t, []string{fmt.Sprintf("email_sent task=%s subject=Bob", taskBob), "contact_created source=import"}, got)

	// Limits 1 to 200, cursors of this list only, 404 outside the organization.
	path := "/v1/contacts/" + ada.String() + "/timeline?"
	for _, bad := range []string{"limit=0", "limit=201", "cursor=nope", "before=yesterday"} {
		status, _ := feedRawError(t, env, "GET", path+bad, boot.APIKey, "")
		require.Equal(t, http.StatusBadRequest, status, bad)
	}
	big, err := c.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: ada, Limit: api.NewOptInt(200)})
	require.NoError(t, err)
	require.Len(t, big.Data, len(want))
	_, err = c.ContactsNotesCreate(ctx, &api.ContactNoteCreate{Content: "again"}, api.ContactsNotesCreateParams{ID: ada})
	require.NoError(t, err)
	notes, err := c.ContactsNotesList(ctx, api.ContactsNotesListParams{ID: ada, Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	_, err = c.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: ada, Cursor: api.NewOptString(notes.Pagination.NextCursor.Value)})
	requireAPIError(t, err, 400, "invalid_cursor")
	_, err = c.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "contact_not_found")
	globex := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = globex.ContactsTimelineList(ctx, api.ContactsTimelineListParams{ID: ada})
	requireAPIError(t, err, 404, "contact_not_found")
}

func TestContactTimelinePagingAcrossTies(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ada, created := feedContact(t, env, boot.OrganizationID, "ada@example.com")
	at := created.Add(time.Hour)

	// Six tasks sent, opened and clicked at one instant: 18 entries sharing a timestamp, plus the creation.
	for range 6 {
		task := uuid.New()
		feedExec(t, env, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, sent_at)
			VALUES ($1, $2, 'direct', 'sent', $3, 'ada@example.com', $4)`, boot.OrganizationID, task, ada, at)
		feedExec(t, env, `INSERT INTO tracking_events (organization_id, id, task_id, kind, at) VALUES ($1, $2, $3, 'open', $4)`,
			boot.OrganizationID, uuid.Must(uuid.NewV7()), task, at)
		feedExec(t, env, `INSERT INTO tracking_events (organization_id, id, task_id, kind, at, link_index, url)
			VALUES ($1, $2, $3, 'click', $4, 0, 'https://example.com')`, boot.OrganizationID, uuid.Must(uuid.NewV7()), task, at)
	}
	seen := map[string]bool{}
	var types []api.ContactTimelineEventType
	params := api.ContactsTimelineListParams{ID: ada, Limit: api.NewOptInt(4)}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 6)
		page, err := c.ContactsTimelineList(ctx, params)
		require.NoError(t, err)
		for _, e := range page.Data {
			key := string(e.Type) + e.TaskID.Value.String()
			require.False(t, seen[key], "repeated %s", key)
			seen[key] = true
			types = append(types, e.Type)
		}
		if !page.HasMore {
			break
		}
		params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Len(t, seen, 19)
	// At one instant a task's later events come first.
	require.Equal(t, api.ContactTimelineEventTypeEmailClicked, types[0])
	require.Equal(t, api.ContactTimelineEventTypeEmailSent, types[17])
	require.Equal(t, api.ContactTimelineEventTypeContactCreated, types[18])
}
