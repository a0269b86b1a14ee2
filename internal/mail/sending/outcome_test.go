package sending_test

import (
	"bytes"
	"context"
	"net/mail"
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// filed is one message of the test server's Sent folder, read over IMAP.
type filed struct {
	messageID string
	seen      bool
}

// sentFolder reads the mailbox's Sent folder as a mail client would.
func (r *rig) sentFolder(t *testing.T) []filed {
	t.Helper()
	c, err := mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}.IMAP(context.Background(),
		mailbox.Server{Host: "127.0.0.1", Port: port(t, r.imap.Addr), Username: user, Password: imapPass, Security: mailbox.SecurityStartTLS}, nil)
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	sel, err := c.Select("Sent", nil).Wait()
	require.NoError(t, err)
	if sel.NumMessages == 0 {
		return nil
	}
	msgs, err := c.Fetch(imap.SeqSetNum(seqs(sel.NumMessages)...), &imap.FetchOptions{Flags: true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
	require.NoError(t, err)
	out := make([]filed, len(msgs))
	for i, m := range msgs {
		var raw []byte
		for _, b := range m.BodySection {
			raw = b.Bytes
		}
		parsed, err := mail.ReadMessage(bytes.NewReader(raw))
		require.NoError(t, err)
		out[i] = filed{messageID: parsed.Header.Get("Message-Id"), seen: slices.Contains(m.Flags, imap.FlagSeen)}
	}
	return out
}

func seqs(n uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i + 1)
	}
	return out
}

func port(t *testing.T, addr string) int {
	t.Helper()
	return apitest.MailService(t, addr, user, imapPass).Port
}

// messageID reads a task's Message-ID and outcome check.
func (r *rig) outcome(t *testing.T, id uuid.UUID) (messageID, check, copyState string) {
	t.Helper()
	r.query(t, `SELECT message_id, outcome_check, sent_copy FROM send_tasks WHERE id = $1`, []any{id}, &messageID, &check, &copyState)
	return messageID, check, copyState
}

func (r *rig) habit(t *testing.T) string {
	t.Helper()
	var habit string
	r.query(t, `SELECT sent_copies FROM mailboxes WHERE id = $1`, []any{r.box.ID}, &habit)
	return habit
}

// ambiguousAtServer makes a send ambiguous the way a crash after its hand-over does: the first worker hands
// the message over and hangs for the server's answer; the job runs again elsewhere and finds it in flight.
// accepted says whether the server took the message (it answers once released) or never got it.
func (r *rig) ambiguousAtServer(t *testing.T, to string, accepted bool) uuid.UUID {
	t.Helper()
	id := r.send(t, to)
	if !accepted {
		// The worker died after writing its hand-over and before the server had the message.
		_, _, attempts := r.task(t, id)
		r.exec(t, `UPDATE send_tasks SET status = 'sending', attempts = $2 + 1, claimed_at = now(), handed_over_at = now() WHERE id = $1`, id, attempts)
		require.Zero(t, r.attempt(t, r.pipeline(t), id))
	} else {
		release := r.smtp.Stall()
		t.Cleanup(release)
		done := make(chan error, 1)
		before := r.smtp.Count()
		go func() {
			_, err := r.pipeline(t).Attempt(context.Background(), r.outbox, r.args(id))
			done <- err
		}()
		require.Eventually(t, func() bool { return r.smtp.Count() == before+1 }, 5*time.Second, 10*time.Millisecond)
		require.Zero(t, r.attempt(t, r.pipeline(t), id))
		release()
		require.NoError(t, <-done)
	}
	status, code, _ := r.task(t, id)
	require.Equal(t, "ambiguous", status)
	require.Equal(t, "outcome_unknown", code)
	_, check, _ := r.outcome(t, id)
	require.Equal(t, "checking", check, "an ambiguous send is queued for its Sent folder check")
	return id
}

// requireStatus checks an API error's status and, when given, its code.
func requireStatus(t *testing.T, err error, status int, code string) {
	t.Helper()
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Equal(t, status, se.StatusCode)
	if code != "" {
		require.Equal(t, code, se.Response.Code)
	}
}

// query reads one row of the rig's organization into dst.
func (r *rig) query(t *testing.T, sql string, args []any, dst ...any) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(dst...)
	}))
}

