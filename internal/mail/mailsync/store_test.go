package mailsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// summariesAgree fails unless every thread's summaries (inbox_thread_folders and the thread counters) equal a
// recomputation from the stored messages, written here independently of inbox_thread_refresh.
func (r *rig) summariesAgree(t *testing.T) {
	t.Helper()
	require.Positive(t, r.count(t, `SELECT count(*) FROM inbox_thread_folders`), "there are summaries to compare")
	require.Zero(t, r.count(t, `
		WITH scoped AS (
		  SELECT thread_id, folder_role AS scope, id, received_at, seen FROM inbox_messages
		  UNION ALL
		  SELECT thread_id, 'all', id, received_at, seen FROM inbox_messages WHERE folder_role NOT IN ('spam', 'trash')
		), want AS (
		  SELECT thread_id, scope, count(*)::int AS total, (count(*) FILTER (WHERE NOT seen))::int AS unread,
		    (array_agg(id ORDER BY received_at DESC, id DESC))[1] AS newest, max(received_at) AS last_at
		  FROM scoped GROUP BY thread_id, scope
		), have AS (
		  SELECT thread_id, folder_role AS scope, total, unread, last_message_id AS newest, last_message_at AS last_at
		  FROM inbox_thread_folders
		)
		SELECT count(*) FROM ((TABLE want EXCEPT TABLE have) UNION ALL (TABLE have EXCEPT TABLE want)) d`), "thread folder summaries")
	require.Zero(t, r.count(t, `
		SELECT count(*) FROM inbox_threads t
		WHERE t.message_count <> (SELECT count(*) FROM inbox_messages m WHERE m.thread_id = t.id)
		   OR t.unread_count <> (SELECT count(*) FROM inbox_messages m WHERE m.thread_id = t.id AND NOT m.seen AND m.folder_role NOT IN ('spam', 'trash'))
		   OR t.newest_message_id IS DISTINCT FROM (SELECT f.last_message_id FROM inbox_thread_folders f WHERE f.thread_id = t.id AND f.folder_role = 'all')
		   OR t.awaiting_reply <> coalesce((SELECT m.outbound FROM inbox_messages m WHERE m.id = t.newest_message_id), false)
		   OR NOT EXISTS (SELECT 1 FROM inbox_messages m WHERE m.thread_id = t.id)`), "thread counters, and no thread without messages")
}

// events answers the data of the events of type et, oldest first.
func (r *rig) events(t *testing.T, et events.Type) []mailsync.EmailEvent {
	t.Helper()
	var out []mailsync.EmailEvent
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT data FROM event_outbox WHERE event_type = $1 ORDER BY id`, string(et))
		if err != nil {
			return err
		}
		raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		for _, raw := range raws {
			var e mailsync.EmailEvent
			require.NoError(t, json.Unmarshal(raw, &e))
			out = append(out, e)
		}
		return err
	}))
	return out
}

func (r *rig) messageID(t *testing.T, header string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM inbox_messages WHERE message_id = $1`, header).Scan(&id)
	}))
	return id
}

// hooked records what the inbound hook is told.
type hooked struct {
	mu  sync.Mutex
	got map[string]mailsync.Inbound
}

func (h *hooked) hook(_ context.Context, _ pgx.Tx, _ *events.Outbox, m mailsync.Inbound) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[m.MessageID] = m
	return nil
}

func (h *hooked) told(id string) (mailsync.Inbound, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.got[id]
	return m, ok
}

