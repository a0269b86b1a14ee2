package sending_test

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// raw is a plain message from Bob to the rig's mailbox.
func raw(id, inReplyTo, refs, subject string) []byte {
	h := fmt.Sprintf("From: Bob <bob@client.example>\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: %s\r\n",
		user, subject, id, time.Now().Format(time.RFC1123Z))
	if inReplyTo != "" {
		h += "In-Reply-To: " + inReplyTo + "\r\nReferences: " + refs + "\r\n"
	}
	return []byte(h + "Content-Type: text/plain; charset=utf-8\r\n\r\nHello\r\n")
}

// syncedThread waits until the workers have stored every one of messageIDs in one thread, and returns it.
func (r *rig) syncedThread(t *testing.T, messageIDs ...string) uuid.UUID {
	t.Helper()
	var thread uuid.UUID
	require.Eventually(t, func() bool {
		var threads, stored int
		require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(DISTINCT thread_id), count(*) FROM inbox_messages
				WHERE mailbox_id = $1 AND message_id = ANY($2)`, r.box.ID, messageIDs).Scan(&threads, &stored)
		}))
		return threads == 1 && stored == len(messageIDs)
	}, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT thread_id FROM inbox_messages WHERE mailbox_id = $1 AND message_id = $2`,
			r.box.ID, messageIDs[0]).Scan(&thread)
	}))
	return thread
}

// otherMailbox connects a second mailbox, with its own in-process peers, through c.
func otherMailbox(t *testing.T, c *api.Client, email string) uuid.UUID {
	t.Helper()
	smtpSrv := mailtest.NewSMTPServer(t, email, smtpPass)
	imapSrv := mailtest.NewIMAPServer(t, email, imapPass)
	box, err := c.MailboxesCreate(context.Background(), &api.CreateEmailAccount{
		Provider: api.CreateEmailAccountProviderSMTPImap, Email: email, Name: "Other",
		SMTP: api.NewOptMailService(apitest.MailService(t, smtpSrv.Addr, email, smtpPass)),
		Imap: api.NewOptMailService(apitest.MailService(t, imapSrv.Addr, email, imapPass)),
	}, api.MailboxesCreateParams{})
	require.NoError(t, err)
	return box.ID
}

// sentWithSubject waits for the message with subject to reach the rig's SMTP server and parses it.
func (r *rig) sentWithSubject(t *testing.T, subject string) *mail.Message {
	t.Helper()
	var msg *mail.Message
	require.Eventually(t, func() bool {
		for _, got := range r.smtp.Messages() {
			m, err := mail.ReadMessage(strings.NewReader(string(got.Data)))
			require.NoError(t, err)
			if m.Header.Get("Subject") == subject {
				msg = m
				return true
			}
		}
		return false
	}, 15*time.Second, 20*time.Millisecond)
	return msg
}

func TestADirectSendNamingASyncedThreadRepliesToItsNewestMessage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	// Bob asks, Ada answers (her copy in Sent), Bob follows up: one conversation once synced.
	const question, answer, followUp = "<q@client.example>", "<a@example.com>", "<f@client.example>"
	r.imap.Append(t, "INBOX", raw(question, "", "", "Pricing"))
	r.imap.Append(t, "Sent", raw(answer, question, question, "Re: Pricing"))
	r.imap.Append(t, "INBOX", raw(followUp, answer, question+" "+answer, "Re: Pricing"))
	r.env.StartWorkers(t)
	thread := r.syncedThread(t, question, answer, followUp)

	// The reply answers the follow-up and continues the conversation's References.
	r.send(t, "bob@client.example", func(q *api.MailboxSendRequest) {
		q.Subject = "Re: Pricing (thread)"
		q.ThreadID = api.NewOptString(thread.String())
	})
	msg := r.sentWithSubject(t, "Re: Pricing (thread)")
	require.Equal(t, followUp, msg.Header.Get("In-Reply-To"))
	require.Equal(t, question+" "+answer+" "+followUp, msg.Header.Get("References"))

	// in_reply_to beside thread_id: the named message is the one answered, added to the thread's chain once.
	r.send(t, "bob@client.example", func(q *api.MailboxSendRequest) {
		q.Subject = "Re: Pricing (both)"
		q.ThreadID = api.NewOptString(thread.String())
		q.InReplyTo = []string{answer, "<elsewhere@client.example>"}
	})
	msg = r.sentWithSubject(t, "Re: Pricing (both)")
	require.Equal(t, "<elsewhere@client.example>", msg.Header.Get("In-Reply-To"))
	require.Equal(t, question+" "+answer+" "+followUp+" <elsewhere@client.example>", msg.Header.Get("References"))
}

func TestADirectSendRefusesAThreadItCannotReplyIn(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	r.imap.Append(t, "INBOX", raw("<q@client.example>", "", "", "Pricing"))
	r.env.StartWorkers(t)
	thread := r.syncedThread(t, "<q@client.example>").String()
	refused := func(c *api.Client, box uuid.UUID, threadID string, status int, code string) {
		t.Helper()
		_, err := c.MailboxesSend(ctx, &api.MailboxSendRequest{To: []string{"bob@client.example"}, Subject: "Re: Pricing",
			BodyPlain: api.NewOptString("x"), ThreadID: api.NewOptString(threadID)}, api.MailboxesSendParams{ID: box})
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se, code)
		require.Equal(t, status, se.StatusCode, se.Response.Message)
		require.Equal(t, code, se.Response.Code)
	}

	// Unknown and malformed ids are not found.
	refused(r.c, r.box.ID, uuid.NewString(), 404, "thread_not_found")
	refused(r.c, r.box.ID, "t1", 404, "thread_not_found")

	// Another mailbox of the organization may not reply in it: the error names the thread's mailbox.
	second := otherMailbox(t, r.c, "cy@example.com")
	refused(r.c, second, thread, 400, "thread_of_another_mailbox")

	// Another organization does not see it at all.
	boot := r.env.Bootstrap(t, "globex")
	globex := r.env.Client(t, boot.APIKey)
	refused(globex, otherMailbox(t, globex, "dee@example.com"), thread, 404, "thread_not_found")

	// A thread whose messages carry no Message-ID has nothing to answer.
	r.exec(t, `UPDATE inbox_messages SET message_id = '' WHERE mailbox_id = $1`, r.box.ID)
	refused(r.c, r.box.ID, thread, 400, "thread_not_replyable")
	require.Empty(t, r.smtp.Messages(), "nothing was queued")
}
