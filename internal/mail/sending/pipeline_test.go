package sending_test

import (
	"context"
	"log/slog"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

const (
	user     = "ada@example.com"
	smtpPass = "smtp-secret-1"
	imapPass = "imap-secret-2"
)

// rig is an organization with one connected mailbox whose SMTP server runs in process, and a pipeline that
// tests drive attempt by attempt (no workers run unless a test starts them).
type rig struct {
	env    *apitest.Env
	org    uuid.UUID
	c      *api.Client
	smtp   *mailtest.SMTPServer
	imap   *mailtest.IMAPServer
	box    *api.Mailbox
	outbox *events.Outbox
	jobs   events.Inserter
}

func newRig(t testing.TB) *rig {
	t.Helper()
	env := apitest.New(t, apitest.MailPeers(mailtest.CAFile(t)))
	boot := env.Bootstrap(t, "acme")
	// The owner's session: a person's direct sends go out at once, where an API key's wait for an approval
	// unless an agent policy allows them.
	r := &rig{env: env, org: boot.OrganizationID, c: env.Client(t, env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken),
		smtp: mailtest.NewSMTPServer(t, user, smtpPass)}
	r.imap = mailtest.NewIMAPServer(t, user, imapPass)
	box, err := r.c.MailboxesCreate(context.Background(), &api.CreateEmailAccount{
		Provider: api.CreateEmailAccountProviderSMTPImap, Email: user, Name: "Ada Lovelace",
		SMTP: api.NewOptMailService(service(t, r.smtp.Addr, smtpPass)), Imap: r.imapService(t),
		MinWaitTime: api.NewOptInt(0),
	}, api.MailboxesCreateParams{})
	require.NoError(t, err)
	r.box = box
	inserter, err := jobs.NewClient(jobs.Deps{Pool: env.DB.Pool, Logger: discard()}, jobs.Options{})
	require.NoError(t, err)
	r.outbox, r.jobs = events.NewOutbox(inserter), inserter
	return r
}

func service(t testing.TB, addr, pass string) api.MailService {
	return apitest.MailService(t, addr, user, pass)
}

func (r *rig) imapService(t testing.TB) api.OptMailService {
	return api.NewOptMailService(service(t, r.imap.Addr, imapPass))
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// serverOf is a connect body's server as the dialer takes it.
func serverOf(s api.MailService) mailbox.Server {
	return mailbox.Server{Host: s.Host, Port: s.Port, Username: s.Username, Password: s.Password, Security: mailbox.Security(s.Security.Value)}
}

// sent counts a mailbox's sent tasks.
func (r *rig) sent(t testing.TB, box uuid.UUID) int {
	t.Helper()
	var n int
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM send_tasks WHERE mailbox_id = $1 AND status = 'sent'`, box).Scan(&n)
	}))
	return n
}

// pipeline is one worker process's pipeline over the rig's database.
func (r *rig) pipeline(t testing.TB) *sending.Pipeline {
	t.Helper()
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	return sending.New(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool}, mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second},
		discard(), 72*time.Hour)
}

// send queues a direct send for the mailbox's next gap (now, for a fresh mailbox) and returns the task id.
func (r *rig) send(t *testing.T, to string, mutate ...func(*api.MailboxSendRequest)) uuid.UUID {
	t.Helper()
	req := &api.MailboxSendRequest{To: []string{to}, Subject: "Hello " + to, BodyPlain: api.NewOptString("Hi there,\nhow are you?"),
		SendMode: api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeSmart)}
	for _, f := range mutate {
		f(req)
	}
	res, err := r.c.MailboxesSend(context.Background(), req, api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	ok, isOK := res.(*api.MailboxesSendOK)
	require.True(t, isOK)
	require.Equal(t, api.MailboxSendResultResultExecuted, ok.Result)
	return ok.TaskID.Value
}

func (r *rig) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}))
}

// task reads a task's status, error code and attempts.
func (r *rig) task(t *testing.T, id uuid.UUID) (status, code string, attempts int) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT status, error_code, attempts FROM send_tasks WHERE id = $1`, id).Scan(&status, &code, &attempts)
	}))
	return status, code, attempts
}

