package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// inboxRig is a mail rig with one connected mailbox and a session of the organization's owner.
type inboxRig struct {
	*mailRig
	box     *api.Mailbox
	session *api.Client
	uid     atomic.Int64
}

func newInboxRig(t *testing.T, opts ...apitest.Option) *inboxRig {
	t.Helper()
	return newInboxRigServing(t, nil, opts...)
}

// newInboxRigServing is newInboxRig whose IMAP server is started with imapOpts.
func newInboxRigServing(t *testing.T, imapOpts []mailtest.Option, opts ...apitest.Option) *inboxRig {
	t.Helper()
	r := &inboxRig{mailRig: newMailRig(t, opts...)}
	if imapOpts != nil {
		r.imap = mailtest.NewIMAPServer(t, rigUser, rigIMAPPass, imapOpts...)
	}
	r.box = r.connect(t, rigUser)
	r.session = r.env.Client(t, r.env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken)
	return r
}

// stored is a message as the sync would have stored it.
type stored struct {
	messageID, inReplyTo string
	refs                 []string
	folder               string // role; inbox when empty
	seen                 bool
}

// thread stores a thread of mailbox with msgs (oldest first, a minute apart, the last received a minute ago)
// and its summaries, and returns the thread's id and its messages' ids.
func (r *inboxRig) thread(t *testing.T, mailbox uuid.UUID, subject string, msgs ...stored) (uuid.UUID, []uuid.UUID) {
	t.Helper()
	thread := uuid.Must(uuid.NewV7())
	start := time.Now().Add(-time.Duration(len(msgs)+1) * time.Minute).Truncate(time.Second)
	orgExec(t, r.env, r.org, `INSERT INTO inbox_threads (organization_id, id, mailbox_id, subject, provider_thread_id, message_count, last_message_at)
		VALUES ($1, $2, $3, $4, '', 0, $5)`, r.org, thread, mailbox, subject, start)
	ids := make([]uuid.UUID, len(msgs))
	for i, m := range msgs {
		ids[i] = uuid.Must(uuid.NewV7())
		folder := m.folder
		if folder == "" {
			folder = "inbox"
		}
		flags := []string{}
		if m.seen {
			flags = []string{`\Seen`}
		}
		orgExec(t, r.env, r.org, `INSERT INTO inbox_messages (organization_id, id, mailbox_id, thread_id, folder, folder_role, uid_validity, uid,
			message_id, in_reply_to, thread_references, from_email, to_list, subject, body_text, flags, seen, received_at)
			VALUES ($1, $2, $3, $4, $5, $5, 1, $6, $7, $8, $9, 'bob@client.example', '{ada@example.com}', $10, 'Hello', $11, $12, $13)`,
			r.org, ids[i], mailbox, thread, folder, r.uid.Add(1), m.messageID, m.inReplyTo, append([]string{}, m.refs...), subject,
			flags, m.seen, start.Add(time.Duration(i)*time.Minute))
	}
	orgExec(t, r.env, r.org, `SELECT inbox_thread_refresh($1, ARRAY[$2::uuid])`, r.org, thread)
	return thread, ids
}

