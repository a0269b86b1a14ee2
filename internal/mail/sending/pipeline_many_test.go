package sending_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestEnqueueManyWritesEveryTaskInOrderAndTheWorkersSendThem(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	var tasks []dbq.SendTask
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		m, err := dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: r.org, ID: r.box.ID})
		if err != nil {
			return err
		}
		tasks, err = sending.EnqueueMany(ctx, tx, r.jobs, []sending.Outgoing{
			{From: &m, Message: sending.Message{Kind: sending.KindCampaign, To: []string{"a@example.com"}, Subject: "One", Text: "Hello"}},
			{From: &m, Message: sending.Message{Kind: sending.KindCampaign, To: []string{"b@example.com"}, Subject: "Two", Text: "Hello"}},
			{From: &m, Message: sending.Message{Kind: sending.KindCampaign, To: []string{"c@example.com"}, Subject: "Later", Text: "Hello",
				Mode: "scheduled", NotBefore: later}},
		})
		return err
	}))
	require.Len(t, tasks, 3)
	for i, want := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		require.Equal(t, want, tasks[i].ToEmail, "tasks come back in the order of the messages")
		require.Equal(t, "<"+tasks[i].ID.String()+"@example.com>", tasks[i].MessageID)
	}
	require.WithinDuration(t, later, tasks[2].NotBefore, time.Millisecond)

	r.env.StartWorkers(t)
	require.Eventually(t, func() bool { return len(r.smtp.Messages()) == 2 }, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		a, _, _ := r.task(t, tasks[0].ID)
		b, _, _ := r.task(t, tasks[1].ID)
		return a == "sent" && b == "sent"
	}, 5*time.Second, 20*time.Millisecond)
	status, _, _ := r.task(t, tasks[2].ID)
	require.Equal(t, "queued", status, "a scheduled task waits for its time")

	err := db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		m, err := dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: r.org, ID: r.box.ID})
		if err != nil {
			return err
		}
		_, err = sending.EnqueueMany(ctx, tx, r.jobs, []sending.Outgoing{
			{From: &m, Message: sending.Message{Kind: sending.KindDirect, To: []string{"d@example.com"}}},
			{From: &m, Message: sending.Message{Kind: sending.KindDirect}}})
		return err
	})
	require.ErrorContains(t, err, "needs a recipient", "one message without a recipient refuses the whole batch")
	var n int
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM send_tasks WHERE mailbox_id = $1`, r.box.ID).Scan(&n)
	}))
	require.Equal(t, 3, n, "the refused batch wrote no task")
}

func TestEnqueueManyUsesTheIDAMessageBringsAndMakesOneOtherwise(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	chosen := uuid.Must(uuid.NewV7())
	var tasks []dbq.SendTask
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		m, err := dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: r.org, ID: r.box.ID})
		if err != nil {
			return err
		}
		tasks, err = sending.EnqueueMany(ctx, tx, r.jobs, []sending.Outgoing{
			{From: &m, Message: sending.Message{ID: chosen, Kind: sending.KindCampaign, To: []string{"a@example.com"}, Subject: "Chosen", Text: "Hello"}},
			{From: &m, Message: sending.Message{Kind: sending.KindCampaign, To: []string{"b@example.com"}, Subject: "Made", Text: "Hello"}},
		})
		return err
	}))
	require.Len(t, tasks, 2)
	require.Equal(t, chosen, tasks[0].ID, "the task takes the id the message brought")
	require.Equal(t, "<"+chosen.String()+"@example.com>", tasks[0].MessageID, "and its Message-ID is derived from it")
	require.NotEqual(t, uuid.Nil, tasks[1].ID, "a message without an id gets one")
	require.NotEqual(t, chosen, tasks[1].ID)
	require.Equal(t, uuid.Version(7), tasks[1].ID.Version())
	status, _, _ := r.task(t, chosen)
	require.Equal(t, "queued", status, "the stored task has the chosen id")
}

// Attempts that arrive together on one mailbox are claimed together (one claim takes every task waiting for
// the mailbox's turn); the cap and the gap hold across such a claim exactly as across single ones.
func TestAttemptsArrivingTogetherKeepTheCapAndTheGap(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	p := r.pipeline(t)
	_, err := r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{CampaignLimit: api.NewOptInt(3), MinWaitTime: api.NewOptInt(0)},
		api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)
	attemptAll := func(ids []uuid.UUID) []time.Duration {
		waits := make([]time.Duration, len(ids))
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { waits[i], errs[i] = p.Attempt(ctx, r.outbox, r.args(id)) })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		return waits
	}

	var capped []uuid.UUID
	for i := range 8 {
		capped = append(capped, r.enqueue(t, sending.KindCampaign, fmt.Sprintf("lead%d@example.com", i)))
	}
	reply := r.enqueue(t, sending.KindReply, "bob@example.com")
	waits := attemptAll(append(capped, reply))
	sent, held := 0, 0
	for i, id := range capped {
		status, code, _ := r.task(t, id)
		switch status {
		case "sent":
			sent++
			require.Zero(t, waits[i])
		case "queued":
			held++
			require.Equal(t, "daily_cap_reached", code)
			require.Greater(t, waits[i], time.Duration(0), "waits for the next day")
		default:
			t.Fatalf("task %d is %s", i, status)
		}
	}
	require.Equal(t, 3, sent, "the day's cap")
	require.Equal(t, 5, held)
	status, _, _ := r.task(t, reply)
	require.Equal(t, "sent", status, "a reply is not capped")
	require.Len(t, r.smtp.Messages(), 4)
	day, total := r.day(t)
	require.Equal(t, 3, day)
	require.Equal(t, 4, total)

	// The gap: of three capped sends claimed together, one goes and the others wait it out. They are made to
	// meet in one claim: the mailbox's row is held while a reply's claim waits for it, so they queue behind.
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{CampaignLimit: api.NewOptInt(100), MinWaitTime: api.NewOptInt(600)},
		api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)
	r.exec(t, `UPDATE mailboxes SET last_capped_send_at = NULL WHERE id = $1`, r.box.ID)
	reply = r.enqueue(t, sending.KindReply, "cy@example.com")
	var gapped []uuid.UUID
	for i := range 3 {
		gapped = append(gapped, r.enqueue(t, sending.KindDirect, fmt.Sprintf("gap%d@example.com", i)))
	}
	locked, release, held2 := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	releaseRow := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseRow) // a failed assertion must not leave the row held
	go func() {
		held2 <- db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT 1 FROM mailboxes WHERE id = $1 FOR UPDATE`, r.box.ID); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	first := make(chan error, 1)
	go func() { _, err := p.Attempt(ctx, r.outbox, r.args(reply)); first <- err }()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, r.env.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&n))
		return n > 0
	}, 5*time.Second, 10*time.Millisecond, "the reply's claim waits for the mailbox's row")
	var together []time.Duration
	done := make(chan struct{})
	go func() { together = attemptAll(gapped); close(done) }()
	time.Sleep(300 * time.Millisecond) // the three queue behind the reply's claim
	releaseRow()
	require.NoError(t, <-held2)
	require.NoError(t, <-first)
	<-done
	status, _, _ = r.task(t, reply)
	require.Equal(t, "sent", status)
	sent = 0
	for i, id := range gapped {
		status, code, _ := r.task(t, id)
		if status == "sent" {
			sent++
			continue
		}
		require.Equal(t, "queued", status)
		require.Equal(t, "waiting_for_gap", code)
		require.InDelta(t, 600, together[i].Seconds(), 5)
	}
	require.Equal(t, 1, sent)
	require.Len(t, r.smtp.Messages(), 6)
}
