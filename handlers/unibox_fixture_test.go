package handlers_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// inboxKit writes an organization's mailboxes, threads and messages as the sync stores them, and refreshes
// the threads' summaries as every writer of messages must.
type inboxKit struct {
	env  *apitest.Env
	org  uuid.UUID
	user uuid.UUID
	key  string
	c    *api.Client
	uid  int64
}

func newInboxKit(t *testing.T, opts ...apitest.Option) *inboxKit {
	env := apitest.New(t, opts...)
	boot := env.Bootstrap(t, "acme")
	return &inboxKit{env: env, org: boot.OrganizationID, user: boot.UserID, key: boot.APIKey, c: env.Client(t, boot.APIKey)}
}

func (k *inboxKit) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	orgExec(t, k.env, k.org, sql, args...)
}

func (k *inboxKit) mailbox(t *testing.T, email string, tags ...uuid.UUID) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if tags == nil {
		tags = []uuid.UUID{}
	}
	k.exec(t, `INSERT INTO mailboxes (organization_id, id, email, name, provider, tags) VALUES ($1, $2, $3, $3, 'smtp_imap', $4)`, k.org, id, email, tags)
	return id
}

func (k *inboxKit) label(t *testing.T, kind, title string, position int) uuid.UUID {
	t.Helper()
	id := uuid.New()
	k.exec(t, `INSERT INTO labels (organization_id, id, kind, title, color, position) VALUES ($1, $2, $3, $4, '#123456', $5)`, k.org, id, kind, title, position)
	return id
}

func (k *inboxKit) thread(t *testing.T, mailbox uuid.UUID, conversation string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	k.exec(t, `INSERT INTO inbox_threads (organization_id, id, mailbox_id, last_message_at, conversation_key) VALUES ($1, $2, $3, now(), $4)`,
		k.org, id, mailbox, conversation)
	return id
}

// msg is a stored message's fields a test chooses.
type msg struct {
	folder             string
	fromEmail, name    string
	subject            string
	at                 time.Time
	seen, outbound     bool
	messageID, replyTo string
	intent             string
}

func (k *inboxKit) message(t *testing.T, mailbox, thread uuid.UUID, m msg) uuid.UUID {
	t.Helper()
	id := uuid.New()
	k.uid++
	evidence := "[]"
	if m.intent != "" {
		evidence = `[{"kind":"phrase","name":"` + m.intent + `","value":"sounds good"}]`
	}
	k.exec(t, `INSERT INTO inbox_messages (organization_id, id, mailbox_id, thread_id, folder, folder_role, uid_validity, uid,
  message_id, in_reply_to, from_email, from_name, to_list, subject, snippet, body_text, seen, flags, outbound, received_at, sent_at,
  intent, intent_confidence, intent_evidence, body_truncated)
VALUES ($1, $2, $3, $4, $5, $5, 1, $6, $7, $8, $9, $10, '{someone@acme.example}', $11, 'snip ' || $11, 'body of ' || $11, $12,
  CASE WHEN $12 THEN ARRAY['\Seen'] ELSE '{}'::text[] END, $13, $14, $14, $15, CASE WHEN $15 = '' THEN 0 ELSE 0.75 END, $16::jsonb, $15 = 'question')`,
		k.org, id, mailbox, thread, m.folder, k.uid, m.messageID, m.replyTo, m.fromEmail, m.name, m.subject, m.seen, m.outbound, m.at,
		m.intent, evidence)
	k.exec(t, `SELECT inbox_thread_refresh($1, $2)`, k.org, []uuid.UUID{thread})
	return id
}

// threadIDs is the order of a page's threads.
func threadIDs(page *api.UniboxThreadList) []string {
	out := []string{}
	for _, r := range page.Data {
		out = append(out, r.ThreadID)
	}
	return out
}

func ids(threads ...uuid.UUID) []string {
	out := []string{}
	for _, th := range threads {
		out = append(out, th.String())
	}
	return out
}

// listFixture is an organization whose threads differ along every list filter. base is a Monday.
type listFixture struct {
	*inboxKit
	base                                  time.Time
	alpha, beta                           uuid.UUID
	hot, cold, unusedCategory, tag, noTag uuid.UUID
	t1, t2, t3, t4, t5, t6, t7            uuid.UUID
	m1, m3                                uuid.UUID
}

