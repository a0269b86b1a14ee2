package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/inbox/actions"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

// attempt runs one attempt of a send task through a pipeline of the rig's deployment, as a send worker would
// when the task's job comes due, and answers how long the task still has to wait (0: it was handled).
func (r *inboxRig) attempt(t *testing.T, task uuid.UUID) time.Duration {
	t.Helper()
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	p := sending.New(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}, logger, 72*time.Hour)
	inserter, err := jobs.NewClient(jobs.Deps{Pool: r.env.DB.Pool, Logger: logger}, jobs.Options{})
	require.NoError(t, err)
	wait, err := p.Attempt(context.Background(), events.NewOutbox(inserter), sending.Args{OrganizationID: r.org, TaskID: task, MailboxID: r.box.ID})
	require.NoError(t, err)
	return wait
}

// due makes a queued task due now, as if its wait had passed.
func (r *inboxRig) due(t *testing.T, task uuid.UUID) {
	t.Helper()
	orgExec(t, r.env, r.org, `UPDATE send_tasks SET not_before = now() WHERE id = $1`, task)
}

// waited is how many whole seconds a task waits from its creation to its send time.
func (r *inboxRig) waited(t *testing.T, task uuid.UUID) int64 {
	t.Helper()
	return orgInt(t, r.env, r.org, `SELECT round(extract(epoch FROM not_before - created_at))::bigint FROM send_tasks WHERE id = $1`, task)
}

func (r *inboxRig) delivered(t *testing.T, n int) *mail.Message {
	t.Helper()
	require.Equal(t, n, r.smtp.Count())
	m, err := mail.ReadMessage(strings.NewReader(string(r.smtp.Messages()[n-1].Data)))
	require.NoError(t, err)
	return m
}

func TestUniboxReplyIsDeliveredIntoItsThreadAfterTheOrganizationsUndoWindow(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<root@client.example>"},
		stored{messageID: "<r1@example.com>", inReplyTo: "<root@client.example>", refs: []string{"<root@client.example>"}, folder: "sent"},
		stored{messageID: "<r2@client.example>", inReplyTo: "<r1@example.com>", refs: []string{"<root@client.example>", "<r1@example.com>"}})

	org, err := r.session.OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, 30, org.ReplyUndoSeconds, "the default undo window")
	org, err = r.session.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{ReplyUndoSeconds: api.NewOptInt(7)}, api.OrganizationsUpdateCurrentParams{})
	require.NoError(t, err)
	require.Equal(t, 7, org.ReplyUndoSeconds)

	res, err := r.session.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"Bob@Client.example"}, Subject: "Re: Pricing",
		BodyPlain: api.NewOptString("Tuesday works."), ThreadID: api.NewOptString(thread.String())}, api.UniboxReplyParams{})
	require.NoError(t, err)
	ok, isOK := res.(*api.UniboxReplyOK)
	require.True(t, isOK)
	require.Equal(t, api.UniboxReplyResultResultExecuted, ok.Result)
	require.Equal(t, api.UniboxReplyResultSendModeInstant, ok.SendMode.Value)
	task := ok.TaskID.Value
	require.Equal(t, int64(7), r.waited(t, task), "an instant reply waits the organization's undo window")
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks WHERE id = $1 AND kind = 'reply' AND thread_id = $2`, task, thread))
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE event = 'unibox.reply' AND target_id = $1`, task.String()))

	require.Positive(t, r.attempt(t, task), "before the window ends the reply waits")
	require.Zero(t, r.smtp.Count())
	r.due(t, task)
	require.Zero(t, r.attempt(t, task))
	m := r.delivered(t, 1)
	require.Equal(t, "<r2@client.example>", m.Header.Get("In-Reply-To"), "it answers the thread's newest message")
	require.Equal(t, "<root@client.example> <r1@example.com> <r2@client.example>", m.Header.Get("References"))
	require.Equal(t, "Re: Pricing", m.Header.Get("Subject"))
	require.Equal(t, []string{"bob@client.example"}, r.smtp.Messages()[0].To)

	// in_reply_to names what it answers besides; without a thread it is the only threading.
	res, err = r.session.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Other",
		BodyPlain: api.NewOptString("Yes."), InReplyTo: []string{"<other@client.example>"}}, api.UniboxReplyParams{})
	require.NoError(t, err)
	task = res.(*api.UniboxReplyOK).TaskID.Value
	r.due(t, task)
	require.Zero(t, r.attempt(t, task))
	m = r.delivered(t, 2)
	require.Equal(t, "<other@client.example>", m.Header.Get("In-Reply-To"))
	require.Equal(t, "<other@client.example>", m.Header.Get("References"))
}