// seen reads the stored read state of messages, in the order given.
func (r *inboxRig) seen(t *testing.T, ids ...uuid.UUID) []bool {
	t.Helper()
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND seen`, id) == 1
	}
	return out
}

// relayed lists, per queued read/unread relay job, the messages it names, oldest job first.
func (r *inboxRig) relayed(t *testing.T) [][]string {
	t.Helper()
	rows, err := r.env.DB.OwnerPool(t).Query(context.Background(), `SELECT args->'message_ids' FROM river_job
		WHERE kind = 'mailbox_seen' AND args->>'organization_id' = $1 ORDER BY id`, r.org.String())
	require.NoError(t, err)
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var ids []string
		require.NoError(t, rows.Scan(&ids))
		slices.Sort(ids)
		out = append(out, ids)
	}
	require.NoError(t, rows.Err())
	return out
}

func sortedStrings(ids ...uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	slices.Sort(out)
	return out
}

// scopedKey creates an API key of the rig's organization limited to mailboxes, with every scope.
func (r *inboxRig) scopedKey(t *testing.T, mailboxes ...uuid.UUID) *api.Client {
	t.Helper()
	key, err := r.session.APIKeysCreate(context.Background(), &api.CreateAPIKey{Name: "scoped", Permissions: int64(auth.FullAccess),
		AllowedEmailAccounts: mailboxes}, api.APIKeysCreateParams{})
	require.NoError(t, err)
	return r.env.Client(t, key.Secret)
}

func TestUniboxMarkSeenChangesOnlyWhatDiffersAndQueuesItsRelay(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	_, m := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<a@client.example>"}, stored{messageID: "<b@client.example>", seen: true},
		stored{messageID: "<c@client.example>"}, stored{messageID: "<d@client.example>", folder: "archive"})

	req := &api.UniboxMarkSeenRequest{EmailIds: []uuid.UUID{m[0], m[1], uuid.New()}, Seen: api.NewOptBool(true)}
	echo, err := r.c.UniboxMarkSeen(ctx, req, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Equal(t, req.EmailIds, echo.EmailIds, "the request is echoed")
	require.True(t, echo.Seen.Value)
	require.Equal(t, []bool{true, true, false, false}, r.seen(t, m...))
	require.Equal(t, [][]string{sortedStrings(m[0])}, r.relayed(t), "only the message whose state changed is relayed")

	// A whole folder: the inbox's last unread message, not the archive's.
	_, err = r.c.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{Folder: api.NewOptUniboxMarkSeenRequestFolder(api.UniboxMarkSeenRequestFolderInbox),
		Seen: api.NewOptBool(true)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true, false}, r.seen(t, m...))
	require.Equal(t, [][]string{sortedStrings(m[0]), sortedStrings(m[2])}, r.relayed(t))
	// Nothing left to change: no relay.
	_, err = r.c.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{Folder: api.NewOptUniboxMarkSeenRequestFolder(api.UniboxMarkSeenRequestFolderInbox),
		Seen: api.NewOptBool(true)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Len(t, r.relayed(t), 2)
	// Unread again, by id.
	_, err = r.c.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{EmailIds: []uuid.UUID{m[1]}, Seen: api.NewOptBool(false)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, true, false}, r.seen(t, m...))

	// A key limited to another mailbox leaves this mailbox's messages alone.
	other := r.connect(t, "grace@example.com")
	scoped := r.scopedKey(t, other.ID)
	_, err = scoped.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{EmailIds: []uuid.UUID{m[3]}, Seen: api.NewOptBool(true)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	_, err = scoped.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{Folder: api.NewOptUniboxMarkSeenRequestFolder(api.UniboxMarkSeenRequestFolderArchive),
		Seen: api.NewOptBool(true)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, true, false}, r.seen(t, m...))
}

func TestUniboxMarkSeenRefusesAnUnclearSelection(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	folder := api.NewOptUniboxMarkSeenRequestFolder(api.UniboxMarkSeenRequestFolderInbox)
	for _, tc := range []struct {
		name    string
		req     api.UniboxMarkSeenRequest
		code    string
		message string
	}{
		{"both", api.UniboxMarkSeenRequest{EmailIds: []uuid.UUID{uuid.New()}, Folder: folder, Seen: api.NewOptBool(true)}, "invalid_selection", "not both"},
		{"neither", api.UniboxMarkSeenRequest{Seen: api.NewOptBool(true)}, "invalid_selection", "Send email_ids"},
		{"no ids", api.UniboxMarkSeenRequest{EmailIds: []uuid.UUID{}, Seen: api.NewOptBool(true)}, "invalid_email_ids", "1 to 500"},
		{"no seen", api.UniboxMarkSeenRequest{Folder: folder}, "seen_required", "seen is required"},
	} {
		_, err := r.c.UniboxMarkSeen(ctx, &tc.req, api.UniboxMarkSeenParams{})
		requireAPIError(t, err, 400, tc.code)
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.Contains(t, se.Response.Message, tc.message, tc.name)
	}
	// More than 500 ids: the generated client would not send it, so the request is written by hand.
	ids := make([]string, 501)
	for i := range ids {
		ids[i] = `"` + uuid.NewString() + `"`
	}
	resp := r.env.Do(t, http.MethodPatch, "/v1/unibox/seen", r.key, strings.NewReader(`{"seen":true,"email_ids":[`+strings.Join(ids, ",")+`]}`),
		http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var body api.Error
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "invalid_request", body.Code)
	require.Contains(t, body.Message, "email_ids")
}

// messageIDs reads the ids of the stored messages with these Message-IDs, in that order (fewer: not all stored).
func (r *inboxRig) messageIDs(t *testing.T, messageIDs ...string) []uuid.UUID {
	t.Helper()
	var out []uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM inbox_messages WHERE message_id = ANY ($1) ORDER BY array_position($1, message_id)`, messageIDs)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	}))
	return out
}

