package handlers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestUniboxListFiltersThreads(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	ctx := context.Background()
	s := api.NewOptString
	day := func(d int) api.OptDate { return api.NewOptDate(f.base.AddDate(0, 0, d)) }
	cases := []struct {
		name string
		p    api.UniboxListParams
		want []uuid.UUID
	}{
		{"no filter: every folder but spam and trash, snoozed left out, newest first", api.UniboxListParams{}, []uuid.UUID{f.t7, f.t4, f.t2, f.t1}},
		{"folder inbox", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderInbox)}, []uuid.UUID{f.t7, f.t2, f.t1}},
		{"folder sent", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderSent)}, []uuid.UUID{f.t2}},
		{"folder archive", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderArchive)}, []uuid.UUID{f.t4}},
		{"folder spam", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderSpam)}, []uuid.UUID{f.t3}},
		{"folder trash", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderTrash)}, []uuid.UUID{f.t5}},
		{"folder drafts is empty", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderDrafts)}, nil},
		{"from display name, any case", api.UniboxListParams{From: s("LOVELACE")}, []uuid.UUID{f.t1}},
		{"from address", api.UniboxListParams{From: s("bob@")}, []uuid.UUID{f.t2}},
		{"from any sender of the thread", api.UniboxListParams{From: s("alpha@acme")}, []uuid.UUID{f.t2}},
		{"from only within the folder", api.UniboxListParams{From: s("alpha@acme"), Folder: api.NewOptUniboxListFolder(api.UniboxListFolderInbox)}, nil},
		{"from percent is literal", api.UniboxListParams{From: s("%")}, nil},
		{"subject substring, any case", api.UniboxListParams{Subject: s("weekly_REPORT")}, []uuid.UUID{f.t2}},
		{"subject underscore is literal", api.UniboxListParams{Subject: s("report_1")}, nil},
		{"subject percent is literal", api.UniboxListParams{Subject: s("100%")}, []uuid.UUID{f.t2}},
		{"unseen", api.UniboxListParams{Unseen: api.NewOptBool(true)}, []uuid.UUID{f.t7, f.t1}},
		{"unseen false filters nothing", api.UniboxListParams{Unseen: api.NewOptBool(false)}, []uuid.UUID{f.t7, f.t4, f.t2, f.t1}},
		{"awaiting reply", api.UniboxListParams{AwaitingReply: api.NewOptBool(true)}, []uuid.UUID{f.t2}},
		{"snoozed true lists only running snoozes", api.UniboxListParams{Snoozed: s("true")}, []uuid.UUID{f.t6}},
		{"snoozed false is the default", api.UniboxListParams{Snoozed: s("false")}, []uuid.UUID{f.t7, f.t4, f.t2, f.t1}},
		{"since", api.UniboxListParams{Since: day(2)}, []uuid.UUID{f.t7, f.t4}},
		{"until is inclusive", api.UniboxListParams{Until: day(1)}, []uuid.UUID{f.t2, f.t1}},
		{"since and until one day", api.UniboxListParams{Since: day(1), Until: day(1)}, []uuid.UUID{f.t2}},
		{"email_id", api.UniboxListParams{EmailID: api.NewOptUUID(f.beta)}, []uuid.UUID{f.t4}},
		{"email_ids drops invalid ids", api.UniboxListParams{EmailIds: s(f.beta.String() + ",not-an-id")}, []uuid.UUID{f.t4}},
		{"email_ids all invalid lists nothing", api.UniboxListParams{EmailIds: s("nope,也不是")}, nil},
		{"email_id and email_ids together", api.UniboxListParams{EmailID: api.NewOptUUID(f.alpha), EmailIds: s(f.beta.String())}, []uuid.UUID{f.t7, f.t4, f.t2, f.t1}},
		{"category_ids any match", api.UniboxListParams{CategoryIds: s(f.hot.String() + ", " + f.cold.String())}, []uuid.UUID{f.t4, f.t1}},
		{"category_ids one", api.UniboxListParams{CategoryIds: s(f.hot.String())}, []uuid.UUID{f.t1}},
		{"category_ids all invalid lists nothing", api.UniboxListParams{CategoryIds: s("x")}, nil},
		{"uncategorized", api.UniboxListParams{Uncategorized: api.NewOptBool(true)}, []uuid.UUID{f.t7, f.t2}},
		{"category or uncategorized", api.UniboxListParams{CategoryIds: s(f.hot.String()), Uncategorized: api.NewOptBool(true)}, []uuid.UUID{f.t7, f.t2, f.t1}},
		{"filters combine", api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderInbox), Unseen: api.NewOptBool(true), Since: day(1)}, []uuid.UUID{f.t7}},
	}
	for _, tc := range cases {
		page, err := f.c.UniboxList(ctx, tc.p)
		require.NoError(t, err, tc.name)
		require.Equal(t, ids(tc.want...), threadIDs(page), tc.name)
		require.False(t, page.Pagination.HasMore, tc.name)
	}

	// Each row is shown by the thread's newest message in the listed folder.
	page, err := f.c.UniboxList(ctx, api.UniboxListParams{Until: day(1)})
	require.NoError(t, err)
	t2, t1 := page.Data[0], page.Data[1]
	require.Equal(t, f.m3, t2.ID)
	require.Equal(t, 2, t2.MessageCount)
	require.True(t, t2.Seen)
	require.False(t, t2.HasUnread)
	require.Equal(t, []string{"alpha@acme.example"}, t2.FromAddr)
	require.Equal(t, "Re: Weekly_report 100%", t2.Subject)
	require.Empty(t, t2.Labels)
	require.True(t, t2.Classification.Set && t2.Classification.Null, "no classified message: null")
	require.Equal(t, f.m1, t1.ID)
	require.Equal(t, f.alpha, t1.EmailID)
	require.Equal(t, []string{"Ada Lovelace <ada@engines.example>"}, t1.FromAddr)
	require.Equal(t, []string{"someone@acme.example"}, t1.ToAddr)
	require.Equal(t, "Pricing question", t1.Subject)
	require.Equal(t, "snip Pricing question", t1.Snippet.Value)
	require.True(t, t1.InternalDate.Equal(f.base.Add(10*time.Hour)))
	require.False(t, t1.Seen)
	require.True(t, t1.HasUnread)
	require.Equal(t, 1, t1.MessageCount)
	require.Equal(t, []api.UniboxLabel{{ID: f.hot, Title: "Hot", Color: "#123456"}}, t1.Labels)
	v, ok := t1.Classification.Get()
	require.True(t, ok)
	require.Equal(t, api.ReplyClassificationIntentPositive, v.Intent)
	require.InDelta(t, 0.75, v.Confidence, 0.001)
	require.Equal(t, []api.ReplyEvidence{{Kind: api.ReplyEvidenceKindPhrase, Name: "positive", Value: "sounds good"}}, v.Evidence)
	require.True(t, v.ReturnDate.Null)
	// The spam row of t3 is its newest message there.
	page, err = f.c.UniboxList(ctx, api.UniboxListParams{Folder: api.NewOptUniboxListFolder(api.UniboxListFolderSpam)})
	require.NoError(t, err)
	require.Equal(t, f.beta, page.Data[0].EmailID)
	require.True(t, page.Data[0].HasUnread)
}