func (r *rig) day(t *testing.T) (capped, total int) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT coalesce(sum(capped), 0), coalesce(sum(total), 0) FROM mailbox_send_days WHERE mailbox_id = $1`, r.box.ID).Scan(&capped, &total)
		return err
	}))
	return capped, total
}

func (r *rig) args(id uuid.UUID) sending.Args {
	return sending.Args{OrganizationID: r.org, TaskID: id, MailboxID: r.box.ID}
}

func (r *rig) attempt(t *testing.T, p *sending.Pipeline, id uuid.UUID) time.Duration {
	t.Helper()
	wait, err := p.Attempt(context.Background(), r.outbox, r.args(id))
	require.NoError(t, err)
	return wait
}

func TestDirectSendArrivesThroughTheWorkers(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	_, err := r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{SignatureSync: api.NewOptBool(true), SignaturePlain: api.NewOptString("Ada, Analytical Engines"),
		ReplyTo: api.NewOptString("team@example.com")}, api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)
	r.env.StartWorkers(t)

	id := r.send(t, "Bob <Bob@Example.com>", func(req *api.MailboxSendRequest) {
		req.Cc = []string{"cy@example.com"}
		req.Bcc = []string{"audit@example.com"}
		req.BodyHTML = api.NewOptString("<p>Hi there</p>")
		req.InReplyTo = []string{"<first@example.net>", "second@example.net"}
	})
	require.Eventually(t, func() bool { return len(r.smtp.Messages()) == 1 }, 10*time.Second, 20*time.Millisecond)
	got := r.smtp.Messages()[0]
	require.Equal(t, user, got.From)
	require.ElementsMatch(t, []string{"bob@example.com", "cy@example.com", "audit@example.com"}, got.To)
	msg, err := mail.ReadMessage(strings.NewReader(string(got.Data)))
	require.NoError(t, err)
	require.Equal(t, "<"+id.String()+"@example.com>", msg.Header.Get("Message-Id"), "deterministic per task")
	require.Equal(t, "Hello Bob <Bob@Example.com>", msg.Header.Get("Subject"))
	require.Contains(t, msg.Header.Get("From"), "Ada Lovelace")
	require.Equal(t, "<bob@example.com>", msg.Header.Get("To"))
	require.Equal(t, "<cy@example.com>", msg.Header.Get("Cc"))
	require.Empty(t, msg.Header.Get("Bcc"), "bcc recipients are never in the headers")
	require.Equal(t, "<team@example.com>", msg.Header.Get("Reply-To"))
	require.Equal(t, "<second@example.net>", msg.Header.Get("In-Reply-To"))
	require.Equal(t, "<first@example.net> <second@example.net>", msg.Header.Get("References"))
	require.Contains(t, msg.Header.Get("Content-Type"), "multipart/alternative")
	require.Contains(t, string(got.Data), "Ada, Analytical Engines", "signature_sync appends the signature")
	require.Eventually(t, func() bool { s, _, _ := r.task(t, id); return s == "sent" }, 5*time.Second, 20*time.Millisecond)
}

func TestDailyCapAndGapHoldSendsBack(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	p := r.pipeline(t)
	_, err := r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{CampaignLimit: api.NewOptInt(2), Timezone: api.NewOptString("Pacific/Auckland")},
		api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)

	a, b, c := r.send(t, "a@example.com"), r.send(t, "b@example.com"), r.send(t, "c@example.com")
	require.Zero(t, r.attempt(t, p, a))
	require.Zero(t, r.attempt(t, p, b))
	wait := r.attempt(t, p, c)
	require.Len(t, r.smtp.Messages(), 2, "the third send waits for the next day")
	status, code, attempts := r.task(t, c)
	require.Equal(t, "queued", status)
	require.Equal(t, "daily_cap_reached", code)
	require.Zero(t, attempts, "waiting is not an attempt")
	auckland, err := time.LoadLocation("Pacific/Auckland")
	require.NoError(t, err)
	now := time.Now().In(auckland)
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, auckland)
	require.InDelta(t, time.Until(midnight).Seconds(), wait.Seconds(), 5, "until midnight in the mailbox's zone")
	capped, total := r.day(t)
	require.Equal(t, 2, capped)
	require.Equal(t, 2, total)
	require.Equal(t, wait, r.attempt(t, p, c).Round(wait), "still waiting: not due yet")

	// The gap: with ten minutes between sends, the next waits out the rest of it.
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{CampaignLimit: api.NewOptInt(100), MinWaitTime: api.NewOptInt(600)},
		api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)
	r.exec(t, `UPDATE send_tasks SET not_before = now() WHERE id = $1`, c)
	wait = r.attempt(t, p, c)
	require.InDelta(t, 600, wait.Seconds(), 5)
	_, code, _ = r.task(t, c)
	require.Equal(t, "waiting_for_gap", code)
	require.Len(t, r.smtp.Messages(), 2)
	// A smart send is scheduled into that gap.
	res, err := r.c.MailboxesSend(ctx, &api.MailboxSendRequest{To: []string{"d@example.com"}, Subject: "Hi", BodyPlain: api.NewOptString("x"),
		SendMode: api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeSmart)}, api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(10*time.Minute), res.(*api.MailboxesSendOK).ScheduledAt.Value, 10*time.Second)
}

func TestTransientFailuresRetryAndPermanentOnesFail(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	p := r.pipeline(t)
	var mu sync.Mutex
	deferred := 0
	r.smtp.OnRcpt(func(to string) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasPrefix(to, "busy") && deferred == 0:
			deferred++
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
		case strings.HasPrefix(to, "nobody"):
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
		}
		return nil
	})

	logins := r.smtp.Logins() // the connect-time check
	busy := r.send(t, "busy@example.com")
	wait := r.attempt(t, p, busy)
	require.Equal(t, time.Minute, wait, "first retry after a minute")
	status, code, attempts := r.task(t, busy)
	require.Equal(t, "queued", status)
	require.Equal(t, "temporary_failure", code)
	require.Equal(t, 1, attempts)
	capped, total := r.day(t)
	require.Zero(t, capped, "a send that did not go out gives its place back")
	require.Zero(t, total)
	r.exec(t, `UPDATE send_tasks SET not_before = now() WHERE id = $1`, busy)
	require.Zero(t, r.attempt(t, p, busy))
	status, _, attempts = r.task(t, busy)
	require.Equal(t, "sent", status)
	require.Equal(t, 2, attempts)

	nobody := r.send(t, "nobody@example.com")
	require.Zero(t, r.attempt(t, p, nobody))
	status, code, _ = r.task(t, nobody)
	require.Equal(t, "failed", status)
	require.Equal(t, "recipient_rejected", code, "no retries for a rejected recipient")
	var rejection string
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT error_message FROM send_tasks WHERE id = $1`, nobody).Scan(&rejection)
	}))
	require.Equal(t, "RCPT: 550 5.1.1 No such user", rejection, "the reply as the server wrote it, codes included")
	require.Equal(t, logins+1, r.smtp.Logins(), "one pooled session carried every attempt")

	// A stored password the server no longer takes fails the task and logs the account condition.
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	r.exec(t, `UPDATE mailboxes SET smtp_password = $2, updated_at = now() WHERE id = $1`, r.box.ID,
		mailbox.SealPassword(keyring, r.org, r.box.ID, mailbox.ServiceSMTP, "rotated-elsewhere"))
	locked := r.send(t, "carol@example.com")
	require.Zero(t, r.attempt(t, p, locked))
	status, code, _ = r.task(t, locked)
	require.Equal(t, "failed", status)
	require.Equal(t, "mailbox_auth_failed", code)
	d, err := r.c.MailboxesGet(context.Background(), api.MailboxesGetParams{ID: r.box.ID})
	require.NoError(t, err)
	require.NotEmpty(t, d.RecentErrors)
	require.Equal(t, "EMAIL_AUTH_ERROR", d.RecentErrors[0].Code)
	require.True(t, d.RecentErrors[0].ActionRequired)
}