// imapFlags reads the flags of uids in the rig's INBOX, as a person's mail app would see them.
func (r *inboxRig) imapFlags(t *testing.T, uids ...imap.UID) map[imap.UID][]imap.Flag {
	t.Helper()
	c, err := imapclient.DialStartTLS(r.imap.Addr, &imapclient.Options{TLSConfig: mailtest.ClientTLS()})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Login(rigUser, rigIMAPPass).Wait())
	_, err = c.Select("INBOX", nil).Wait()
	require.NoError(t, err)
	msgs, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, Flags: true}).Collect()
	require.NoError(t, err)
	out := map[imap.UID][]imap.Flag{}
	for _, m := range msgs {
		out[m.UID] = m.Flags
	}
	return out
}

func TestUniboxMarkSeenIsRelayedToTheMailboxServer(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	raw := func(id, subject string) []byte {
		return fmt.Appendf(nil, "From: Bob <bob@client.example>\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: %s\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\n\r\nHello\r\n", rigUser, subject, id, time.Now().Format(time.RFC1123Z))
	}
	first := r.imap.Append(t, "INBOX", raw("<one@client.example>", "One"))
	second := r.imap.Append(t, "INBOX", raw("<two@client.example>", "Two"))
	r.env.StartWorkers(t)
	var ids []uuid.UUID
	require.Eventually(t, func() bool {
		ids = r.messageIDs(t, "<one@client.example>", "<two@client.example>")
		return len(ids) == 2
	}, 30*time.Second, 50*time.Millisecond, "the workers sync both messages")

	_, err := r.c.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{EmailIds: ids[:1], Seen: api.NewOptBool(true)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		f := r.imapFlags(t, first, second)
		return slices.Contains(f[first], imap.FlagSeen) && !slices.Contains(f[second], imap.FlagSeen)
	}, 30*time.Second, 100*time.Millisecond, "the server marks the first message read, and only it")

	_, err = r.c.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{Folder: api.NewOptUniboxMarkSeenRequestFolder(api.UniboxMarkSeenRequestFolderInbox),
		Seen: api.NewOptBool(false)}, api.UniboxMarkSeenParams{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		f := r.imapFlags(t, first, second)
		return !slices.Contains(f[first], imap.FlagSeen) && !slices.Contains(f[second], imap.FlagSeen)
	}, 30*time.Second, 100*time.Millisecond, "marking the folder unread reaches the server")
}