func TestSyncStoresEveryFieldOfAMessageAndTellsTheHookOnlyWhatCameIn(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewIMAPServer(t, user, pass, mailtest.NoTLS(), mailtest.Folders("Drafts", "Archive"))
	proxy := mailtest.NewCondStoreProxy(t, srv.Addr, 42)
	viaProxy := service(t, proxy.Addr)
	viaProxy.Security = api.NewOptMailServiceSecurity(api.MailServiceSecurityNone)
	r := newRigAt(t, srv, viaProxy)
	date := time.Now().Format(time.RFC1123Z)
	// An auto-reply with every captured header, a long one and one repeated past the bound, and an HTML body only.
	rich := "From: Bob Builder <Bob@Client.example>\r\nTo: ada@example.com\r\nCc: carol@client.example\r\n" +
		"Bcc: dave@client.example, erin@client.example\r\nReply-To: Help Desk <help@client.example>\r\n" +
		"Subject: Automatic reply: Hello\r\nMessage-ID: <rich@client.example>\r\nDate: " + date + "\r\n" +
		"In-Reply-To: <mid@example.com>\r\nReferences: <root@example.com> <mid@example.com>\r\n" +
		"Auto-Submitted: auto-replied\r\nPrecedence: auto_reply\r\nX-Autoreply: yes\r\nList-Id: <news.client.example>\r\n" +
		"X-Mailer: " + strings.Repeat("m", 300) + "\r\n" + strings.Repeat("X-Failed-Recipients: x@y.example\r\n", 7) +
		"X-Unrelated: kept out\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" +
		"<html><head><style>p{color:red}</style></head><body><p>I am   out\r\n of the office</p><p>until " +
		strings.Repeat("Monday ", 60) + "</p></body></html>\r\n"
	srv.Append(t, "INBOX", []byte(rich))
	// A body past the store's 1 MiB clip.
	srv.Append(t, "INBOX", message("<big@client.example>", "", "", "Big", strings.Repeat("a", 1<<20+10)))
	// Ada wrote these: one in Sent, one copied to her INBOX, and a draft.
	srv.Append(t, "Sent", []byte("From: Ada <ada@example.com>\r\nTo: bob@client.example\r\nSubject: Hello\r\nMessage-ID: <sent@example.com>\r\nDate: "+
		date+"\r\n\r\nHi Bob\r\n"), imap.FlagSeen)
	srv.Append(t, "INBOX", []byte("From: Ada <ADA@example.com>\r\nTo: bob@client.example\r\nSubject: Note to self\r\nMessage-ID: <self@example.com>\r\nDate: "+
		date+"\r\n\r\nRemember\r\n"))
	srv.Append(t, "Drafts", []byte("From: Ada <ada@example.com>\r\nTo: bob@client.example\r\nSubject: Unfinished\r\nMessage-ID: <draft@example.com>\r\nDate: "+
		date+"\r\n\r\nHalf a thought\r\n"), imap.FlagDraft)
	srv.Append(t, "Archive", message("<old@client.example>", "", "", "Old", "Archived"))

	h := &hooked{got: map[string]mailsync.Inbound{}}
	s := r.syncer(t, 30*time.Second)
	s.OnInbound(h.hook)
	r.start(t, s)
	r.backfilled(t)

	require.Equal(t, 6, r.count(t, `SELECT count(*) FROM inbox_messages`))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<draft@example.com>' AND folder_role = 'drafts' AND folder = 'Drafts' AND outbound`))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM mailbox_folders WHERE name = 'Drafts' AND role = 'drafts'`))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<old@client.example>' AND folder_role = 'archive'`))

	var m struct {
		bcc, replyTo           []string
		modSeq                 int64
		gmailID, snippet, html string
		truncated, outbound    bool
		headers                map[string][]string
		conversation           string
	}
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT m.bcc_list, m.reply_to_list, m.mod_seq, m.gmail_id, m.snippet, m.body_html, m.body_truncated, m.outbound,
			m.auto_headers, t.conversation_key FROM inbox_messages m JOIN inbox_threads t ON t.id = m.thread_id WHERE m.message_id = '<rich@client.example>'`).
			Scan(&m.bcc, &m.replyTo, &m.modSeq, &m.gmailID, &m.snippet, &m.html, &m.truncated, &m.outbound, &m.headers, &m.conversation)
	}))
	require.Equal(t, []string{"dave@client.example", "erin@client.example"}, m.bcc)
	require.Equal(t, []string{"help@client.example"}, m.replyTo)
	require.EqualValues(t, 42, m.modSeq, "the MODSEQ the CONDSTORE server gave it")
	require.Empty(t, m.gmailID, "not a Gmail server")
	require.True(t, strings.HasPrefix(m.snippet, "I am out of the office until Monday Monday"), m.snippet)
	require.NotContains(t, m.snippet, "color")
	require.Equal(t, 200, len([]rune(m.snippet)))
	require.False(t, m.truncated)
	require.False(t, m.outbound)
	require.Equal(t, "<root@example.com>", m.conversation, "the first References entry")
	require.Equal(t, []string{"auto-replied"}, m.headers["Auto-Submitted"])
	require.Equal(t, []string{"auto_reply"}, m.headers["Precedence"])
	require.Equal(t, []string{"yes"}, m.headers["X-Autoreply"])
	require.Equal(t, []string{"<news.client.example>"}, m.headers["List-Id"])
	require.Equal(t, []string{strings.Repeat("m", 200)}, m.headers["X-Mailer"], "values clipped to 200 characters")
	require.Len(t, m.headers["X-Failed-Recipients"], 5, "at most five values")
	require.NotContains(t, m.headers, "X-Unrelated")

	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<big@client.example>' AND body_truncated AND length(body_text) <= 1048576`))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<sent@example.com>' AND outbound`))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<self@example.com>' AND outbound AND folder_role = 'inbox'`),
		"From the mailbox's own address, whatever the case")
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_threads t JOIN inbox_messages m ON m.thread_id = t.id
		WHERE m.message_id = '<old@client.example>' AND t.conversation_key = '<old@client.example>'`), "a root's own Message-ID")

	in, ok := h.told("<rich@client.example>")
	require.True(t, ok)
	require.Equal(t, "Bob Builder", in.FromName)
	require.Equal(t, "bob@client.example", in.FromEmail)
	require.Equal(t, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<rich@client.example>' AND thread_id = $1`, in.ThreadID), 1)
	require.Contains(t, in.HTML, "of the office")
	require.Contains(t, in.Text, "out")
	require.Equal(t, []string{"auto-replied"}, in.Headers["Auto-Submitted"])
	require.True(t, in.OutOfOffice)
	for _, id := range []string{"<big@client.example>", "<old@client.example>"} {
		_, ok := h.told(id)
		assert.True(t, ok, "%s came in", id)
	}
	for _, id := range []string{"<sent@example.com>", "<self@example.com>", "<draft@example.com>"} {
		_, ok := h.told(id)
		assert.False(t, ok, "%s was written by the mailbox: never told to the hook", id)
	}

	received := r.events(t, events.InboxEmailReceived)
	require.Len(t, received, 6, "one inbox.email_received per stored message, every folder")
	var draft *mailsync.EmailEvent
	for i := range received {
		if received[i].MessageID == "<draft@example.com>" {
			draft = &received[i]
		}
	}
	require.NotNil(t, draft)
	require.Equal(t, mailsync.EmailEvent{EmailID: r.messageID(t, "<draft@example.com>"), EmailAccountID: r.box, ThreadID: draft.ThreadID,
		Folder: "drafts", MessageID: "<draft@example.com>", From: "ada@example.com", Subject: "Unfinished", Seen: false}, *draft)
	require.NotEqual(t, uuid.Nil, draft.ThreadID)
	r.summariesAgree(t)
}