func TestACrashBetweenHandOverAndResultIsAmbiguousNotADuplicate(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	release := r.smtp.Stall()
	t.Cleanup(release)
	id := r.send(t, "bob@example.com")

	// The first worker hands the message over and hangs waiting for the server's answer...
	first := r.pipeline(t)
	done := make(chan error, 1)
	go func() {
		_, err := first.Attempt(context.Background(), r.outbox, r.args(id))
		done <- err
	}()
	require.Eventually(t, func() bool { return len(r.smtp.Messages()) == 1 }, 5*time.Second, 10*time.Millisecond)
	// ...and is taken for dead: the job runs again in another process.
	second := r.pipeline(t)
	require.Zero(t, r.attempt(t, second, id))
	status, code, _ := r.task(t, id)
	require.Equal(t, "ambiguous", status)
	require.Equal(t, "outcome_unknown", code)

	// The first worker's late answer changes nothing, and nothing was sent twice.
	release()
	require.NoError(t, <-done)
	status, _, _ = r.task(t, id)
	require.Equal(t, "ambiguous", status)
	require.Len(t, r.smtp.Messages(), 1)
	require.Zero(t, r.attempt(t, second, id), "a settled task is left alone")
	require.Len(t, r.smtp.Messages(), 1)
}

// An attempt waiting for its mailbox's session (held by a message whose server has not answered) ends when its
// job's context does: River's timeout reaches it, so the job never stays running behind a stalled session.
func TestAnAttemptQueuedBehindAStalledSessionEndsWithItsJob(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	release := r.smtp.Stall()
	t.Cleanup(release)
	first, second := r.send(t, "bob@example.com"), r.send(t, "carol@example.com")
	p := r.pipeline(t)
	done := make(chan error, 1)
	go func() {
		_, err := p.Attempt(context.Background(), r.outbox, r.args(first))
		done <- err
	}()
	require.Eventually(t, func() bool { return len(r.smtp.Messages()) == 1 }, 5*time.Second, 10*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := p.Attempt(ctx, r.outbox, r.args(second))
		ended <- err
	}()
	select {
	case err := <-ended:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the attempt behind the stalled session outlived its job")
	}
	status, code, _ := r.task(t, second)
	require.Equal(t, "queued", status, "nothing was handed over, so it waits for its next attempt")
	require.Equal(t, "canceled", code)

	release()
	require.NoError(t, <-done)
	status, _, _ = r.task(t, first)
	require.Equal(t, "sent", status)
	require.Len(t, r.smtp.Messages(), 1, "the second message never reached the server")
}