func TestUniboxThreadLabelsPutSetsTheWholeSetOfTheOrganizationsCategories(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Labels", stored{messageID: "<l@client.example>"})
	category := func(c *api.Client, title string) uuid.UUID {
		l, err := c.LabelsCreateCategory(ctx, &api.CreateLabel{Title: title, Color: api.NewOptString("#00aa00")}, api.LabelsCreateCategoryParams{})
		require.NoError(t, err)
		return l.ID
	}
	hot, warm := category(r.c, "Hot"), category(r.c, "Warm")
	tag, err := r.c.LabelsCreateTag(ctx, &api.CreateLabel{Title: "EU"}, api.LabelsCreateTagParams{})
	require.NoError(t, err)
	globex := r.env.Bootstrap(t, "globex")
	foreign := category(r.env.Client(t, globex.APIKey), "Theirs")

	put := func(ids ...uuid.UUID) []string {
		t.Helper()
		res, err := r.c.UniboxSetThreadLabels(ctx, &api.UniboxSetThreadLabelsRequest{ThreadID: thread.String(), CategoryIds: ids},
			api.UniboxSetThreadLabelsParams{})
		require.NoError(t, err)
		var titles []string
		for _, l := range res.Data {
			require.Equal(t, "#00aa00", l.Color)
			titles = append(titles, l.Title)
		}
		return titles
	}
	require.Equal(t, []string{"Hot", "Warm"}, put(hot, warm, tag.ID, foreign, uuid.New()),
		"a tag, another organization's category and an unknown id are dropped")
	require.Equal(t, []string{"Hot", "Warm"}, put(warm, hot), "the same set again changes nothing")
	require.Equal(t, int64(2), orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_thread_labels WHERE thread_id = $1`, thread))
	require.Equal(t, []string{"Warm"}, put(warm), "the set is the whole set")
	require.Empty(t, put(), "an empty set clears it")

	for _, tc := range []struct {
		thread string
		status int
		code   string
	}{
		{uuid.NewString(), 404, "thread_not_found"},
		{"not-an-id", 404, "thread_not_found"},
		{"", 400, "thread_id_required"},
	} {
		_, err := r.c.UniboxSetThreadLabels(ctx, &api.UniboxSetThreadLabelsRequest{ThreadID: tc.thread, CategoryIds: []uuid.UUID{hot}},
			api.UniboxSetThreadLabelsParams{})
		requireAPIError(t, err, tc.status, tc.code)
	}
	// Another organization's thread is unknown here.
	_, err = r.env.Client(t, globex.APIKey).UniboxSetThreadLabels(ctx, &api.UniboxSetThreadLabelsRequest{ThreadID: thread.String()},
		api.UniboxSetThreadLabelsParams{})
	requireAPIError(t, err, 404, "thread_not_found")
}

func TestUniboxSnoozeIsPerUserUpsertedAndUnsnoozeIsIdempotent(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Later", stored{messageID: "<s@client.example>"})
	at := time.Now().Add(2 * time.Hour).Truncate(time.Second)

	first, err := r.session.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: thread.String(), SnoozedUntil: at}, api.UniboxSnoozeParams{})
	require.NoError(t, err)
	require.Equal(t, thread.String(), first.ThreadID)
	require.True(t, at.Equal(first.SnoozedUntil))
	again, err := r.session.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: thread.String(), SnoozedUntil: at.Add(time.Hour)}, api.UniboxSnoozeParams{})
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID, "one snooze per user and thread: snoozing again moves it")
	require.True(t, at.Add(time.Hour).Equal(again.SnoozedUntil))
	list, err := r.session.UniboxListSnoozes(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.Equal(t, first.ID, list.Data[0].ID)

	// Another member of the organization has snoozes of their own.
	other, err := r.session.APIKeysCreate(ctx, &api.CreateAPIKey{Name: "someone else", Permissions: int64(auth.FullAccess)}, api.APIKeysCreateParams{})
	require.NoError(t, err)
	graceID := uuid.Must(uuid.NewV7())
	_, err = r.env.DB.OwnerPool(t).Exec(ctx, `INSERT INTO users (id, email) VALUES ($1, 'grace@acme.example')`, graceID)
	require.NoError(t, err)
	orgExec(t, r.env, r.org, `UPDATE api_keys SET user_id = $1 WHERE id = $2`, graceID, other.ID)
	grace := r.env.Client(t, other.Secret)
	list, err = grace.UniboxListSnoozes(ctx)
	require.NoError(t, err)
	require.Empty(t, list.Data, "a snooze hides the thread for its user only")

	// A snooze that came due no longer hides its thread.
	orgExec(t, r.env, r.org, `UPDATE inbox_snoozes SET snoozed_until = now() - interval '1 second' WHERE id = $1`, first.ID)
	list, err = r.session.UniboxListSnoozes(ctx)
	require.NoError(t, err)
	require.Empty(t, list.Data)

	require.NoError(t, r.session.UniboxUnsnooze(ctx, api.UniboxUnsnoozeParams{ThreadID: thread.String()}))
	require.NoError(t, r.session.UniboxUnsnooze(ctx, api.UniboxUnsnoozeParams{ThreadID: thread.String()}), "unsnoozing twice is fine")
	require.Zero(t, orgInt(t, r.env, r.org, `SELECT count(*) FROM inbox_snoozes`))
	err = r.session.UniboxUnsnooze(ctx, api.UniboxUnsnoozeParams{ThreadID: ""})
	requireAPIError(t, err, 400, "thread_id_required")

	for _, tc := range []struct {
		name   string
		thread string
		until  time.Time
		status int
		code   string
	}{
		{"past", thread.String(), time.Now().Add(-time.Minute), 400, "invalid_snoozed_until"},
		{"beyond a year", thread.String(), time.Now().Add(366 * 24 * time.Hour), 400, "invalid_snoozed_until"},
		{"unknown thread", uuid.NewString(), at, 404, "thread_not_found"},
		{"no thread", "", at, 400, "thread_id_required"},
	} {
		_, err := r.session.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: tc.thread, SnoozedUntil: tc.until}, api.UniboxSnoozeParams{})
		requireAPIError(t, err, tc.status, tc.code)
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.True(t, strings.Contains(se.Response.Message, "snoozed_until") || strings.Contains(se.Response.Message, "thread_id"), tc.name)
	}
}

func TestUniboxSnoozesNeedAPersonBehindTheCredential(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Nobody", stored{messageID: "<n@client.example>"})
	key, err := r.session.APIKeysCreate(ctx, &api.CreateAPIKey{Name: "robot", Permissions: int64(auth.FullAccess)}, api.APIKeysCreateParams{})
	require.NoError(t, err)
	orgExec(t, r.env, r.org, `UPDATE api_keys SET user_id = NULL WHERE id = $1`, key.ID)
	robot := r.env.Client(t, key.Secret)
	_, err = robot.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: thread.String(), SnoozedUntil: time.Now().Add(time.Hour)}, api.UniboxSnoozeParams{})
	requireAPIError(t, err, 400, "user_required")
	_, err = robot.UniboxListSnoozes(ctx)
	requireAPIError(t, err, 400, "user_required")
	requireAPIError(t, robot.UniboxUnsnooze(ctx, api.UniboxUnsnoozeParams{ThreadID: thread.String()}), 400, "user_required")
	// The bootstrap key was created by the owner: its snoozes are the owner's.
	_, err = r.c.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: thread.String(), SnoozedUntil: time.Now().Add(time.Hour)}, api.UniboxSnoozeParams{})
	require.NoError(t, err)
	list, err := r.session.UniboxListSnoozes(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
}

func TestUniboxWritesNeedTheUnifiedInboxFeature(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t, func(c *config.Config) { c.Edition = "hosted" })
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Gate", stored{messageID: "<g@client.example>"})
	// During the trial the inbox is there.
	_, err := r.c.UniboxListSnoozes(ctx)
	require.NoError(t, err)

	orgExec(t, r.env, r.org, `UPDATE organizations SET trial_ends_at = now() - interval '1 day' WHERE id = $1`, r.org)
	calls := map[string]error{}
	_, calls["seen"] = r.c.UniboxMarkSeen(ctx, &api.UniboxMarkSeenRequest{Folder: api.NewOptUniboxMarkSeenRequestFolder(api.UniboxMarkSeenRequestFolderInbox),
		Seen: api.NewOptBool(true)}, api.UniboxMarkSeenParams{})
	_, calls["move"] = r.c.UniboxMoveFolder(ctx, &api.UniboxMoveFolderRequest{EmailIds: []uuid.UUID{uuid.New()}, Folder: api.UniboxMoveFolderRequestFolderTrash},
		api.UniboxMoveFolderParams{})
	_, calls["labels"] = r.c.UniboxSetThreadLabels(ctx, &api.UniboxSetThreadLabelsRequest{ThreadID: thread.String()}, api.UniboxSetThreadLabelsParams{})
	_, calls["snooze"] = r.c.UniboxSnooze(ctx, &api.UniboxSnoozeRequest{ThreadID: thread.String(), SnoozedUntil: time.Now().Add(time.Hour)}, api.UniboxSnoozeParams{})
	calls["unsnooze"] = r.c.UniboxUnsnooze(ctx, api.UniboxUnsnoozeParams{ThreadID: thread.String()})
	_, calls["snoozes"] = r.c.UniboxListSnoozes(ctx)
	_, calls["scheduled"] = r.c.UniboxListScheduled(ctx, api.UniboxListScheduledParams{})
	calls["cancel"] = r.c.UniboxCancelScheduled(ctx, api.UniboxCancelScheduledParams{TaskID: uuid.New()})
	_, calls["reply"] = r.c.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Gate",
		BodyPlain: api.NewOptString("Hi")}, api.UniboxReplyParams{})
	_, calls["compose"] = r.c.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Hi",
		BodyPlain: api.NewOptString("Hi")}, api.UniboxComposeParams{})
	for name, err := range calls {
		requireAPIError(t, err, 403, "unified_inbox_unavailable")
		require.NotEmpty(t, name)
	}
	require.Zero(t, orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks`), "nothing was sent")
}
