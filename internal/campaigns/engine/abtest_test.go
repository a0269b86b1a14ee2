package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
)

func TestVariantsSplitTheSendsByWeightAndTheWinnerTakesEveryLaterLead(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	id := r.create(t, []api.CampaignStepCreate{{Subject: api.NewOptString("Original"), BodyPlain: api.NewOptString("The original.")}})
	control, err := r.c.CampaignsCreateAbVariant(ctx, &api.CampaignABVariantCreate{Name: "A", StepPosition: api.NewOptInt(0),
		IsControl: api.NewOptBool(true), Weight: api.NewOptInt(50)}, api.CampaignsCreateAbVariantParams{ID: id})
	require.NoError(t, err)
	b, err := r.c.CampaignsCreateAbVariant(ctx, &api.CampaignABVariantCreate{Name: "B", StepPosition: api.NewOptInt(0),
		Weight: api.NewOptInt(50), Subject: api.NewOptString("Variant B")}, api.CampaignsCreateAbVariantParams{ID: id})
	require.NoError(t, err)
	require.NoError(t, r.c.CampaignsUpdateAdvanced(ctx, &api.CampaignAdvancedUpdate{Settings: api.AdvancedOutreachSettings{
		AbTesting: api.NewOptAdvancedOutreachSettingsAbTesting(api.AdvancedOutreachSettingsAbTesting{
			Enabled: api.NewOptBool(true), AutoPromoteWinner: api.NewOptBool(true), MinSampleSize: api.NewOptInt(10),
			DefaultWinningRule: api.NewOptAdvancedOutreachSettingsAbTestingDefaultWinningRule("reply_rate")})}},
		api.CampaignsUpdateAdvancedParams{ID: id}))
	emails := make([]string, 60)
	for i := range emails {
		emails[i] = fmt.Sprintf("lead%02d@example.net", i)
	}
	r.addLeads(t, id, emails...)
	r.start(t, id)
	require.Equal(t, 60, r.run(t).Sends)
	r.work(t)
	counts := r.variantCounts(t, id)
	require.Greater(t, counts[control.ID], 15, "a 50/50 split sends each variant to a fair share")
	require.Greater(t, counts[b.ID], 15)
	require.Equal(t, 60, counts[control.ID]+counts[b.ID], "every send names its variant, the control included")

	// B gets replies, A none: after the next judgement B is promoted and takes every later lead.
	r.exec(t, `UPDATE send_tasks SET replied_at = now() WHERE campaign_id = $1 AND variant_id = $2`, id, b.ID)
	r.advance(11 * time.Minute)
	later := make([]string, 20)
	for i := range later {
		later[i] = fmt.Sprintf("later%02d@example.net", i)
	}
	r.addLeads(t, id, later...)
	require.Equal(t, 20, r.run(t).Sends)
	r.work(t)
	counts = r.variantCounts(t, id)
	require.Equal(t, 60+20-counts[control.ID], counts[b.ID], "the promoted variant took all 20 later leads")
	analysis, err := r.c.CampaignsGetAbAnalysis(ctx, api.CampaignsGetAbAnalysisParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, b.ID, analysis.WinnerID.Value)
}

// variantCounts counts the campaign's sends by variant.
func (r *rig) variantCounts(t testing.TB, id uuid.UUID) map[uuid.UUID]int {
	t.Helper()
	out := map[uuid.UUID]int{}
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT variant_id, count(*) FROM send_tasks WHERE campaign_id = $1 AND variant_id IS NOT NULL GROUP BY 1`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v uuid.UUID
			var n int
			if err := rows.Scan(&v, &n); err != nil {
				return err
			}
			out[v] = n
		}
		return rows.Err()
	})
	return out
}