func TestMessagesExpungedOnTheServerAreDeletedWithTheirEvent(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.imap.Append(t, "INBOX", message("<keep@client.example>", "", "", "Keep", "x"))
	gone := r.imap.Append(t, "INBOX", message("<gone@client.example>", "", "", "Gone", "y"))
	r.imap.Append(t, "INBOX", message("<reply@client.example>", "<keep@client.example>", "<keep@client.example>", "Re: Keep", "z"))
	s := r.syncer(t, 30*time.Second)
	s.PollInterval = time.Second
	r.start(t, s)
	r.backfilled(t)
	require.Equal(t, 3, r.count(t, `SELECT count(*) FROM inbox_messages`))
	goneID := r.messageID(t, "<gone@client.example>")
	var goneThread uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT thread_id FROM inbox_messages WHERE id = $1`, goneID).Scan(&goneThread)
	}))

	peer := r.peer(t)
	require.NoError(t, peer.Store(imap.UIDSetNum(gone), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close())
	require.NoError(t, peer.UIDExpunge(imap.UIDSetNum(gone)).Close())
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1`, goneID) == 0
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, 2, r.count(t, `SELECT count(*) FROM inbox_messages`), "only the expunged message goes")
	require.Zero(t, r.count(t, `SELECT count(*) FROM inbox_threads WHERE id = $1`, goneThread), "its thread, left empty, goes with it")
	deleted := r.events(t, events.InboxEmailDeleted)
	require.Equal(t, []mailsync.EmailEvent{{EmailID: goneID, EmailAccountID: r.box, ThreadID: goneThread, Folder: "inbox",
		MessageID: "<gone@client.example>", From: "bob@client.example", Subject: "Gone"}}, deleted)
	r.summariesAgree(t)
}