func TestUniboxComposeStartsAThreadAndEachSendModeTimesIt(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	compose := func(mode api.UniboxComposeRequestSendMode, at time.Time) *api.UniboxComposeOK {
		t.Helper()
		req := &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Cc: []string{"dan@client.example"},
			Subject: "Hello Carol", BodyHTML: api.NewOptString("<p>Hello <b>Carol</b></p>"), SendMode: api.NewOptUniboxComposeRequestSendMode(mode)}
		if !at.IsZero() {
			req.ScheduledAt = api.NewOptDateTime(at)
		}
		res, err := r.session.UniboxCompose(ctx, req, api.UniboxComposeParams{})
		require.NoError(t, err)
		ok, isOK := res.(*api.UniboxComposeOK)
		require.True(t, isOK)
		require.Equal(t, api.UniboxComposeResultResultExecuted, ok.Result)
		require.Equal(t, string(mode), string(ok.SendMode.Value))
		_, err = uuid.Parse(ok.ThreadID.Value)
		require.NoError(t, err, "a new conversation is answered with its thread id")
		return ok
	}
	instant := compose(api.UniboxComposeRequestSendModeInstant, time.Time{})
	require.Equal(t, int64(30), r.waited(t, instant.TaskID.Value), "the default undo window")
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks WHERE id = $1 AND kind = 'direct' AND thread_id = $2`,
		instant.TaskID.Value, instant.ThreadID.Value))

	at := time.Now().Add(time.Hour).Truncate(time.Second)
	scheduled := compose(api.UniboxComposeRequestSendModeScheduled, at)
	require.True(t, at.Equal(scheduled.ScheduledAt.Value), "a scheduled message leaves at its time")

	// smart: the mailbox's next gap after its last capped send.
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET min_wait_time = 600, last_capped_send_at = now() - interval '100 seconds' WHERE id = $1`, r.box.ID)
	smart := compose(api.UniboxComposeRequestSendModeSmart, time.Time{})
	require.Equal(t, int64(600), orgInt(t, r.env, r.org, `SELECT round(extract(epoch FROM t.not_before - m.last_capped_send_at))::bigint
		FROM send_tasks t JOIN mailboxes m ON m.id = t.mailbox_id WHERE t.id = $1`, smart.TaskID.Value))

	r.due(t, instant.TaskID.Value)
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET last_capped_send_at = NULL WHERE id = $1`, r.box.ID)
	require.Zero(t, r.attempt(t, instant.TaskID.Value))
	m := r.delivered(t, 1)
	require.Empty(t, m.Header.Get("In-Reply-To"), "a new conversation answers nothing")
	require.Equal(t, "Hello Carol", m.Header.Get("Subject"))
	require.Equal(t, []string{"carol@client.example", "dan@client.example"}, r.smtp.Messages()[0].To)

	for _, tc := range []struct {
		name string
		mode api.UniboxComposeRequestSendMode
		at   time.Time
	}{
		{"scheduled without a time", api.UniboxComposeRequestSendModeScheduled, time.Time{}},
		{"scheduled in the past", api.UniboxComposeRequestSendModeScheduled, time.Now().Add(-time.Minute)},
		{"a time for an instant send", api.UniboxComposeRequestSendModeInstant, time.Now().Add(time.Hour)},
	} {
		req := &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Hi",
			BodyPlain: api.NewOptString("Hi"), SendMode: api.NewOptUniboxComposeRequestSendMode(tc.mode)}
		if !tc.at.IsZero() {
			req.ScheduledAt = api.NewOptDateTime(tc.at)
		}
		_, err := r.session.UniboxCompose(ctx, req, api.UniboxComposeParams{})
		requireAPIError(t, err, 400, "invalid_scheduled_at")
	}
	_, err := r.session.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Hi"},
		api.UniboxComposeParams{})
	requireAPIError(t, err, 400, "body_required")
	_, err = r.session.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"not an address"}, Subject: "Hi",
		BodyPlain: api.NewOptString("Hi")}, api.UniboxReplyParams{})
	requireAPIError(t, err, 400, "invalid_to")
}

func TestUniboxSendsRefuseHeldDisconnectedForeignMailboxesAndSuppressedRecipients(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	reply := func(c *api.Client, mailbox uuid.UUID, to string) error {
		_, err := c.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: mailbox, To: []string{to}, Subject: "Re: Hi",
			BodyPlain: api.NewOptString("Hi")}, api.UniboxReplyParams{})
		return err
	}
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET status = 'inactive' WHERE id = $1`, r.box.ID)
	requireAPIError(t, reply(r.c, r.box.ID, "bob@client.example"), 409, "mailbox_inactive")
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET status = 'revoked' WHERE id = $1`, r.box.ID)
	requireAPIError(t, reply(r.c, r.box.ID, "bob@client.example"), 409, "mailbox_disconnected")
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET status = 'active' WHERE id = $1`, r.box.ID)

	orgExec(t, r.env, r.org, `INSERT INTO suppressions (organization_id, id, kind, value, source, reason) VALUES ($1, $2, 'email', 'bob@client.example', 'manual', 'Asked')`,
		r.org, uuid.Must(uuid.NewV7()))
	requireAPIError(t, reply(r.c, r.box.ID, "bob@client.example"), 400, "recipient_suppressed")

	requireAPIError(t, reply(r.c, uuid.New(), "carol@client.example"), 404, "not_found")
	other := r.connect(t, "grace@example.com")
	requireAPIError(t, reply(r.scopedKey(t, other.ID), r.box.ID, "carol@client.example"), 404, "mailbox_not_found")
	// A thread of another mailbox is not this mailbox's to answer.
	thread, _ := r.thread(t, other.ID, "Theirs", stored{messageID: "<t@client.example>"})
	_, err := r.c.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Re: Theirs",
		BodyPlain: api.NewOptString("Hi"), ThreadID: api.NewOptString(thread.String())}, api.UniboxReplyParams{})
	requireAPIError(t, err, 400, "thread_of_another_mailbox")
	_, err = r.c.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Re: Theirs",
		BodyPlain: api.NewOptString("Hi"), ThreadID: api.NewOptString(uuid.NewString())}, api.UniboxReplyParams{})
	requireAPIError(t, err, 404, "thread_not_found")
	require.Zero(t, orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks`), "nothing was queued")
}

func TestUniboxScheduledListsWaitingSendsAndCancelStopsThemBeforeTheyFire(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<root@client.example>"})
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	res, err := r.session.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Pricing",
		BodyHTML: api.NewOptString("<p>See   you\n<b>Tuesday</b></p>"), ThreadID: api.NewOptString(thread.String()),
		SendMode: api.NewOptUniboxReplyRequestSendMode(api.UniboxReplyRequestSendModeScheduled), ScheduledAt: api.NewOptDateTime(at)}, api.UniboxReplyParams{})
	require.NoError(t, err)
	reply := res.(*api.UniboxReplyOK).TaskID.Value
	composed, err := r.session.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Hello",
		BodyPlain: api.NewOptString("Hello Carol")}, api.UniboxComposeParams{})
	require.NoError(t, err)

	list, err := r.c.UniboxListScheduled(ctx, api.UniboxListScheduledParams{})
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	first := list.Data[0]
	require.Equal(t, composed.(*api.UniboxComposeOK).TaskID.Value, first.TaskID, "the next to leave first")
	require.Equal(t, "Hello Carol", first.Snippet.Value)
	second := list.Data[1]
	require.Equal(t, reply, second.TaskID)
	require.True(t, at.Equal(second.ScheduledAt))
	require.Equal(t, r.box.ID, second.AccountID)
	require.Equal(t, rigUser, second.AccountEmail.Value)
	require.Equal(t, "Ada Lovelace", second.AccountName.Value)
	require.Equal(t, []string{"bob@client.example"}, second.To)
	require.Equal(t, "Re: Pricing", second.Subject)
	require.Equal(t, "See you Tuesday", second.Snippet.Value, "the HTML's text, whitespace folded")
	require.Equal(t, thread.String(), second.ThreadID.Value)
	require.True(t, second.CreatedAt.Set)
	list, err = r.c.UniboxListScheduled(ctx, api.UniboxListScheduledParams{ThreadID: api.NewOptString(thread.String())})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.Equal(t, reply, list.Data[0].TaskID)
	list, err = r.c.UniboxListScheduled(ctx, api.UniboxListScheduledParams{ThreadID: api.NewOptString("nope")})
	require.NoError(t, err)
	require.Empty(t, list.Data)

	require.NoError(t, r.c.UniboxCancelScheduled(ctx, api.UniboxCancelScheduledParams{TaskID: reply}))
	requireAPIError(t, r.c.UniboxCancelScheduled(ctx, api.UniboxCancelScheduledParams{TaskID: reply}), 404, "scheduled_send_not_found")
	list, err = r.c.UniboxListScheduled(ctx, api.UniboxListScheduledParams{})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	// When its time comes, the canceled reply's job sends nothing.
	r.due(t, reply)
	require.Zero(t, r.attempt(t, reply))
	require.Zero(t, r.smtp.Count())
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'canceled'`, reply))

	// Sent, campaign and unknown tasks are not the inbox's to cancel; another organization's neither.
	sent := composed.(*api.UniboxComposeOK).TaskID.Value
	r.due(t, sent)
	require.Zero(t, r.attempt(t, sent))
	require.Equal(t, 1, r.smtp.Count())
	campaignTask := uuid.Must(uuid.NewV7())
	orgExec(t, r.env, r.org, `INSERT INTO send_tasks (organization_id, id, kind, mailbox_id, to_email, subject, not_before)
		VALUES ($1, $2, 'campaign', $3, 'x@client.example', 'Step 1', now() + interval '1 hour')`, r.org, campaignTask, r.box.ID)
	globex := r.env.Client(t, r.env.Bootstrap(t, "globex").APIKey)
	for _, tc := range []struct {
		c    *api.Client
		task uuid.UUID
	}{{r.c, sent}, {r.c, campaignTask}, {r.c, uuid.New()}, {globex, campaignTask}} {
		requireAPIError(t, tc.c.UniboxCancelScheduled(ctx, api.UniboxCancelScheduledParams{TaskID: tc.task}), 404, "scheduled_send_not_found")
	}
	resp := r.env.Do(t, "DELETE", "/v1/unibox/scheduled/not-an-id", r.key, nil, nil)
	require.Equal(t, 404, resp.StatusCode)
}

