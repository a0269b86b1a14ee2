package verify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// verdict is what a contact row says of its address.
type verdict struct {
	Status, Source, Reason string
	Checked                bool
}

func (r runRig) verdict(t *testing.T, email string) verdict {
	t.Helper()
	var v verdict
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT verification_status, verification_source, verification_reason, verification_checked_at IS NOT NULL
			FROM contacts WHERE id = $1`, r.ids[email]).Scan(&v.Status, &v.Source, &v.Reason, &v.Checked)
	}))
	return v
}

func TestACheckStoresVerdictsOfContactsThatHaveNoneAndLeavesTheOthers(t *testing.T) {
	t.Parallel()
	r := seedRun(t, "ada@good.test", "bob@nomx.test", "cy@nomx.test", "dee@nomx.test")
	r.dns.MX("good.test", 10, "mx.good.test")
	r.exec(t, `UPDATE contacts SET verification_status = 'valid', verification_source = 'imported' WHERE id = $1`, r.ids["cy@nomx.test"])
	r.exec(t, `UPDATE contacts SET verification_status = 'risky', verification_source = 'probe', verification_reason = 'earlier',
		verification_checked_at = now() WHERE id = $1`, r.ids["dee@nomx.test"])
	ids := []uuid.UUID{r.ids["ada@good.test"], r.ids["bob@nomx.test"], r.ids["cy@nomx.test"], r.ids["dee@nomx.test"], uuid.New()}

	w := &verify.CheckWorker{Pool: r.d.Pool, Verifier: r.verifier()}
	require.NoError(t, w.Work(context.Background(), &river.Job[verify.CheckArgs]{JobRow: &rivertype.JobRow{Attempt: 1},
		Args: verify.CheckArgs{OrganizationID: r.org, ContactIDs: ids}}))
	require.Equal(t, verdict{Status: "valid", Source: "probe", Checked: true,
		Reason: "good.test takes mail (mail exchanger found); the mailbox itself was not probed."}, r.verdict(t, "ada@good.test"))
	require.Equal(t, verdict{Status: "invalid", Source: "probe", Checked: true,
		Reason: "nomx.test has no MX, A or AAAA record: it cannot receive mail."}, r.verdict(t, "bob@nomx.test"))
	require.Equal(t, verdict{Status: "valid", Source: "imported"}, r.verdict(t, "cy@nomx.test"), "an imported verdict stays")
	require.Equal(t, verdict{Status: "risky", Source: "probe", Reason: "earlier", Checked: true}, r.verdict(t, "dee@nomx.test"),
		"a contact checked before is not checked again")

	err := (&verify.CheckWorker{Pool: r.d.Pool}).Work(context.Background(), &river.Job[verify.CheckArgs]{JobRow: &rivertype.JobRow{Attempt: 1},
		Args: verify.CheckArgs{OrganizationID: r.org, ContactIDs: ids}})
	var cancel *rivertype.JobCancelError
	require.True(t, errors.As(err, &cancel), "a worker without a verifier cannot check: %v", err)
}

func TestARequestIsSplitIntoJobsOfAtMostMaxCheckContacts(t *testing.T) {
	t.Parallel()
	r := seedRun(t)
	jobs, err := river.NewClient(riverpgxv5.New(r.d.Pool), &river.Config{})
	require.NoError(t, err)
	ids := make([]uuid.UUID, verify.MaxCheckContacts+1)
	for i := range ids {
		ids[i] = uuid.New()
	}
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return verify.Requests{}.RequestTx(ctx, tx, jobs, r.org, ids)
	}))
	rows, err := r.d.Pool.Query(context.Background(), `SELECT jsonb_array_length(args->'contact_ids') FROM river_job WHERE kind = $1 ORDER BY id`,
		verify.CheckArgs{}.Kind())
	require.NoError(t, err)
	sizes, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	require.Equal(t, []int{verify.MaxCheckContacts, 1}, sizes)
}
