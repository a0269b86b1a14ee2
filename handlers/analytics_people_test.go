package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/config"
)

// leadClicks reads the rig's lead's click counts: sends clicked by a person (effects applied) and sends
// clicked only by machines so far.
func (r *trackRig) leadClicks(t *testing.T) (clicked, machineClicked int) {
	t.Helper()
	require.NoError(t, r.env.Tracking.Flush(context.Background()))
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT clicked, machine_clicked FROM campaign_leads
			WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`, r.org, r.camp, r.lead).Scan(&clicked, &machineClicked)
	})
	return clicked, machineClicked
}

func TestCampaignSummaryCountsTheContactWhoseSendsOnlyMachinesClickedUntilAPersonsClickApplies(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t, func(c *config.Config) { c.ClickBurstWindow = 5 * time.Second })
	r.env.StartWorkers(t)
	ctx := context.Background()
	summary := func() api.CampaignAnalyticsSummary {
		t.Helper()
		got, err := r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: r.camp})
		require.NoError(t, err)
		return got.Summary
	}
	first, second := r.send(t, time.Now().Add(-time.Hour)), r.send(t, time.Now().Add(-time.Hour))

	// A link checker opens both links of the first send at once: a burst, machines' clicks.
	at := time.Now().Add(-time.Minute)
	r.click(t, at, first, 0, fromReader, browserUA)
	r.click(t, at.Add(time.Millisecond), first, 1, fromReader, browserUA)
	_, machine := r.leadClicks(t)
	require.Equal(t, 1, machine, "the send is clicked only by machines")
	// A person's click on the second send, then, within the burst window, the same source's click on its other
	// link: the pending click is re-judged a burst, so that send too is clicked only by machines.
	r.click(t, at, second, 0, fromOffice, browserUA)
	r.click(t, at.Add(2*time.Second), second, 1, fromOffice, browserUA)
	_, machine = r.leadClicks(t)
	require.Equal(t, 2, machine, "two sends clicked only by machines, however many clicks")
	s := summary()
	require.Equal(t, 1, s.UniqueClicks.Value, "one contact")
	require.Equal(t, 1, s.MachineClicks.Value, "whose clicks are all machines'")
	require.Zero(t, s.UniqueOpens.Value)

	// Later, the reader clicks the first send's pricing link: once its effects apply, the contact clicked.
	r.click(t, time.Time{}, first, 0, fromReader, browserUA)
	require.Eventually(t, func() bool { c, _ := r.leadClicks(t); return c == 1 }, 30*time.Second, 100*time.Millisecond)
	_, machine = r.leadClicks(t)
	require.Equal(t, 1, machine, "the first send is a person's now; the second is still machines' only")
	s = summary()
	require.Equal(t, 1, s.UniqueClicks.Value)
	require.Zero(t, s.MachineClicks.Value, "the contact clicked")
}