func TestUniboxListPagesByKeyset(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	ctx := context.Background()
	var got []string
	p := api.UniboxListParams{Limit: api.NewOptInt(1)}
	for range 10 {
		page, err := f.c.UniboxList(ctx, p)
		require.NoError(t, err)
		require.Len(t, page.Data, 1)
		got = append(got, threadIDs(page)...)
		if !page.Pagination.HasMore {
			require.True(t, page.Pagination.NextCursor.Null)
			break
		}
		p.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Equal(t, ids(f.t7, f.t4, f.t2, f.t1), got)

	for _, limit := range []int{0, -1} {
		_, err := f.c.UniboxList(ctx, api.UniboxListParams{Limit: api.NewOptInt(limit)})
		requireAPIError(t, err, 400, "invalid_limit")
	}
	status, body := rawGet(t, f.env, "/v1/unibox?limit=101", f.key)
	require.Equal(t, 400, status, body)
	_, err := f.c.UniboxList(ctx, api.UniboxListParams{Cursor: api.NewOptString("garbage")})
	requireAPIError(t, err, 400, "invalid_cursor")
	// A conversation's cursor is not the list's.
	thread, err := f.c.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: api.NewOptString(f.t2.String()), Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	_, err = f.c.UniboxList(ctx, api.UniboxListParams{Cursor: api.NewOptString(thread.Pagination.NextCursor.Value)})
	requireAPIError(t, err, 400, "invalid_cursor")
	page, err := f.c.UniboxList(ctx, api.UniboxListParams{Cursor: api.NewOptString("")})
	require.NoError(t, err, "an empty cursor is the first page")
	require.Len(t, page.Data, 4)
}

func TestUniboxListRefusesUnknownFolderAndSnoozedValues(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	status, body := rawGet(t, f.env, "/v1/unibox?folder=junk", f.key)
	require.Equal(t, 400, status, body)
	var e api.Error
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	require.Equal(t, "invalid_folder", e.Code)
	require.Equal(t, `folder must be one of inbox, sent, drafts, archive, spam, trash (or left out for every folder but spam and trash), and "junk" is not.`, e.Message)

	_, err := f.c.UniboxList(context.Background(), api.UniboxListParams{Snoozed: api.NewOptString("maybe")})
	requireAPIError(t, err, 400, "invalid_snoozed")
	// A key no user created has no snoozes to list, and nothing to hide by default.
	userless := f.env.Client(t, scopedKey(t, f.env, f.org, auth.ReadUnibox))
	_, err = userless.UniboxList(context.Background(), api.UniboxListParams{Snoozed: api.NewOptString("true")})
	requireAPIError(t, err, 400, "user_required")
	page, err := userless.UniboxList(context.Background(), api.UniboxListParams{})
	require.NoError(t, err)
	require.Equal(t, ids(f.t7, f.t6, f.t4, f.t2, f.t1), threadIDs(page))
}

func TestUniboxCountAndOverviewCountThreads(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	ctx := context.Background()
	f.exec(t, `INSERT INTO send_tasks (organization_id, id, kind, status, to_email, mailbox_id) VALUES ($1, $2, 'reply', 'queued', 'ada@engines.example', $3),
  ($1, $4, 'direct', 'queued', 'bob@builders.example', $3), ($1, $5, 'reply', 'sent', 'cy@cyborg.example', $3)`, f.org, uuid.New(), f.alpha, uuid.New(), uuid.New())

	n, err := f.c.UniboxCount(ctx, api.UniboxCountParams{})
	require.NoError(t, err)
	require.Equal(t, 2, n.Count, "the unread of t1 and t7; spam and trash left out")
	n, err = f.c.UniboxCount(ctx, api.UniboxCountParams{EmailID: api.NewOptUUID(f.beta)})
	require.NoError(t, err)
	require.Equal(t, 0, n.Count)
	f.message(t, f.alpha, f.t2, msg{folder: "inbox", fromEmail: "bob@builders.example", subject: "Again", at: f.base.Add(26 * time.Hour)})
	n, err = f.c.UniboxCount(ctx, api.UniboxCountParams{EmailID: api.NewOptUUID(f.alpha)})
	require.NoError(t, err)
	require.Equal(t, 3, n.Count, "messages, not threads")

	// Thursday 03:00 of the fixture's week: t6 and t7 arrived today; every thread this week.
	f.env.Clock.Set(f.base.Add(75 * time.Hour))
	o, err := f.c.UniboxOverview(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, o.Total)
	require.Equal(t, 3, o.Unread)
	require.Equal(t, 2, o.Today)
	require.Equal(t, 5, o.Week)
	require.Equal(t, 1, o.Snoozed)
	require.Equal(t, 0, o.AwaitingReply, "bob wrote last in t2 now")
	require.Equal(t, 2, o.ScheduledPending)
	require.Equal(t, 1000, o.ScheduledPendingMax.Value)
	require.True(t, o.WindowTodayStart.Value.Equal(f.base.AddDate(0, 0, 3)))
	require.True(t, o.WindowWeekStart.Value.Equal(f.base))
	require.True(t, o.GeneratedAt.Value.Equal(f.base.Add(75*time.Hour)))
	require.Equal(t, []api.UniboxOverviewFolder{
		{Folder: "inbox", Total: 4, Unread: 3}, {Folder: "sent", Total: 1}, {Folder: "drafts"}, {Folder: "archive", Total: 1},
		{Folder: "spam", Total: 1, Unread: 1}, {Folder: "trash", Total: 1, Unread: 1},
	}, o.Folders)
	require.Equal(t, []api.UniboxOverviewMailbox{
		{ID: f.alpha, Email: "alpha@acme.example", Name: api.NewOptString("alpha@acme.example"), Total: 4, Unread: 3},
		{ID: f.beta, Email: "beta@acme.example", Name: api.NewOptString("beta@acme.example"), Total: 1},
	}, o.Mailboxes)
	color := api.NewOptString("#123456")
	require.Equal(t, []api.UniboxOverviewBucket{{ID: f.tag, Title: "Sales", Color: color, Total: 4, Unread: 3}, {ID: f.noTag, Title: "Unused tag", Color: color}}, o.Tags)
	require.Equal(t, []api.UniboxOverviewBucket{{ID: f.hot, Title: "Hot", Color: color, Total: 1, Unread: 1}, {ID: f.cold, Title: "Cold", Color: color, Total: 1},
		{ID: f.unusedCategory, Title: "Unused", Color: color}}, o.Categories)

	// Sunday of the next week: the week window starts on the next Monday.
	f.env.Clock.Set(f.base.AddDate(0, 0, 13).Add(23 * time.Hour))
	o, err = f.c.UniboxOverview(ctx)
	require.NoError(t, err)
	require.True(t, o.WindowWeekStart.Value.Equal(f.base.AddDate(0, 0, 7)))
	require.Equal(t, 0, o.Week)
}

func TestUniboxThreadReadsTheConversationAcrossMailboxes(t *testing.T) {
	t.Parallel()
	f := newConversationFixture(t)
	ctx := context.Background()
	read := func(p api.UniboxGetThreadParams) []uuid.UUID {
		t.Helper()
		page, err := f.c.UniboxGetThread(ctx, p)
		require.NoError(t, err)
		return messageIDs(page)
	}
	thread := func(id uuid.UUID) api.OptString { return api.NewOptString(id.String()) }
	// Oldest first; beta's copy of the root is shown once, as the asked thread's copy.
	require.Equal(t, []uuid.UUID{f.mA1, f.mA2, f.mB2, f.mA3}, read(api.UniboxGetThreadParams{ThreadID: thread(f.tA)}))
	require.Equal(t, []uuid.UUID{f.mB1, f.mA2, f.mB2, f.mA3}, read(api.UniboxGetThreadParams{ID: thread(f.tB)}), "alias id")
	require.Equal(t, []uuid.UUID{f.mA1, f.mA2, f.mA3}, read(api.UniboxGetThreadParams{ThreadID: thread(f.tA), EmailID: api.NewOptUUID(f.alpha)}))
	require.Equal(t, []uuid.UUID{f.mB1, f.mB2}, read(api.UniboxGetThreadParams{ThreadID: thread(f.tB), Email: api.NewOptUUID(f.beta)}), "alias email")
	require.Equal(t, []uuid.UUID{f.mC1}, read(api.UniboxGetThreadParams{ThreadID: thread(f.tC)}))

	page, err := f.c.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: thread(f.tA)})
	require.NoError(t, err)
	first, reply := page.Data[0], page.Data[1]
	require.Equal(t, f.alpha, first.EmailID)
	require.Equal(t, f.tA.String(), first.ThreadID)
	require.Equal(t, "<root@x>", first.MessageID.Value)
	require.Equal(t, []string{"ada@engines.example"}, first.FromAddr)
	require.Equal(t, "body of Hello", first.BodyPlain.Value)
	require.Empty(t, first.InReplyTo)
	require.False(t, first.ParentID.Set)
	v, ok := first.Classification.Get()
	require.True(t, ok)
	require.Equal(t, api.ReplyClassificationIntentQuestion, v.Intent)
	require.Equal(t, []string{"<root@x>"}, reply.InReplyTo)
	require.Equal(t, f.mA1.String(), reply.ParentID.Value, "the answered message of its thread")
	require.Equal(t, []string{`\Seen`}, reply.Flags)
	require.True(t, reply.Classification.Null)

	// Pages of one, by cursor.
	var got []uuid.UUID
	p := api.UniboxGetThreadParams{ThreadID: thread(f.tA), Limit: api.NewOptInt(1)}
	for {
		page, err := f.c.UniboxGetThread(ctx, p)
		require.NoError(t, err)
		got = append(got, messageIDs(page)...)
		if !page.Pagination.HasMore {
			break
		}
		p.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Equal(t, []uuid.UUID{f.mA1, f.mA2, f.mB2, f.mA3}, got)

	_, err = f.c.UniboxGetThread(ctx, api.UniboxGetThreadParams{})
	requireAPIError(t, err, 400, "thread_id_required")
	for _, bad := range []string{"not-a-uuid", uuid.NewString()} {
		_, err = f.c.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: api.NewOptString(bad)})
		requireAPIError(t, err, 404, "thread_not_found")
	}
	_, err = f.c.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: thread(f.tA), EmailID: api.NewOptUUID(f.beta)})
	requireAPIError(t, err, 404, "thread_not_found")
	_, err = f.c.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: thread(f.tA), Cursor: api.NewOptString("x.y")})
	requireAPIError(t, err, 400, "invalid_cursor")
	for _, q := range []string{"limit=0", "limit=101"} {
		status, body := rawGet(t, f.env, "/v1/unibox/thread?thread_id="+f.tA.String()+"&"+q, f.key)
		require.Equal(t, 400, status, body)
	}
	// Another organization's thread is unknown here.
	other := f.env.Bootstrap(t, "globex")
	_, err = f.env.Client(t, other.APIKey).UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: thread(f.tA)})
	requireAPIError(t, err, 404, "thread_not_found")
}

