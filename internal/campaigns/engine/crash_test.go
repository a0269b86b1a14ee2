package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
)

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