func (r *rig) check(t *testing.T, id uuid.UUID, last bool) error {
	t.Helper()
	return r.pipeline(t).CheckOutcome(context.Background(), r.outbox, sending.CheckArgs{OrganizationID: r.org, TaskID: id}, last)
}

func TestATaskClaimedButNeverHandedOverIsSentAgainNotLeftAmbiguous(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	id := r.send(t, "bob@example.com")
	// A worker claimed it (its day charged) and died before the hand-over: the state it leaves behind.
	r.exec(t, `UPDATE send_tasks SET status = 'sending', attempts = 1, claimed_at = now(), counted_day = current_date WHERE id = $1`, id)
	r.exec(t, `INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total) VALUES ($1, $2, current_date, 1, 1)`, r.org, r.box.ID)

	require.Zero(t, r.attempt(t, r.pipeline(t), id))
	status, _, attempts := r.task(t, id)
	require.Equal(t, "sent", status, "nothing had left, so the next attempt sends it")
	require.Equal(t, 2, attempts)
	require.Equal(t, 1, r.smtp.Count())
	capped, total := r.day(t)
	require.Equal(t, 1, capped, "the dead claim's place in the day was given back before the new one was charged")
	require.Equal(t, 1, total)
}

func TestATaskWhoseServerAcceptedItIsRecordedSentByTheNextAttemptNotLeftAmbiguous(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	id := r.send(t, "bob@example.com")
	// A worker handed it over, the server accepted it and the acceptance was written (by the next message's
	// hand-over), and the worker died before writing the rest of the result: the state it leaves behind.
	r.exec(t, `UPDATE send_tasks SET status = 'sending', attempts = 1, claimed_at = now(), counted_day = current_date,
		handed_over_at = now() - interval '2 minutes', accepted_at = now() - interval '1 minute' WHERE id = $1`, id)
	r.exec(t, `INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total) VALUES ($1, $2, current_date, 1, 1)`, r.org, r.box.ID)

	require.Zero(t, r.attempt(t, r.pipeline(t), id))
	status, code, attempts := r.task(t, id)
	require.Equal(t, "sent", status, "the server took it, so it is sent")
	require.Empty(t, code)
	require.Equal(t, 1, attempts, "not claimed again")
	require.Zero(t, r.smtp.Count(), "nothing sent again")
	var late bool
	r.query(t, `SELECT sent_at = accepted_at FROM send_tasks WHERE id = $1`, []any{id}, &late)
	require.True(t, late, "sent when the server accepted it")
	capped, total := r.day(t)
	require.Equal(t, 1, capped, "its place in the day stays charged")
	require.Equal(t, 1, total)
}

func TestAnAmbiguousSendFoundInTheSentFolderIsSent(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.smtp.FileSentTo(r.imap)
	id := r.ambiguousAtServer(t, "bob@example.com", true)

	require.NoError(t, r.check(t, id, false))
	status, _, _ := r.task(t, id)
	require.Equal(t, "sent", status)
	_, check, _ := r.outcome(t, id)
	require.Equal(t, "found_in_sent", check)
	require.Equal(t, sending.SentCopiesServer, r.habit(t), "a message found in Sent teaches that the server files its own copies")
	require.Equal(t, 1, r.smtp.Count(), "nothing was sent twice")
	require.NoError(t, r.check(t, id, false), "a settled send is left alone")
	require.Equal(t, 1, r.smtp.Count())
}

func TestAnAmbiguousSendAbsentFromAServerThatFilesSentMailIsSentAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.smtp.FileSentTo(r.imap)
	r.exec(t, `UPDATE mailboxes SET sent_copies = 'server' WHERE id = $1`, r.box.ID)
	id := r.ambiguousAtServer(t, "bob@example.com", false)

	require.NoError(t, r.check(t, id, false))
	status, _, _ := r.task(t, id)
	require.Equal(t, "queued", status, "absent from a server that files everything it sends: it never left")
	_, check, _ := r.outcome(t, id)
	require.Equal(t, "resent", check)
	require.Zero(t, r.attempt(t, r.pipeline(t), id))
	status, _, _ = r.task(t, id)
	require.Equal(t, "sent", status)
	require.Equal(t, 1, r.smtp.Count(), "the recipient has it once")
	require.Len(t, r.sentFolder(t), 1)
}