func TestFlagChangesAndReadMarksRefreshSummariesAndRaiseUpdates(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	first := r.imap.Append(t, "INBOX", message("<a@client.example>", "", "", "A", "x"))
	r.imap.Append(t, "INBOX", message("<b@client.example>", "<a@client.example>", "<a@client.example>", "Re: A", "y"))
	s := r.syncer(t, 30*time.Second)
	s.PollInterval = time.Second
	r.start(t, s)
	r.backfilled(t)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_threads WHERE unread_count = 2`))
	r.summariesAgree(t)

	peer := r.peer(t)
	require.NoError(t, peer.Store(imap.UIDSetNum(first), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close())
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_threads WHERE unread_count = 1`) == 1
	}, 30*time.Second, 20*time.Millisecond)
	r.summariesAgree(t)
	a := r.messageID(t, "<a@client.example>")
	updated := r.events(t, events.InboxEmailUpdated)
	require.Len(t, updated, 1)
	require.Equal(t, a, updated[0].EmailID)
	require.True(t, updated[0].Seen)

	// Marked read here: the one message that changes gets its event; the one already read does not.
	b := r.messageID(t, "<b@client.example>")
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := mailsync.MarkSeen(ctx, tx, r.outbox.Jobs(), r.org, r.box, []uuid.UUID{a, b}, true)
		require.Equal(t, 1, n)
		return err
	}))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_threads WHERE unread_count = 0`))
	r.summariesAgree(t)
	updated = r.events(t, events.InboxEmailUpdated)
	require.Len(t, updated, 2)
	require.Equal(t, b, updated[1].EmailID)
	require.True(t, updated[1].Seen)
	require.Equal(t, "inbox", updated[1].Folder)
}

func TestAMessageWithoutTheFolderOfItsMoveIsRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t) // INBOX, Sent, Spam, Trash: no Archive
	r.imap.Append(t, "INBOX", message("<m@client.example>", "", "", "M", "x"))
	r.start(t, r.syncer(t, 30*time.Second))
	r.backfilled(t)
	id := r.messageID(t, "<m@client.example>")
	err := db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := mailsync.Move(ctx, tx, r.outbox.Jobs(), r.org, []uuid.UUID{id}, "archive")
		return err
	})
	var ae *apierror.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 409, ae.Status)
	require.Equal(t, "folder_unavailable", ae.Code)
	require.ErrorContains(t, err, fmt.Sprintf("Mailbox %s has no archive folder", user))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND folder_role = 'inbox' AND move_to = ''`, id))
}

func TestAComposedMessageAndItsAnswerLandInTheThreadItsSendWasGiven(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	thread, err := uuid.NewV7()
	require.NoError(t, err)
	task, err := uuid.NewV7()
	require.NoError(t, err)
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, to_email, message_id, thread_id)
			VALUES ($1, $2, 'direct', 'sent', $3, 'bob@client.example', '<composed@example.com>', $4)`, r.org, task, r.box, thread)
		return err
	}))
	// A plain SMTP server keeps no copy in Sent: the answer is the first the mailbox stores of the conversation.
	r.imap.Append(t, "INBOX", message("<answer@client.example>", "<composed@example.com>", "<composed@example.com>", "Re: Hello", "Sure."))
	r.imap.Append(t, "INBOX", message("<unrelated@client.example>", "", "", "Other", "x"))
	r.start(t, r.syncer(t, 30*time.Second))
	r.backfilled(t)
	var got, other uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT thread_id FROM inbox_messages WHERE message_id = '<answer@client.example>'`).Scan(&got); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT thread_id FROM inbox_messages WHERE message_id = '<unrelated@client.example>'`).Scan(&other)
	}))
	require.Equal(t, thread, got, "the answer joins the thread the composed message was given")
	require.NotEqual(t, thread, other, "an unrelated message starts its own thread")
	r.summariesAgree(t)
}