func TestAConnectionCutAfterHandOverIsAmbiguous(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	release := r.smtp.Stall()
	t.Cleanup(release)
	id := r.send(t, "bob@example.com")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.pipeline(t).Attempt(ctx, r.outbox, r.args(id))
		done <- err
	}()
	require.Eventually(t, func() bool { return len(r.smtp.Messages()) == 1 }, 5*time.Second, 10*time.Millisecond)
	cancel() // the process shuts down mid-answer: the connection is cut
	require.NoError(t, <-done)
	status, code, _ := r.task(t, id)
	require.Equal(t, "ambiguous", status)
	require.Equal(t, "outcome_unknown", code)
	_, total := r.day(t)
	require.Equal(t, 1, total, "an ambiguous send keeps its place in the day: it may have gone")
}

func TestDirectSendValidates(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	base := func() *api.MailboxSendRequest {
		return &api.MailboxSendRequest{To: []string{"bob@example.com"}, Subject: "Hi", BodyPlain: api.NewOptString("x")}
	}
	for code, mutate := range map[string]func(*api.MailboxSendRequest){
		"invalid_to":          func(q *api.MailboxSendRequest) { q.To = []string{} },
		"invalid_cc":          func(q *api.MailboxSendRequest) { q.Cc = []string{"not-an-address"} },
		"invalid_subject":     func(q *api.MailboxSendRequest) { q.Subject = "a\r\nBcc: x@example.com" },
		"body_required":       func(q *api.MailboxSendRequest) { q.BodyPlain = api.OptString{} },
		"invalid_in_reply_to": func(q *api.MailboxSendRequest) { q.InReplyTo = []string{"no at sign"} },
		"invalid_scheduled_at": func(q *api.MailboxSendRequest) {
			q.SendMode = api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeScheduled)
		},
	} {
		q := base()
		mutate(q)
		_, err := r.c.MailboxesSend(ctx, q, api.MailboxesSendParams{ID: r.box.ID})
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se, code)
		require.Equal(t, 400, se.StatusCode, code)
		require.Equal(t, code, se.Response.Code)
	}
	past := base()
	past.SendMode = api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeScheduled)
	past.ScheduledAt = api.NewOptDateTime(time.Now().Add(-time.Hour))
	_, err := r.c.MailboxesSend(ctx, past, api.MailboxesSendParams{ID: r.box.ID})
	require.ErrorContains(t, err, "invalid_scheduled_at")

	// Suppressed recipients are refused at once, and a suppression added after the send was queued stops it.
	queued := r.send(t, "late@blocked.example")
	_, err = r.c.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: []api.AddSuppressionsRequestEntriesItem{
		{Value: "bob@example.com"}, {Value: "blocked.example"}}})
	require.NoError(t, err)
	_, err = r.c.MailboxesSend(ctx, base(), api.MailboxesSendParams{ID: r.box.ID})
	require.ErrorContains(t, err, "recipient_suppressed")
	require.Zero(t, r.attempt(t, r.pipeline(t), queued))
	status, code, _ := r.task(t, queued)
	require.Equal(t, "failed", status)
	require.Equal(t, "recipient_suppressed", code)
	require.Empty(t, r.smtp.Messages())
	base = func() *api.MailboxSendRequest {
		return &api.MailboxSendRequest{To: []string{"dora@example.com"}, Subject: "Hi", BodyPlain: api.NewOptString("x")}
	}
	later := base()
	later.SendMode = api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeScheduled)
	at := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	later.ScheduledAt = api.NewOptDateTime(at)
	res, err := r.c.MailboxesSend(ctx, later, api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	require.True(t, at.Equal(res.(*api.MailboxesSendOK).ScheduledAt.Value))
	instant, err := r.c.MailboxesSend(ctx, base(), api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(30*time.Second), instant.(*api.MailboxesSendOK).ScheduledAt.Value, 5*time.Second, "the undo window")
}