func TestAnAmbiguousSendTheSentFolderCannotSettleWaitsForAPersonsDecision(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	// A server that files nothing: absent from Sent says nothing about whether it left.
	resend := r.ambiguousAtServer(t, "bob@example.com", true)
	skip := r.ambiguousAtServer(t, "carol@example.com", false)
	unreachable := r.ambiguousAtServer(t, "dan@example.com", false)
	require.NoError(t, r.check(t, resend, false))
	require.NoError(t, r.check(t, skip, false))
	r.exec(t, `UPDATE mailboxes SET imap_host = 'imap.invalid' WHERE id = $1`, r.box.ID)
	require.Error(t, r.check(t, unreachable, false), "a Sent folder out of reach is tried again")
	require.NoError(t, r.check(t, unreachable, true), "the last try leaves it to a person")
	for _, id := range []uuid.UUID{resend, skip, unreachable} {
		_, check, _ := r.outcome(t, id)
		require.Equal(t, "needs_decision", check)
	}

	r.exec(t, `UPDATE mailboxes SET imap_host = '127.0.0.1' WHERE id = $1`, r.box.ID)
	require.Equal(t, 1, r.openErrors(t, "EMAIL_SEND_UNDECIDED"), "the mailbox's error log tells a person, once")

	list, err := r.c.MailboxesListUnsettledSends(ctx, api.MailboxesListUnsettledSendsParams{ID: r.box.ID, Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	require.True(t, list.Pagination.HasMore)
	require.Equal(t, resend, list.Data[0].ID, "oldest first")
	require.Equal(t, "bob@example.com", list.Data[0].ToEmail)
	require.True(t, list.Data[0].HandedOverAt.Set)
	next, err := r.c.MailboxesListUnsettledSends(ctx, api.MailboxesListUnsettledSendsParams{ID: r.box.ID,
		Cursor: api.NewOptUUID(uuid.MustParse(list.Pagination.NextCursor.Value))})
	require.NoError(t, err)
	require.Len(t, next.Data, 1)
	require.Equal(t, unreachable, next.Data[0].ID)

	key := r.env.Bootstrap(t, "acme").APIKey
	_, err = r.env.Client(t, key).MailboxesDecideUnsettledSend(ctx, &api.MailboxesDecideUnsettledSendReq{Decision: "resend"},
		api.MailboxesDecideUnsettledSendParams{ID: r.box.ID, SendId: resend})
	requireStatus(t, err, 403, "")

	before := r.smtp.Count()
	got, err := r.c.MailboxesDecideUnsettledSend(ctx, &api.MailboxesDecideUnsettledSendReq{Decision: "resend"},
		api.MailboxesDecideUnsettledSendParams{ID: r.box.ID, SendId: resend})
	require.NoError(t, err)
	require.Equal(t, api.UnsettledSendOutcomeCheckResent, got.OutcomeCheck)
	require.Equal(t, api.UnsettledSendStatusQueued, got.Status)
	require.True(t, got.DecidedAt.Set)
	require.Zero(t, r.attempt(t, r.pipeline(t), resend))
	require.Equal(t, before+1, r.smtp.Count(), "resent once")

	got, err = r.c.MailboxesDecideUnsettledSend(ctx, &api.MailboxesDecideUnsettledSendReq{Decision: "skip"},
		api.MailboxesDecideUnsettledSendParams{ID: r.box.ID, SendId: skip})
	require.NoError(t, err)
	require.Equal(t, api.UnsettledSendOutcomeCheckSkipped, got.OutcomeCheck)
	require.Equal(t, api.UnsettledSendStatusAmbiguous, got.Status)
	_, err = r.c.MailboxesDecideUnsettledSend(ctx, &api.MailboxesDecideUnsettledSendReq{Decision: "resend"},
		api.MailboxesDecideUnsettledSendParams{ID: r.box.ID, SendId: skip})
	requireStatus(t, err, 409, "send_already_settled")
	_, err = r.c.MailboxesDecideUnsettledSend(ctx, &api.MailboxesDecideUnsettledSendReq{Decision: "skip"},
		api.MailboxesDecideUnsettledSendParams{ID: r.box.ID, SendId: uuid.New()})
	requireStatus(t, err, 404, "")

	logs, err := r.c.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{EntityType: api.NewOptString("email")})
	require.NoError(t, err)
	var events []string
	for _, e := range logs.Data {
		events = append(events, string(e.Metadata.Value["event"]))
	}
	require.Contains(t, events, `"send_task.resent"`)
	require.Contains(t, events, `"send_task.skipped"`)

	list, err = r.c.MailboxesListUnsettledSends(ctx, api.MailboxesListUnsettledSendsParams{ID: r.box.ID})
	require.NoError(t, err)
	require.Len(t, list.Data, 1, "decided sends leave the list")
	require.Equal(t, 1, r.openErrors(t, "EMAIL_SEND_UNDECIDED"), "open while a send waits")
	_, err = r.c.MailboxesDecideUnsettledSend(ctx, &api.MailboxesDecideUnsettledSendReq{Decision: "skip"},
		api.MailboxesDecideUnsettledSendParams{ID: r.box.ID, SendId: unreachable})
	require.NoError(t, err)
	require.Zero(t, r.openErrors(t, "EMAIL_SEND_UNDECIDED"), "the last decision closes it")
}

// openErrors counts the mailbox's unresolved error-log entries of a code.
func (r *rig) openErrors(t *testing.T, code string) int {
	t.Helper()
	var n int
	r.query(t, `SELECT count(*) FROM mailbox_errors WHERE mailbox_id = $1 AND code = $2 AND resolved_at IS NULL`,
		[]any{r.box.ID, code}, &n)
	return n
}

func TestSentMailIsFiledInTheSentFolderOnceWhereTheServerFilesNone(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	p := r.pipeline(t)
	id := r.send(t, "bob@example.com")
	require.Zero(t, r.attempt(t, p, id))
	messageID, _, copyState := r.outcome(t, id)
	require.Equal(t, "pending", copyState, "a server whose habit is unknown may owe a copy")

	copyArgs := sending.CopyArgs{OrganizationID: r.org, TaskID: id}
	require.NoError(t, p.FileCopy(context.Background(), r.outbox, copyArgs))
	require.Equal(t, []filed{{messageID: messageID, seen: true}}, r.sentFolder(t), "the copy is there, read")
	require.Equal(t, sending.SentCopiesAppend, r.habit(t))
	_, _, copyState = r.outcome(t, id)
	require.Equal(t, "filed", copyState)

	// A retry after the APPEND went through but before it was recorded finds the copy and adds none.
	r.exec(t, `UPDATE send_tasks SET sent_copy = 'pending' WHERE id = $1`, id)
	require.NoError(t, p.FileCopy(context.Background(), r.outbox, copyArgs))
	require.Len(t, r.sentFolder(t), 1, "once per message")

	warmup := r.enqueue(t, sending.KindWarmup, "peer@example.org")
	require.Zero(t, r.attempt(t, p, warmup))
	_, _, copyState = r.outcome(t, warmup)
	require.Empty(t, copyState, "warmup mail is never filed")
	require.Len(t, r.sentFolder(t), 1)
}

func TestAServerThatFilesItsOwnSentMailIsLearnedAndGetsNoCopies(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.smtp.FileSentTo(r.imap)
	p := r.pipeline(t)
	first := r.send(t, "bob@example.com")
	require.Zero(t, r.attempt(t, p, first))
	require.NoError(t, p.FileCopy(context.Background(), r.outbox, sending.CopyArgs{OrganizationID: r.org, TaskID: first}))
	require.Len(t, r.sentFolder(t), 1, "the server's own copy, no second one")
	require.Equal(t, sending.SentCopiesServer, r.habit(t))

	second := r.send(t, "carol@example.com")
	require.Zero(t, r.attempt(t, p, second))
	_, _, copyState := r.outcome(t, second)
	require.Empty(t, copyState, "no copy is owed once the server is known to file its own")
	var jobs int
	r.query(t, `SELECT count(*) FROM river_job WHERE kind = 'send_sent_copy' AND args->>'task_id' = $1`, []any{second.String()}, &jobs)
	require.Zero(t, jobs)
}
