package sending_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// TestAPooledSessionTheServerTimedOutIsReplacedWithoutFailingTheSend sends from a mailbox whose server ends
// sessions idle for a second, as production servers end idle ones: the pooled session it timed out answers the
// next MAIL with 421, and the message goes out on a fresh session in the same attempt instead of waiting a
// minute as a temporary failure.
func TestAPooledSessionTheServerTimedOutIsReplacedWithoutFailingTheSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t)
	srv := mailtest.NewSMTPServer(t, user, smtpPass, mailtest.IdleTimeout(time.Second))
	box, err := r.c.MailboxesCreate(ctx, &api.CreateEmailAccount{Provider: api.CreateEmailAccountProviderSMTPImap,
		Email: "ada+idle@example.com", Name: "Ada Lovelace", SMTP: api.NewOptMailService(service(t, srv.Addr, smtpPass)),
		Imap: r.imapService(t), MinWaitTime: api.NewOptInt(0)}, api.MailboxesCreateParams{})
	require.NoError(t, err)
	p := r.pipeline(t)
	send := func(to string) uuid.UUID {
		t.Helper()
		res, err := r.c.MailboxesSend(ctx, &api.MailboxSendRequest{To: []string{to}, Subject: "Hello",
			BodyPlain: api.NewOptString("Hi there."), SendMode: api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeSmart)},
			api.MailboxesSendParams{ID: box.ID})
		require.NoError(t, err)
		ok, isOK := res.(*api.MailboxesSendOK)
		require.True(t, isOK)
		wait, err := p.Attempt(ctx, r.outbox, sending.Args{OrganizationID: r.org, TaskID: ok.TaskID.Value, MailboxID: box.ID})
		require.NoError(t, err)
		require.Zero(t, wait, "no retry is needed for %s", to)
		return ok.TaskID.Value
	}

	logins := srv.Logins() // the connect-time check
	first := send("bob@example.com")
	time.Sleep(2500 * time.Millisecond) // the server ends the pooled session meanwhile
	second := send("carol@example.com")
	for _, id := range []uuid.UUID{first, second} {
		status, code, attempts := r.task(t, id)
		require.Equal(t, "sent", status, code)
		require.Equal(t, 1, attempts, "sent on its first attempt")
	}
	require.Equal(t, logins+2, srv.Logins(), "the timed-out session was replaced by a fresh login")
	require.Equal(t, 2, srv.Count())
}
