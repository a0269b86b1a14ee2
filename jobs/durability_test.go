package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/jobs"
)

// workerProcessEnv, when set to a database URL, makes the test binary a worker process over that database
// (what `outflow serve --role worker` runs) instead of running tests: the kill -9 test starts and kills one.
const workerProcessEnv = "OUTFLOW_JOBS_TEST_WORKER_PROCESS"

func TestMain(m *testing.M) {
	if url := os.Getenv(workerProcessEnv); url != "" {
		if err := runWorkerProcess(url); err != nil {
			fmt.Fprintln(os.Stderr, "worker process:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// runWorkerProcess works jobs until the process is killed.
func runWorkerProcess(url string) error {
	ctx := context.Background()
	pool, err := db.Open(ctx, url, 10)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	client, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: logger, Dispatcher: events.NewDispatcher(pool),
		Idempotency: idempotency.NewStore(pool, logger)}, jobs.Options{Work: true, MaxWorkers: 5, SoftStopTimeout: time.Second})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	select {}
}

// TestAJobLeftRunningByAKilledProcessIsRescued kills a worker process with SIGKILL while it runs a contacts
// index job (held on a table lock, so it is mid-statement), as a crash or the OOM killer would. The job stays
// `running`, attempted by a process that is gone. A restarted worker, two and a half minutes later (past
// RescueStuckJobsAfter; River's default would have been an hour), runs it again to completion.
func TestAJobLeftRunningByAKilledProcessIsRescued(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	owner := d.OwnerPool(t)

	lock, err := owner.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = lock.Rollback(ctx) }()
	_, err = lock.Exec(ctx, "LOCK TABLE contacts IN EXCLUSIVE MODE")
	require.NoError(t, err)
	inserter, err := jobs.NewClient(jobs.Deps{Pool: d.Pool, Logger: logger}, jobs.Options{})
	require.NoError(t, err)
	inserted, err := inserter.Insert(ctx, contacts.IndexArgs{OrganizationID: res.OrganizationID}, nil)
	require.NoError(t, err)
	id := inserted.Job.ID

	var stderr bytes.Buffer
	worker := exec.Command(os.Args[0], "-test.run=^$")
	worker.Env = append(os.Environ(), workerProcessEnv+"="+d.URL)
	worker.Stderr = &stderr
	require.NoError(t, worker.Start())
	exited := make(chan error, 1)
	go func() { exited <- worker.Wait() }()
	t.Cleanup(func() { _ = worker.Process.Kill() })

	require.Eventually(t, func() bool {
		var waiting int
		_ = owner.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%search_ready%'`).Scan(&waiting)
		return waiting == 1
	}, 30*time.Second, 50*time.Millisecond, "the worker process should be running the index job: %s", &stderr)
	require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
	require.Error(t, <-exited, "killed")
	require.NoError(t, lock.Rollback(ctx))

	job := func() (state string, attempt int, attemptedBy []string, errs []rivertype.AttemptError) {
		var raw [][]byte
		require.NoError(t, owner.QueryRow(ctx, "SELECT state, attempt, coalesce(attempted_by, '{}'), coalesce(errors, '{}') FROM river_job WHERE id = $1", id).
			Scan(&state, &attempt, &attemptedBy, &raw))
		for _, r := range raw {
			var e rivertype.AttemptError
			require.NoError(t, json.Unmarshal(r, &e))
			errs = append(errs, e)
		}
		return state, attempt, attemptedBy, errs
	}
	state, attempt, attemptedBy, _ := job()
	require.Equal(t, "running", state, "the dead process left its job running")
	require.Equal(t, 1, attempt)
	require.Len(t, attemptedBy, 1)

	// The deployment comes back two and a half minutes later: the job and the dead leader's term are as old as
	// that much time makes them. (With River's default rescue, an hour, the job would still be left running.)
	_, err = owner.Exec(ctx, "UPDATE river_job SET attempted_at = attempted_at - interval '150 seconds' WHERE id = $1", id)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, "UPDATE river_leader SET expires_at = now()")
	require.NoError(t, err)

	client, err := jobs.NewClient(jobs.Deps{Pool: d.Pool, Logger: logger, Dispatcher: events.NewDispatcher(d.Pool),
		Idempotency: idempotency.NewStore(d.Pool, logger)}, jobs.Options{Work: true, MaxWorkers: 5, SoftStopTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	require.Eventually(t, func() bool {
		state, _, _, _ := job()
		return state == "completed"
	}, time.Minute, 100*time.Millisecond)
	_, attempt, attemptedBy, errs := job()
	require.Equal(t, 2, attempt, "rescued and run once more")
	require.Len(t, attemptedBy, 2)
	require.NotEqual(t, attemptedBy[0], attemptedBy[1], "by the new process")
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error, "Stuck job rescued")
}

// failingConsumer fails every event, as a consumer whose dependency is down does.
type failingConsumer struct{ calls atomic.Int32 }

func (c *failingConsumer) Name() string { return "failing" }

func (c *failingConsumer) Consume(context.Context, pgx.Tx, events.Event) error {
	c.calls.Add(1)
	return errors.New("the CRM is down")
}

// immediately retries a failed job at once, so ten attempts take a second instead of River's hours.
type immediately struct{}

func (immediately) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// TestAFailingConsumerIsRetriedTenTimesThenGivenUp runs a worker whose event consumer always fails: the
// event's dispatch is attempted exactly events.MaxDispatchAttempts times, then discarded, and the event stays
// in the outbox undispatched.
func TestAFailingConsumerIsRetriedTenTimesThenGivenUp(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	consumer := &failingConsumer{}
	client, err := jobs.NewClient(jobs.Deps{Pool: d.Pool, Logger: logger, Dispatcher: events.NewDispatcher(d.Pool, consumer),
		Idempotency: idempotency.NewStore(d.Pool, logger)},
		jobs.Options{Work: true, MaxWorkers: 5, SoftStopTimeout: time.Second, RetryPolicy: immediately{}})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	var eventID uuid.UUID
	require.NoError(t, db.WithOrgTx(ctx, d.Pool, res.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		eventID, err = events.NewOutbox(client).Emit(ctx, tx, events.ContactCreated, map[string]string{"contact_email": "a@b.example"})
		return err
	}))

	owner := d.OwnerPool(t)
	var state string
	var attempt int
	require.Eventually(t, func() bool {
		_ = owner.QueryRow(ctx, "SELECT state, attempt FROM river_job WHERE kind = 'event_dispatch'").Scan(&state, &attempt)
		return state == "discarded"
	}, 30*time.Second, 50*time.Millisecond, "state %s after %d attempts", &state, &attempt)
	require.Equal(t, 10, events.MaxDispatchAttempts)
	require.Equal(t, events.MaxDispatchAttempts, attempt)
	time.Sleep(300 * time.Millisecond)
	require.EqualValues(t, events.MaxDispatchAttempts, consumer.calls.Load(), "no attempt after the tenth")
	var dispatched bool
	require.NoError(t, owner.QueryRow(ctx, "SELECT dispatched_at IS NOT NULL FROM event_outbox WHERE id = $1", eventID).Scan(&dispatched))
	require.False(t, dispatched)
}