func TestUniboxThreadLabelsListsCategories(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	ctx := context.Background()
	f.exec(t, `INSERT INTO inbox_thread_labels (organization_id, thread_id, label_id) VALUES ($1, $2, $3)`, f.org, f.t1, f.cold)
	got, err := f.c.UniboxGetThreadLabels(ctx, api.UniboxGetThreadLabelsParams{ThreadID: api.NewOptString(f.t1.String())})
	require.NoError(t, err)
	require.Equal(t, []api.UniboxLabel{{ID: f.hot, Title: "Hot", Color: "#123456"}, {ID: f.cold, Title: "Cold", Color: "#123456"}}, got.Data)
	got, err = f.c.UniboxGetThreadLabels(ctx, api.UniboxGetThreadLabelsParams{ID: api.NewOptString(f.t2.String())})
	require.NoError(t, err)
	require.Empty(t, got.Data)
	_, err = f.c.UniboxGetThreadLabels(ctx, api.UniboxGetThreadLabelsParams{})
	requireAPIError(t, err, 400, "thread_id_required")
	_, err = f.c.UniboxGetThreadLabels(ctx, api.UniboxGetThreadLabelsParams{ThreadID: api.NewOptString("nope")})
	requireAPIError(t, err, 404, "thread_not_found")
}

