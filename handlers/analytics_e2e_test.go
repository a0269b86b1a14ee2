package handlers_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestDashboardCountsARealCampaignSendAndItsOpens(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	r.env.StartWorkers(t)
	ctx := context.Background()

	// A session launches a one-email campaign to two prospects; the engine and the send pipeline deliver both.
	run := createRun(t, r.session, r.launchBody(t))
	active := awaitRun(t, r.session, run.ID, inState(api.RunStateActive, api.RunStateFailed, api.RunStateCompleted))
	require.NotEqual(t, api.RunStateFailed, active.State, "%+v", active.ErrorDetails)
	require.Eventually(t, func() bool { return r.smtp.Count() == 2 }, time.Minute, 100*time.Millisecond)
	type sent struct {
		id uuid.UUID
		at time.Time
	}
	var tasks []sent
	require.Eventually(t, func() bool {
		tasks = nil
		require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT id, sent_at FROM send_tasks WHERE organization_id = $1 AND status = 'sent' ORDER BY id`, r.org)
			if err != nil {
				return err
			}
			tasks, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (sent, error) {
				var s sent
				return s, row.Scan(&s.id, &s.at)
			})
			return err
		}))
		return len(tasks) == 2
	}, time.Minute, 100*time.Millisecond, "both sends settled as sent")

	// The first send is opened by a person an hour later; the second only by a machine 10 seconds after it left
	// (within the open machine window).
	signer := trackingTokens(t, r.env)
	open := func(task sent, at time.Time) {
		tok, err := signer.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: r.org, TaskID: task.id})
		require.NoError(t, err)
		r.env.Clock.Set(at)
		resp, _ := trackingGet(t, r.env, "/t/o/"+tok, browserUA)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	open(tasks[1], tasks[1].at.Add(10*time.Second))
	later := tasks[0].at.Add(time.Hour)
	open(tasks[0], later)
	// The second prospect then clicks a link in a browser two hours after the send: a person's click.
	tok, err := signer.Sign(tracking.Token{Kind: tracking.KindClick, OrganizationID: r.org, TaskID: tasks[1].id,
		URL: "https://shop.example.com/spring"})
	require.NoError(t, err)
	r.env.Clock.Set(tasks[1].at.Add(2 * time.Hour))
	resp, _ := trackingGet(t, r.env, "/t/c/"+tok, browserUA)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.NoError(t, r.env.Tracking.Flush(ctx))

	d, err := r.c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	s := d.OverallStats
	require.Equal(t, 2, s.TotalEmailsSent.Value)
	require.Equal(t, 2, s.TotalDelivered.Value)
	require.Equal(t, 2, s.TotalOpens.Value, "both sends were opened")
	require.Equal(t, 1, s.MachineOpens.Value, "the second only by a machine")
	require.Equal(t, 50.0, s.OpenRate.Value, "one human open over two sends")
	require.Equal(t, 1, s.ActiveAccounts.Value)
	require.Len(t, d.TopCampaigns, 1)
	require.Equal(t, active.CampaignID.Value, d.TopCampaigns[0].CampaignID.Value)
	require.Equal(t, 2, d.TopCampaigns[0].EmailsSent.Value)
	require.Equal(t, 50.0, d.TopCampaigns[0].OpenRate.Value)
	var sentOnTrend int
	for _, p := range d.DailyTrend {
		sentOnTrend += p.Sent.Value
	}
	require.Equal(t, 2, sentOnTrend)
	require.NotEmpty(t, d.RecentActivity, "the campaign's log tells what it did")

	// The campaign report counts people: both prospects' mail was opened, the second's only by a machine; the
	// second's click counts for the send at once, and for the contact once its burst window has passed.
	c, err := r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: active.CampaignID.Value})
	require.NoError(t, err)
	require.Equal(t, 2, c.Summary.TotalContacts.Value)
	require.Equal(t, 2, c.Summary.EmailsSent.Value)
	require.Equal(t, 2, c.Summary.UniqueOpens.Value)
	require.Equal(t, 1, c.Summary.MachineOpens.Value, "the second prospect's mail was opened by a machine only")
	require.Zero(t, c.Summary.UniqueClicks.Value, "the person's click waits for its burst window")
	require.Zero(t, c.Summary.MachineClicks.Value)
	require.Equal(t, 50.0, c.Summary.OpenRate.Value, "one send opened by a person over two sends")
	require.Equal(t, 50.0, c.Summary.ClickRate.Value, "one send clicked by a person over two sends")

	u, err := r.c.AnalyticsUsage(ctx, api.AnalyticsUsageParams{Period: api.NewOptString("week")})
	require.NoError(t, err)
	require.Equal(t, 2, u.Campaigns.Value.EmailsSent.Value)
}