func newListFixture(t *testing.T, opts ...apitest.Option) *listFixture {
	f := &listFixture{inboxKit: newInboxKit(t, opts...), base: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	f.tag, f.noTag = f.label(t, "tag", "Sales", 0), f.label(t, "tag", "Unused tag", 1)
	f.hot, f.cold, f.unusedCategory = f.label(t, "category", "Hot", 0), f.label(t, "category", "Cold", 1), f.label(t, "category", "Unused", 2)
	f.alpha, f.beta = f.mailbox(t, "alpha@acme.example", f.tag), f.mailbox(t, "beta@acme.example")
	h := func(d time.Duration) time.Time { return f.base.Add(d) }
	f.t1 = f.thread(t, f.alpha, "<t1@x>")
	f.m1 = f.message(t, f.alpha, f.t1, msg{folder: "inbox", fromEmail: "ada@engines.example", name: "Ada Lovelace", subject: "Pricing question",
		at: h(10 * time.Hour), intent: "positive"})
	f.t2 = f.thread(t, f.alpha, "<t2@x>")
	f.message(t, f.alpha, f.t2, msg{folder: "inbox", fromEmail: "bob@builders.example", subject: "Weekly_report 100%", at: h(24 * time.Hour), seen: true})
	f.m3 = f.message(t, f.alpha, f.t2, msg{folder: "sent", fromEmail: "alpha@acme.example", subject: "Re: Weekly_report 100%", at: h(25 * time.Hour), seen: true, outbound: true})
	f.t3 = f.thread(t, f.beta, "")
	f.message(t, f.beta, f.t3, msg{folder: "spam", fromEmail: "spammer@junk.example", subject: "Win", at: h(48 * time.Hour)})
	f.t4 = f.thread(t, f.beta, "")
	f.message(t, f.beta, f.t4, msg{folder: "archive", fromEmail: "cy@cyborg.example", subject: "Archived note", at: h(49 * time.Hour), seen: true})
	f.t5 = f.thread(t, f.beta, "")
	f.message(t, f.beta, f.t5, msg{folder: "trash", fromEmail: "dora@explore.example", subject: "Deleted", at: h(72 * time.Hour)})
	f.t6 = f.thread(t, f.alpha, "")
	f.message(t, f.alpha, f.t6, msg{folder: "inbox", fromEmail: "eve@example.org", subject: "Snoozed one", at: h(73 * time.Hour), seen: true})
	f.t7 = f.thread(t, f.alpha, "")
	f.message(t, f.alpha, f.t7, msg{folder: "inbox", fromEmail: "fay@example.org", subject: "Snooze over", at: h(74 * time.Hour)})
	f.exec(t, `INSERT INTO inbox_thread_labels (organization_id, thread_id, label_id) VALUES ($1, $2, $3), ($1, $4, $5)`, f.org, f.t1, f.hot, f.t4, f.cold)
	// The caller snoozed t6 until long after and t7 until a time already past (it is back in the list).
	f.exec(t, `INSERT INTO inbox_snoozes (organization_id, id, user_id, thread_id, snoozed_until) VALUES ($1, $2, $3, $4, $5), ($1, $6, $3, $7, $8)`,
		f.org, uuid.New(), f.user, f.t6, time.Now().AddDate(1, 0, 0), uuid.New(), f.t7, h(74*time.Hour+30*time.Minute))
	return f
}

// rawGet sends a GET the SDK would refuse to build and answers its status and body.
func rawGet(t *testing.T, env *apitest.Env, path, token string) (int, string) {
	t.Helper()
	resp := env.Do(t, http.MethodGet, path, token, nil, nil)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// conversationFixture is one conversation held by two mailboxes (alpha's thread and beta's copy of it) and
// another thread of beta's.
type conversationFixture struct {
	*inboxKit
	alpha, beta                  uuid.UUID
	tA, tB, tC                   uuid.UUID
	mA1, mA2, mB1, mB2, mC1, mA3 uuid.UUID
}

func newConversationFixture(t *testing.T, opts ...apitest.Option) *conversationFixture {
	f := &conversationFixture{inboxKit: newInboxKit(t, opts...)}
	at := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	f.alpha, f.beta = f.mailbox(t, "alpha@acme.example"), f.mailbox(t, "beta@acme.example")
	f.tA, f.tB, f.tC = f.thread(t, f.alpha, "<root@x>"), f.thread(t, f.beta, "<root@x>"), f.thread(t, f.beta, "<other@x>")
	f.mA1 = f.message(t, f.alpha, f.tA, msg{folder: "inbox", fromEmail: "ada@engines.example", subject: "Hello", at: at, messageID: "<root@x>", intent: "question"})
	f.mB1 = f.message(t, f.beta, f.tB, msg{folder: "inbox", fromEmail: "ada@engines.example", subject: "Hello", at: at, messageID: "<root@x>"})
	f.mA2 = f.message(t, f.alpha, f.tA, msg{folder: "sent", fromEmail: "alpha@acme.example", subject: "Re: Hello", at: at.Add(time.Hour), seen: true, outbound: true,
		messageID: "<r1@acme>", replyTo: "<root@x>"})
	f.mB2 = f.message(t, f.beta, f.tB, msg{folder: "inbox", fromEmail: "ada@engines.example", subject: "Re: Re: Hello", at: at.Add(2 * time.Hour),
		messageID: "<r2@x>", replyTo: "<r1@acme>"})
	f.mA3 = f.message(t, f.alpha, f.tA, msg{folder: "trash", fromEmail: "ada@engines.example", subject: "No id", at: at.Add(3 * time.Hour)})
	f.mC1 = f.message(t, f.beta, f.tC, msg{folder: "inbox", fromEmail: "cy@cyborg.example", subject: "Other", at: at, messageID: "<other@x>"})
	return f
}

func messageIDs(page *api.UniboxMessageList) []uuid.UUID {
	out := []uuid.UUID{}
	for _, m := range page.Data {
		out = append(out, m.ID)
	}
	return out
}

// seenJobs counts the queued read/unread relays.
func seenJobs(t *testing.T, env *apitest.Env) int64 {
	t.Helper()
	var n int64
	require.NoError(t, env.DB.OwnerPool(t).QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'mailbox_seen'`).Scan(&n))
	return n
}
