package verify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/testkit/eventstest"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

// runRig is an organization with a verification run over seeded contacts.
type runRig struct {
	d   *dbtest.DB
	org uuid.UUID
	run uuid.UUID
	ids map[string]uuid.UUID
	dns *verifytest.DNS
}

// seedRun creates an organization, contacts for emails and a queued run over all of them.
func seedRun(t *testing.T, emails ...string) runRig {
	t.Helper()
	d := dbtest.New(t)
	boot, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@example.com", "a long enough password", "Org")
	require.NoError(t, err)
	r := runRig{d: d, org: boot.OrganizationID, run: uuid.New(), ids: map[string]uuid.UUID{}, dns: verifytest.NewDNS(t)}
	r.exec(t, `INSERT INTO verification_runs (organization_id, id, total) VALUES ($1, $2, $3)`, r.org, r.run, len(emails))
	for _, e := range emails {
		id, created, err := contacts.NewID()
		require.NoError(t, err)
		r.ids[e] = id
		r.exec(t, `INSERT INTO contacts (organization_id, id, email, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`, r.org, id, e, created)
		r.exec(t, `INSERT INTO verification_run_contacts (organization_id, run_id, contact_id) VALUES ($1, $2, $3)`, r.org, r.run, id)
	}
	return r
}

func (r runRig) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}))
}

// runState is what a run row says.
type runState struct {
	Status                                           string
	Total, Processed, Valid, Risky, Invalid, Unknown int
	Error                                            string
	Started, Finished                                bool
}

func (r runRig) state(t *testing.T) runState {
	t.Helper()
	var s runState
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT status, total, processed, valid, risky, invalid, unknown, error,
			started_at IS NOT NULL, finished_at IS NOT NULL FROM verification_runs WHERE organization_id = $1 AND id = $2`, r.org, r.run).
			Scan(&s.Status, &s.Total, &s.Processed, &s.Valid, &s.Risky, &s.Invalid, &s.Unknown, &s.Error, &s.Started, &s.Finished)
	}))
	return s
}

func (r runRig) work(t *testing.T, v *verify.Verifier, attempt int) error {
	t.Helper()
	jobs, err := river.NewClient(riverpgxv5.New(r.d.Pool), &river.Config{})
	require.NoError(t, err)
	w := &verify.RunWorker{Pool: r.d.Pool, Verifier: v, Jobs: jobs}
	job := &river.Job[verify.RunArgs]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 5},
		Args: verify.RunArgs{OrganizationID: r.org, RunID: r.run}}
	return w.Work(context.Background(), job)
}

func (r runRig) verifier() *verify.Verifier {
	return verify.New(verify.Options{Resolver: verify.NewResolver(r.dns.Addr), Timeout: 3 * time.Second})
}

func TestRunWorkerWithoutVerifierFailsTheRun(t *testing.T) {
	t.Parallel()
	r := seedRun(t, "ada@good.test")

	err := r.work(t, nil, 1)
	var cancel *rivertype.JobCancelError
	require.True(t, errors.As(err, &cancel), "a run that cannot work is not retried: %v", err)
	s := r.state(t)
	require.Equal(t, "failed", s.Status)
	require.Contains(t, s.Error, "No verifier")
	require.True(t, s.Finished)
	require.Zero(t, s.Processed)
	failed := r.bulkEvents(t)
	require.Len(t, failed, 1, "the failure is raised once")
	require.Equal(t, "bulk_operation.failed", failed[0].Type)
	require.Equal(t, events.BulkOperation{OperationID: r.run, Operation: events.BulkContactsVerification, Status: "failed",
		Total: 1, Failed: 1, Error: s.Error}, withoutTimes(failed[0].Data))
}

// bulkEvents lists the organization's bulk_operation.* events, oldest first.
func (r runRig) bulkEvents(t *testing.T) []eventstest.BulkEvent {
	t.Helper()
	return eventstest.BulkEvents(t, r.d.Pool, r.org)
}

// withoutTimes drops an event's timestamps, which tests check separately.
func withoutTimes(d events.BulkOperation) events.BulkOperation {
	d.StartedAt, d.FinishedAt = time.Time{}, nil
	return d
}

func TestRunWorkerResumesAndCountsOnce(t *testing.T) {
	t.Parallel()
	r := seedRun(t, "ada@good.test", "bob@good.test", "cy@good.test", "gone@good.test")
	r.dns.MX("good.test", 10, "mx.good.test")
	// A previous attempt stored ada's batch before it stopped.
	r.exec(t, `UPDATE verification_run_contacts SET done = true WHERE organization_id = $1 AND contact_id = $2`, r.org, r.ids["ada@good.test"])
	r.exec(t, `UPDATE verification_runs SET status = 'running', processed = 1, valid = 1, started_at = now() WHERE organization_id = $1 AND id = $2`, r.org, r.run)
	// A contact deleted while the run waits leaves it.
	r.exec(t, `DELETE FROM contacts WHERE organization_id = $1 AND id = $2`, r.org, r.ids["gone@good.test"])

	require.NoError(t, r.work(t, r.verifier(), 2))
	s := r.state(t)
	require.Equal(t, runState{Status: "completed", Total: 3, Processed: 3, Valid: 3, Started: true, Finished: true}, s)
	var checked int
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND verification_source = 'probe'
			AND verification_provider = 'builtin' AND verification_checked_at IS NOT NULL`, r.org).Scan(&checked)
	}))
	require.Equal(t, 2, checked, "ada was done before and is not checked again")

	done := r.bulkEvents(t)
	require.Len(t, done, 1)
	require.Equal(t, "bulk_operation.completed", done[0].Type)
	require.Equal(t, events.BulkOperation{OperationID: r.run, Operation: events.BulkContactsVerification, Status: "completed",
		Total: 3, Succeeded: 3}, withoutTimes(done[0].Data))
	require.NotNil(t, done[0].Data.FinishedAt)

	// A finished run is left alone by a late duplicate of its job, and raises nothing again.
	require.NoError(t, r.work(t, r.verifier(), 1))
	require.Equal(t, s, r.state(t))
	require.Len(t, r.bulkEvents(t), 1)
}