func TestUniboxGetReadsOneMessageAndMarksItRead(t *testing.T) {
	t.Parallel()
	f := newConversationFixture(t)
	ctx := context.Background()
	before, err := f.c.UniboxCount(ctx, api.UniboxCountParams{})
	require.NoError(t, err)

	m, err := f.c.UniboxGet(ctx, api.UniboxGetParams{ID: f.mA1})
	require.NoError(t, err)
	require.Equal(t, f.mA1, m.ID)
	require.Equal(t, f.alpha, m.EmailID)
	require.Equal(t, f.tA.String(), m.ThreadID)
	require.True(t, m.Seen)
	require.Equal(t, []string{`\Seen`}, m.Flags)
	require.Equal(t, []string{"ada@engines.example"}, m.From)
	require.Equal(t, []string{"someone@acme.example"}, m.To)
	require.Empty(t, m.ReplyTo)
	require.True(t, m.Date.Value.Equal(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)))
	require.True(t, m.BodyTruncated.Value, "the fixture marks classified questions truncated")
	require.Equal(t, "<root@x>", m.MessageID.Value)
	v, ok := m.Classification.Get()
	require.True(t, ok)
	require.Equal(t, api.ReplyClassificationIntentQuestion, v.Intent)
	require.EqualValues(t, 1, seenJobs(t, f.env), "the read mark is relayed")

	after, err := f.c.UniboxCount(ctx, api.UniboxCountParams{})
	require.NoError(t, err)
	require.Equal(t, before.Count-1, after.Count, "the thread summaries know")
	require.EqualValues(t, 0, orgInt(t, f.env, f.org, `SELECT unread FROM inbox_thread_folders WHERE organization_id = $1 AND thread_id = $2 AND folder_role = 'inbox'`, f.org, f.tA))

	// Read again: nothing changes, nothing more is relayed.
	m, err = f.c.UniboxGet(ctx, api.UniboxGetParams{ID: f.mA1})
	require.NoError(t, err)
	require.True(t, m.Seen)
	require.EqualValues(t, 1, seenJobs(t, f.env))
	m, err = f.c.UniboxGet(ctx, api.UniboxGetParams{ID: f.mA2})
	require.NoError(t, err)
	require.True(t, m.Classification.Null)
	require.Equal(t, []string{"<root@x>"}, m.InReplyTo)
	require.Equal(t, f.mA1.String(), m.ParentID.Value)

	_, err = f.c.UniboxGet(ctx, api.UniboxGetParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "message_not_found")
	status, body := rawGet(t, f.env, "/v1/unibox/not-an-id", f.key)
	require.Equal(t, 404, status, body)
}