func TestUniboxSendsAreBoundedByTheOrganizationsPendingSends(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	orgExec(t, r.env, r.org, `INSERT INTO send_tasks (organization_id, id, kind, mailbox_id, to_email, subject, not_before)
		SELECT $1, gen_random_uuid(), 'direct', $2, 'x@client.example', 'Later', now() + interval '10 minutes'
		FROM generate_series(1, $3::int)`, r.org, r.box.ID, actions.MaxPendingSends)
	_, err := r.session.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Hi",
		BodyPlain: api.NewOptString("Hi")}, api.UniboxComposeParams{})
	requireAPIError(t, err, 429, "scheduled_limit_reached")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "1000")
	// One fewer waiting: room for one more.
	orgExec(t, r.env, r.org, `UPDATE send_tasks SET status = 'canceled' WHERE id = (SELECT id FROM send_tasks LIMIT 1)`)
	_, err = r.session.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"carol@client.example"}, Subject: "Hi",
		BodyPlain: api.NewOptString("Hi")}, api.UniboxComposeParams{})
	require.NoError(t, err)
}

func TestOrganizationUndoWindowIsASessionSettingOf5To120Seconds(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	for _, v := range []int{4, 121} {
		_, err := r.session.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{ReplyUndoSeconds: api.NewOptInt(v)}, api.OrganizationsUpdateCurrentParams{})
		require.Error(t, err, "the client checks the range too")
		resp := r.env.Do(t, http.MethodPatch, "/v1/organizations/current", r.env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken,
			strings.NewReader(fmt.Sprintf(`{"reply_undo_seconds":%d}`, v)), http.Header{"Content-Type": {"application/json"}})
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		var body api.Error
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		require.Equal(t, "invalid_request", body.Code, body.Message)
		require.Contains(t, body.Message, "The body field reply_undo_seconds must be at")
	}
	_, err := r.c.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{ReplyUndoSeconds: api.NewOptInt(10)}, api.OrganizationsUpdateCurrentParams{})
	requireAPIError(t, err, 403, "session_required")

	org, err := r.session.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{ReplyUndoSeconds: api.NewOptInt(120)}, api.OrganizationsUpdateCurrentParams{})
	require.NoError(t, err)
	require.Equal(t, 120, org.ReplyUndoSeconds)
	require.Equal(t, "acme", org.Name, "fields not sent stay")
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE event = 'organization.updated'
		AND (metadata->>'reply_undo_seconds')::int = 120`))
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM event_outbox WHERE event_type = 'settings.updated'
		AND data->'fields' = '["reply_undo_seconds"]'::jsonb`))
	// The direct send reads the same window.
	res, err := r.session.MailboxesSend(ctx, &api.MailboxSendRequest{To: []string{"carol@client.example"}, Subject: "Hi", BodyPlain: api.NewOptString("Hi")},
		api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	require.Equal(t, int64(120), r.waited(t, res.(*api.MailboxesSendOK).TaskID.Value))
}
