package engine_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/mail"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

// crashWorkerEnv, when set to a database URL, makes the test binary a worker process over that database
// instead of running tests: the River client with the campaign engine's periodic job and the send pipeline
// (its settle hook wired to the engine), as `outflow serve --role worker` composes them. crashCAEnv names the
// file of the test SMTP server's certificate authority and crashKeyEnv the hex secret key the mailboxes'
// credentials are sealed with. The crash test starts such processes and kills them.
const (
	crashWorkerEnv = "OUTFLOW_ENGINE_CRASH_WORKER"
	crashCAEnv     = "OUTFLOW_ENGINE_CRASH_CA_FILE"
	crashKeyEnv    = "OUTFLOW_ENGINE_CRASH_SECRET_KEY"
	// crashWorkerApp names the worker processes' database sessions.
	crashWorkerApp = "outflow-crash-worker"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(crashWorkerEnv); url != "" {
		err := runCrashWorker(url, os.Getenv(crashCAEnv), os.Getenv(crashKeyEnv))
		fmt.Fprintln(os.Stderr, "worker process:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// runCrashWorker works jobs until the process is killed or its test process is gone.
func runCrashWorker(url, caFile, keyHex string) error {
	ctx := context.Background()
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	pool, err := db.Open(ctx, url+sep+"application_name="+crashWorkerApp, 20)
	if err != nil {
		return err
	}
	key, err := hex.DecodeString(keyHex)
	if err != nil {
		return err
	}
	keyring, err := seal.NewKeyring(key)
	if err != nil {
		return err
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return errors.New("no certificate in " + caFile)
	}
	logger := slog.New(slog.DiscardHandler)
	eng := engine.New(pool, engine.Options{AuthGrace: 72 * time.Hour})
	pipe := sending.New(pool, &mailbox.Credentials{Keyring: keyring, Pool: pool},
		mailbox.Dialer{TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, AllowInsecure: true, Timeout: 5 * time.Second},
		logger, 72*time.Hour).WithSentFolderDelay(0) // the test server files its copy before it answers
	pipe.OnSettle(eng.Settle)
	client, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: logger, Dispatcher: events.NewDispatcher(pool),
		Idempotency: idempotency.NewStore(pool, logger), Sending: pipe, Engine: eng},
		jobs.Options{Work: true, MaxWorkers: 5, SoftStopTimeout: time.Second})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	// A test process that died without killing its workers (a timeout's panic runs no cleanup) leaves them
	// orphaned: they go with it.
	for parent := os.Getppid(); os.Getppid() == parent; {
		time.Sleep(time.Second)
	}
	return errors.New("the test process is gone")
}

// workerProcess is one running worker process of the crash test.
type workerProcess struct {
	cmd    *exec.Cmd
	exited chan error
	stderr *bytes.Buffer
}

// crashRig is the crash test's deployment: the API and the SMTP server in the test process, the workers in
// processes it starts and kills.
type crashRig struct {
	t       *testing.T
	owner   *pgxpool.Pool
	smtp    *mailtest.SMTPServer
	workEnv []string
	workers []*workerProcess
}

// start starts n worker processes.
func (r *crashRig) start(n int) {
	r.t.Helper()
	for range n {
		w := &workerProcess{cmd: exec.Command(os.Args[0], "-test.run=^$"), exited: make(chan error, 1), stderr: &bytes.Buffer{}}
		w.cmd.Env = append(os.Environ(), r.workEnv...)
		w.cmd.Stderr = w.stderr
		require.NoError(r.t, w.cmd.Start())
		go func() { w.exited <- w.cmd.Wait() }()
		r.t.Cleanup(func() { _ = w.cmd.Process.Kill() })
		r.workers = append(r.workers, w)
	}
}

// alive fails the test when a worker process has exited on its own.
func (r *crashRig) alive() {
	r.t.Helper()
	for _, w := range r.workers {
		select {
		case err := <-w.exited:
			r.t.Fatalf("a worker process exited by itself (%v): %s", err, w.stderr)
		default:
		}
	}
}

// killAll kills every worker process with SIGKILL, one after the other at random moments up to 300 ms apart
// (the others keep working meanwhile), and waits until all are gone.
func (r *crashRig) killAll(rng *rand.Rand) {
	r.t.Helper()
	for _, w := range r.workers {
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		require.NoError(r.t, w.cmd.Process.Signal(syscall.SIGKILL))
	}
	for _, w := range r.workers {
		require.Error(r.t, <-w.exited, "killed")
	}
	r.workers = nil
}

// recoveryPasses stands for the minutes a deployment takes to come back after its worker processes died: the
// jobs they left running are as old as River's rescuer needs them to be to take them for dead (past
// jobs.RescueStuckJobsAfter and every worker's timeout), and the dead leader's term has ended. The rescuer of
// the next leader then puts them back in their queues; this only saves the test from waiting minutes for it.
func (r *crashRig) recoveryPasses() {
	r.t.Helper()
	ctx := context.Background()
	// The killed processes' database sessions end too (a server notices a dead client when it next speaks to it,
	// or by keepalive): one of them may still be finishing a statement, holding row locks the update below takes.
	_, err := r.owner.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", crashWorkerApp)
	require.NoError(r.t, err)
	require.Eventually(r.t, func() bool {
		var n int
		require.NoError(r.t, r.owner.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", crashWorkerApp).Scan(&n))
		return n == 0
	}, time.Minute, 10*time.Millisecond, "the killed workers' database sessions end")
	_, err = r.owner.Exec(ctx, "UPDATE river_job SET attempted_at = attempted_at - interval '10 minutes' WHERE state = 'running'")
	require.NoError(r.t, err)
	_, err = r.owner.Exec(ctx, "UPDATE river_leader SET expires_at = now()")
	require.NoError(r.t, err)
}

// waitFor waits until the SMTP server has accepted n messages in all.
func (r *crashRig) waitFor(n int) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for r.smtp.Count() < n {
		r.alive()
		if time.Now().After(deadline) {
			r.t.Fatalf("the server has %d messages after a minute; waiting for %d", r.smtp.Count(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The crash test's deployment: mailboxes sending, worker processes and how often they are killed.
const crashMailboxes, crashProcesses, crashCount = 4, 2, 5

// TestKilledWorkerProcessesNeitherLoseNorDoubleACampaignsSends runs a 2,000-lead, two-step campaign (the
// follow-up due as soon as the first step is sent, a thread reply) from four mailboxes on one in-process SMTP
// server that files what it sends in the Sent folder, worked by two worker processes that are killed with
// SIGKILL five times at random points while they send, and started again each time. One of the crashes comes
// while the server holds back its answer to messages it has taken: their senders die not knowing whether they
// went. Afterwards the campaign has completed, every lead has exactly one send per step and each was sent, every
// message is at the server exactly once (none lost, none doubled), the sends left ambiguous were only those in
// flight (at most one per mailbox session of a killed process per kill), and each was settled from the Sent
// folder: found there as sent, or, absent, sent again.
func TestKilledWorkerProcessesNeitherLoseNorDoubleACampaignsSends(t *testing.T) {
	const leadCount, stepCount, mailboxes, processes, crashes = 2000, 2, crashMailboxes, crashProcesses, crashCount
	const total = leadCount * stepCount
	ctx := context.Background()
	caFile := mailtest.CAFile(t)
	env := apitest.New(t, apitest.MailPeers(caFile))
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	r := &crashRig{t: t, owner: env.DB.OwnerPool(t), smtp: mailtest.NewSMTPServer(t, user, smtpPass),
		workEnv: []string{crashWorkerEnv + "=" + env.DB.URL, crashCAEnv + "=" + caFile,
			crashKeyEnv + "=" + hex.EncodeToString(env.Config.SecretKey)}}
	imap := mailtest.NewIMAPServer(t, user, imapPass)
	// The server files what it sends in the Sent folder, as Gmail and Microsoft 365 do: an ambiguous send is
	// settled there.
	r.smtp.FileSentTo(imap)
	for i := range mailboxes {
		_, err := c.MailboxesCreate(ctx, &api.CreateEmailAccount{Provider: api.CreateEmailAccountProviderSMTPImap,
			Email: fmt.Sprintf("ada+%d@example.com", i), Name: "Ada Lovelace",
			SMTP:          api.NewOptMailService(apitest.MailService(t, r.smtp.Addr, user, smtpPass)),
			Imap:          api.NewOptMailService(apitest.MailService(t, imap.Addr, user, imapPass)),
			CampaignLimit: api.NewOptInt(total), MinWaitTime: api.NewOptInt(0)}, api.MailboxesCreateParams{})
		require.NoError(t, err)
	}
	camp, err := c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Crash", Timezone: api.NewOptString("UTC"),
		Days: api.NewOptInt(127), StartTime: api.NewOptString("00:00"), EndTime: api.NewOptString("24:00"),
		DailyLimit: api.NewOptInt(total), Steps: []api.CampaignStepCreate{
			{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("Hi {{.FirstName}}, a first note.")},
			{BodyPlain: api.NewOptString("Following up."), WaitAfter: api.NewOptInt(0)},
		}}, api.CampaignsCreateParams{})
	require.NoError(t, err)
	// The leads are written in one statement, in well under a second (creating 2,000 contacts through the API
	// takes many seconds); starting the campaign makes them due.
	_, err = r.owner.Exec(ctx, `WITH c AS (
		  INSERT INTO contacts (organization_id, id, email, first_name)
		  SELECT $1, gen_random_uuid(), format('lead%s@example.net', lpad(i::text, 4, '0')), 'Lead' FROM generate_series(0, $3 - 1) i
		  RETURNING organization_id, id)
		INSERT INTO campaign_leads (organization_id, campaign_id, contact_id) SELECT organization_id, $2, id FROM c`,
		boot.OrganizationID, camp.ID, leadCount)
	require.NoError(t, err)
	_, err = env.Owner(t, "acme").CampaignsStart(ctx, api.CampaignsStartParams{ID: camp.ID})
	require.NoError(t, err)

	// The crashes come when the server has taken a random number of messages, one in each of `crashes` equal
	// parts of the range from 5% to 85% of the sends, a random moment later; one of them (at random) while the
	// server holds back its answers.
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	stalled := rng.IntN(crashes)
	began := time.Now()
	for i := range crashes {
		lo, span := total*5/100+i*total*80/100/crashes, total*80/100/crashes
		at := lo + rng.IntN(span)
		r.start(processes)
		r.waitFor(at)
		if i == stalled {
			release := r.smtp.Stall()
			r.waitFor(r.smtp.Count() + 1)
			time.Sleep(50 * time.Millisecond)
			r.killAll(rng)
			release()
		} else {
			time.Sleep(time.Duration(rng.IntN(250)) * time.Millisecond)
			r.killAll(rng)
		}
		t.Logf("crash %d (seed %d): killed after %d messages at the server (stalled: %t), %s in", i+1, seed,
			r.smtp.Count(), i == stalled, time.Since(began).Round(time.Millisecond))
		r.recoveryPasses()
	}
	r.start(processes)
	var status string
	var open int
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r.alive()
		require.NoError(t, r.owner.QueryRow(ctx, `SELECT c.status, (SELECT count(*) FROM campaign_leads l
			WHERE l.campaign_id = c.id AND (l.state NOT IN ('completed', 'failed') OR l.task_id IS NOT NULL))
			FROM campaigns c WHERE c.id = $1`, camp.ID).Scan(&status, &open))
		if status == "completed" && open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the crashes the campaign is %s with %d leads open and %d messages at the server:\n%s", status, open,
				r.smtp.Count(), r.openLeads(camp.ID))
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.killAll(rng)
	t.Logf("the campaign completed %s after the first worker started", time.Since(began).Round(time.Millisecond))
	checkCrashOutcome(t, r, camp.ID, leadCount, stepCount)
}

// openLeads describes up to ten leads the campaign still waits for, with their sends and the sends' jobs.
func (r *crashRig) openLeads(campaignID uuid.UUID) string {
	rows, err := r.owner.Query(context.Background(), `SELECT c.email, l.state, l.step_position, l.due_at, l.wait_reason,
		  l.task_id, t.status, t.error_code, j.state, j.attempt, j.scheduled_at, j.errors
		FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
		LEFT JOIN send_tasks t ON t.organization_id = l.organization_id AND t.id = l.task_id
		LEFT JOIN river_job j ON j.kind = 'send_task' AND (j.args->>'task_id')::uuid = l.task_id
		WHERE l.campaign_id = $1 AND (l.state NOT IN ('completed', 'failed') OR l.task_id IS NOT NULL)
		ORDER BY c.email LIMIT 10`, campaignID)
	require.NoError(r.t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		require.NoError(r.t, err)
		out = append(out, fmt.Sprint(vals))
	}
	require.NoError(r.t, rows.Err())
	return strings.Join(out, "\n")
}

// crashTask is one of the campaign's send tasks as the crash test reads it.
type crashTask struct {
	id                                     uuid.UUID
	to, status, messageID, inReplyTo, code string
	position                               int
}

// checkCrashOutcome compares what the server received with the campaign's send tasks and leads.
func checkCrashOutcome(t *testing.T, r *crashRig, campaignID uuid.UUID, leadCount, stepCount int) {
	t.Helper()
	ctx := context.Background()
	atServer := map[string]int{} // Message-ID -> copies received
	byRecipient := map[string]int{}
	for _, m := range r.smtp.Messages() {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		require.NoError(t, err)
		atServer[msg.Header.Get("Message-Id")]++
		for _, to := range m.To {
			byRecipient[to]++
		}
	}
	rows, err := r.owner.Query(ctx, `SELECT t.id, t.to_email, t.status, t.message_id, t.in_reply_to, t.outcome_check, s.position
		FROM send_tasks t JOIN campaign_steps s ON s.organization_id = t.organization_id AND s.id = t.step_id
		WHERE t.campaign_id = $1 ORDER BY t.to_email, s.position`, campaignID)
	require.NoError(t, err)
	tasks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (crashTask, error) {
		var ct crashTask
		err := row.Scan(&ct.id, &ct.to, &ct.status, &ct.messageID, &ct.inReplyTo, &ct.code, &ct.position)
		return ct, err
	})
	require.NoError(t, err)

	byLead := map[string][]crashTask{}
	ours := map[string]bool{}
	var ambiguous []crashTask
	for _, ct := range tasks {
		byLead[ct.to] = append(byLead[ct.to], ct)
		ours[ct.messageID] = true
		require.Equal(t, sending.StatusSent, ct.status, "task %s to %s ended %s (check %q); every send is sent in the end", ct.id, ct.to, ct.status, ct.code)
		require.Equal(t, 1, atServer[ct.messageID], "a send recorded as sent is at the server exactly once: %s to %s", ct.messageID, ct.to)
		if ct.code != "" { // its outcome check: the send was ambiguous once
			ambiguous = append(ambiguous, ct)
			require.Contains(t, []string{"found_in_sent", "resent"}, ct.code, "an ambiguous send is settled from the Sent folder")
		}
	}
	for id, n := range atServer {
		require.True(t, ours[id], "every message at the server is one of the campaign's sends: %s", id)
		require.Equal(t, 1, n, "no message is at the server twice: %s", id)
	}

	require.Len(t, byLead, leadCount, "every lead was sent its steps")
	delivered := 0
	for to, ts := range byLead {
		require.Len(t, ts, stepCount, "one send per step for %s", to)
		expect := 0
		for i, ct := range ts {
			require.Equal(t, i, ct.position, "%s got each step once", to)
			expect += atServer[ct.messageID]
		}
		for i := 1; i < len(ts); i++ {
			require.Equal(t, ts[i-1].messageID, ts[i].inReplyTo, "each follow-up to %s answers its own previous message", to)
		}
		require.Equal(t, expect, byRecipient[to], "the server holds %s's sends and nothing else for it", to)
		delivered += expect
	}

	rows, err = r.owner.Query(ctx, `SELECT c.email, l.state, l.sent, l.task_id FROM campaign_leads l
		JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id WHERE l.campaign_id = $1`, campaignID)
	require.NoError(t, err)
	type leadState struct {
		email, state string
		sent         int
		task         *uuid.UUID
	}
	leads, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (leadState, error) {
		var l leadState
		err := row.Scan(&l.email, &l.state, &l.sent, &l.task)
		return l, err
	})
	require.NoError(t, err)
	require.Len(t, leads, leadCount)
	for _, l := range leads {
		require.Equal(t, "completed", l.state, "%s finished the sequence", l.email)
		require.Nil(t, l.task, "%s waits on no send", l.email)
		sent := 0
		for _, ct := range byLead[l.email] {
			if ct.status == sending.StatusSent {
				sent++
			}
		}
		require.Equal(t, sent, l.sent, "%s counts the sends recorded as sent", l.email)
	}

	found := 0
	lines := make([]string, len(ambiguous))
	for i, ct := range ambiguous {
		lines[i] = fmt.Sprintf("%s step %d to %s: %s", ct.id, ct.position+1, ct.to, ct.code)
		if ct.code == "found_in_sent" {
			found++
		}
	}
	t.Logf("%d messages at the server for %d sends; %d were ambiguous (%d found in Sent, the rest sent again):\n%s", delivered,
		len(tasks), len(ambiguous), found, strings.Join(lines, "\n"))
	require.Equal(t, len(tasks), delivered, "no lead missed a step")
	require.LessOrEqual(t, len(ambiguous), crashCount*crashProcesses*crashMailboxes,
		"only the messages in flight at a kill are ambiguous: one per mailbox session of each killed process")
	require.Positive(t, found, "the crash while the server held its answers left sends that went out unrecorded, found in Sent")
}

// TestTwoLeadsEndingAtOnceCompleteTheCampaign records the last sends of a campaign's last two leads in two
// transactions at once, as two workers do: while the first is uncommitted, each sees the other's lead still
// waiting on its send, so the one that commits second must be the one that completes the campaign. (The crash
// test found campaigns left active with every lead finished.)
func TestTwoLeadsEndingAtOnceCompleteTheCampaign(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, []api.CampaignStepCreate{{Subject: api.NewOptString("Hello"), BodyPlain: api.NewOptString("A single note.")}},
		"a@example.net", "b@example.net")
	require.Equal(t, 2, r.run(t).Sends)
	tasks := map[string]dbq.SendTask{}
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM send_tasks WHERE campaign_id = $1`, id)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		for _, task := range ids {
			row, err := dbq.New().SendTaskGetForUpdate(ctx, tx, dbq.SendTaskGetForUpdateParams{OrganizationID: r.org, ID: task})
			if err != nil {
				return err
			}
			tasks[row.ToEmail] = row
		}
		return nil
	})
	require.Len(t, tasks, 2)
	settle := func(email string, settled chan<- struct{}, commit <-chan struct{}) error {
		return db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			if err := r.eng.Settle(ctx, tx, events.NewOutbox(r.jobs), sending.Settled{Task: tasks[email], Status: sending.StatusSent}); err != nil {
				return err
			}
			close(settled)
			<-commit
			return nil
		})
	}
	firstSettled, firstCommit, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { firstDone <- settle("a@example.net", firstSettled, firstCommit) }()
	<-firstSettled
	secondSettled, atOnce, secondDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	close(atOnce)
	go func() { secondDone <- settle("b@example.net", secondSettled, atOnce) }()
	time.Sleep(200 * time.Millisecond) // the second settles (or waits for the first) meanwhile
	close(firstCommit)
	require.NoError(t, <-firstDone)
	require.NoError(t, <-secondDone)

	got, err := r.c.CampaignsGet(t.Context(), api.CampaignsGetParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, "completed", string(got.Status), "every lead finished the sequence")
	require.Equal(t, "completed", r.lead(t, id, "a@example.net").State)
	require.Equal(t, "completed", r.lead(t, id, "b@example.net").State)
}