func TestUniboxScopedKeyReadsOnlyItsMailboxes(t *testing.T) {
	t.Parallel()
	f := newConversationFixture(t)
	ctx := context.Background()
	scoped := f.env.Client(t, scopedKey(t, f.env, f.org, auth.ReadUnibox, f.alpha))

	page, err := scoped.UniboxList(ctx, api.UniboxListParams{})
	require.NoError(t, err)
	require.Equal(t, ids(f.tA), threadIDs(page))
	page, err = scoped.UniboxList(ctx, api.UniboxListParams{EmailIds: api.NewOptString(f.beta.String())})
	require.NoError(t, err)
	require.Empty(t, page.Data, "a mailbox the key may not use is dropped like an invalid id")
	_, err = scoped.UniboxList(ctx, api.UniboxListParams{EmailID: api.NewOptUUID(f.beta)})
	requireAPIError(t, err, 404, "mailbox_not_found")

	n, err := scoped.UniboxCount(ctx, api.UniboxCountParams{})
	require.NoError(t, err)
	require.Equal(t, 1, n.Count)
	o, err := scoped.UniboxOverview(ctx)
	require.NoError(t, err)
	require.Len(t, o.Mailboxes, 1)
	require.Equal(t, f.alpha, o.Mailboxes[0].ID)
	require.Equal(t, 1, o.Total)

	msgs, err := scoped.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: api.NewOptString(f.tA.String())})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{f.mA1, f.mA2, f.mA3}, messageIDs(msgs), "beta's copies are not read")
	_, err = scoped.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: api.NewOptString(f.tB.String())})
	requireAPIError(t, err, 404, "thread_not_found")
	_, err = scoped.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: api.NewOptString(f.tA.String()), Email: api.NewOptUUID(f.beta)})
	requireAPIError(t, err, 404, "thread_not_found")
	_, err = scoped.UniboxGetThreadLabels(ctx, api.UniboxGetThreadLabelsParams{ThreadID: api.NewOptString(f.tC.String())})
	requireAPIError(t, err, 404, "thread_not_found")
	_, err = scoped.UniboxGet(ctx, api.UniboxGetParams{ID: f.mB2})
	requireAPIError(t, err, 404, "message_not_found")
	_, err = scoped.UniboxGet(ctx, api.UniboxGetParams{ID: f.mA2})
	require.NoError(t, err)
}