// enqueue writes a task of any kind straight through the pipeline's Enqueue, as the campaign scheduler and the
// warmup engine do.
func (r *rig) enqueue(t *testing.T, kind, to string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		m, err := dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: r.org, ID: r.box.ID})
		if err != nil {
			return err
		}
		task, err := sending.Enqueue(ctx, tx, r.jobs, m, sending.Message{Kind: kind, To: []string{to}, Subject: "Step 1", Text: "Hello"})
		id = task.ID
		return err
	}))
	return id
}

func TestAFailingDomainPastItsGraceStopsColdAndWarmupSends(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	p := r.pipeline(t)
	r.exec(t, `UPDATE mailboxes SET auth_state = 'failing', auth_failing_since = now() - interval '1 day' WHERE id = $1`, r.box.ID)
	within := r.enqueue(t, sending.KindCampaign, "a@example.com")
	require.Zero(t, r.attempt(t, p, within))
	status, _, _ := r.task(t, within)
	require.Equal(t, "sent", status, "within the grace period campaigns still send")

	r.exec(t, `UPDATE mailboxes SET auth_failing_since = now() - interval '4 days' WHERE id = $1`, r.box.ID)
	for _, kind := range []string{sending.KindCampaign, sending.KindWarmup} {
		id := r.enqueue(t, kind, "b@example.com")
		require.Zero(t, r.attempt(t, p, id))
		status, code, _ := r.task(t, id)
		require.Equal(t, "failed", status, kind)
		require.Equal(t, "domain_auth_failing", code, kind)
	}
	reply := r.enqueue(t, sending.KindReply, "c@example.com")
	require.Zero(t, r.attempt(t, p, reply))
	status, _, _ = r.task(t, reply)
	require.Equal(t, "sent", status, "replies to people who wrote are not cold mail")
	require.Len(t, r.smtp.Messages(), 2)
}