// uniboxReads calls each read operation once and answers their errors.
func uniboxReads(c *api.Client, thread, message uuid.UUID) map[string]error {
	ctx := context.Background()
	out := map[string]error{}
	_, out["list"] = c.UniboxList(ctx, api.UniboxListParams{})
	_, out["count"] = c.UniboxCount(ctx, api.UniboxCountParams{})
	_, out["overview"] = c.UniboxOverview(ctx)
	_, out["thread"] = c.UniboxGetThread(ctx, api.UniboxGetThreadParams{ThreadID: api.NewOptString(thread.String())})
	_, out["labels"] = c.UniboxGetThreadLabels(ctx, api.UniboxGetThreadLabelsParams{ThreadID: api.NewOptString(thread.String())})
	_, out["get"] = c.UniboxGet(ctx, api.UniboxGetParams{ID: message})
	return out
}

func TestUniboxNeedsTheUnifiedInboxFeature(t *testing.T) {
	t.Parallel()
	hosted := func(c *config.Config) { c.Edition = "hosted" }
	f := newConversationFixture(t, hosted)
	setTrial := func(ends *time.Time) {
		require.NoError(t, db.WithOrgTx(context.Background(), f.env.DB.Pool, f.org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE organizations SET trial_ends_at = $2 WHERE id = $1`, f.org, ends)
			return err
		}))
	}
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	setTrial(&past)
	for op, err := range uniboxReads(f.c, f.tA, f.mA1) {
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se, op)
		require.Equal(t, 403, se.StatusCode, op)
		require.Equal(t, "unified_inbox_unavailable", se.Response.Code, op)
	}
	require.EqualValues(t, 0, seenJobs(t, f.env), "a refused read marks nothing")
	setTrial(&future)
	for op, err := range uniboxReads(f.c, f.tA, f.mA1) {
		require.NoError(t, err, op)
	}
	setTrial(nil) // a paid plan
	for op, err := range uniboxReads(f.c, f.tA, f.mA1) {
		require.NoError(t, err, op)
	}

	// Self-hosted: every organization has it, whatever its trial says.
	g := newConversationFixture(t)
	require.NoError(t, db.WithOrgTx(context.Background(), g.env.DB.Pool, g.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE organizations SET trial_ends_at = $2 WHERE id = $1`, g.org, past)
		return err
	}))
	for op, err := range uniboxReads(g.c, g.tA, g.mA1) {
		require.NoError(t, err, op)
	}
}

func TestUniboxStaticSegmentsRouteToTheirOwnOperations(t *testing.T) {
	t.Parallel()
	f := newConversationFixture(t)
	// unibox_get would answer these paths 404 (not an id); each reaches its own operation instead.
	status, body := rawGet(t, f.env, "/v1/unibox/count", f.key)
	require.Equal(t, 200, status, body)
	require.JSONEq(t, `{"count": 4}`, body)
	status, body = rawGet(t, f.env, "/v1/unibox/overview", f.key)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, `"folders"`)
	status, body = rawGet(t, f.env, "/v1/unibox/thread", f.key)
	require.Equal(t, 400, status, body)
	require.Contains(t, body, `"thread_id_required"`)
	for path, op := range map[string]string{"/v1/unibox/snoozes": "unibox_list_snoozes", "/v1/unibox/scheduled": "unibox_list_scheduled"} {
		status, body = rawGet(t, f.env, path, f.key)
		require.NotEqual(t, 404, status, path+": "+body)
		if status != 200 { // the write operations ship in their own change: until then the route names them
			require.Equal(t, 501, status, body)
			require.Contains(t, body, op)
		}
	}
}
