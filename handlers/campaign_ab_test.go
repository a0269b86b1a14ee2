package handlers_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// abCampaign creates a campaign of one step with a control and an alternative on it, judged by rule with a
// minimum sample of 10; it answers the campaign and the two variants' ids.
func abCampaign(t *testing.T, r campaignRig, rule api.AdvancedOutreachSettingsAbTestingDefaultWinningRule) (uuid.UUID, uuid.UUID, uuid.UUID) {
	t.Helper()
	cmp := r.campaign(t, api.CampaignCreate{Name: "AB", Steps: named("Intro"), Variants: []api.CampaignABVariantCreate{
		{Name: "Original", StepPosition: api.NewOptInt(0), IsControl: api.NewOptBool(true)},
		{Name: "Short", StepPosition: api.NewOptInt(0), Subject: api.NewOptString("Quick one")},
	}, AdvancedOverrides: api.NewOptAdvancedOutreachSettings(api.AdvancedOutreachSettings{
		AbTesting: api.NewOptAdvancedOutreachSettingsAbTesting(api.AdvancedOutreachSettingsAbTesting{
			DefaultWinningRule: api.NewOptAdvancedOutreachSettingsAbTestingDefaultWinningRule(rule), MinSampleSize: api.NewOptInt(10)}),
	})})
	vs := r.variants(t, cmp.ID)
	require.Equal(t, "Original", vs[0].Name)
	return cmp.ID, vs[0].ID, vs[1].ID
}

// abSends records n of the campaign's send tasks for variant in status with error code, replied and opened
// as told (what the sequence engine and the inbox will write).
func abSends(t *testing.T, r campaignRig, cmp, variant uuid.UUID, n int, status, code string, replied, opened bool) {
	t.Helper()
	orgExec(t, r.env, r.org, `INSERT INTO send_tasks (organization_id, id, kind, status, error_code, to_email, campaign_id, variant_id,
		replied_at, opened_at)
		SELECT $1, gen_random_uuid(), 'campaign', $4, $5, 'lead' || g || '@example.com', $2, $3,
		  CASE WHEN $6::boolean THEN now() END, CASE WHEN $7::boolean THEN now() END
		FROM generate_series(1, $8::int) g`, r.org, cmp, variant, status, code, replied, opened, n)
}

func (r campaignRig) abAnalysis(t *testing.T, id uuid.UUID) *api.ABWinnerAnalysis {
	t.Helper()
	out, err := r.c.CampaignsGetAbAnalysis(context.Background(), api.CampaignsGetAbAnalysisParams{ID: id})
	require.NoError(t, err)
	return out
}

// abRow is a variant row of the analysis without its optional wrappers.
type abRow struct {
	name                                    string
	sent, opened, clicked, replied, bounced int
	openRate, replyRate, bounceRate         float64
}

func abRows(a *api.ABWinnerAnalysis) []abRow {
	out := make([]abRow, len(a.Variants))
	for i, v := range a.Variants {
		out[i] = abRow{v.VariantName.Value, v.TotalSent.Value, v.Opened.Value, v.Clicked.Value, v.Replied.Value, v.Bounced.Value,
			v.OpenRate.Value, v.ReplyRate.Value, v.BounceRate.Value}
	}
	return out
}

func TestCampaignABAnalysisCountsEachVariantAndNamesAWinnerOnlyPastTheSample(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	cmp, original, short := abCampaign(t, r, api.AdvancedOutreachSettingsAbTestingDefaultWinningRuleReplyRate)

	got := r.abAnalysis(t, cmp)
	require.Equal(t, cmp, got.CampaignID)
	require.Equal(t, []abRow{{name: "Original"}, {name: "Short"}}, abRows(got), "variants without sends count zeros")
	require.Equal(t, original, got.Variants[0].VariantID.Value)
	require.True(t, got.WinnerID.Null && got.WinnerName.Null)
	require.Equal(t, "reply_rate", got.WinningRule.Value)
	require.Equal(t, "insufficient_data", got.Confidence.Value)

	// Short: 6 of 10 replied (3 of them opened). Original: 1 of 9 replied, so it is one send short of the sample.
	abSends(t, r, cmp, short, 3, "sent", "", true, true)
	abSends(t, r, cmp, short, 3, "sent", "", true, false)
	abSends(t, r, cmp, short, 4, "sent", "", false, false)
	abSends(t, r, cmp, original, 1, "sent", "", true, false)
	abSends(t, r, cmp, original, 8, "ambiguous", "", false, false)
	abSends(t, r, cmp, short, 5, "queued", "", false, false)
	got = r.abAnalysis(t, cmp)
	require.Equal(t, []abRow{
		{name: "Original", sent: 9, replied: 1, replyRate: 0.1111},
		{name: "Short", sent: 10, opened: 3, replied: 6, openRate: 0.3, replyRate: 0.6},
	}, abRows(got), "queued tasks are not sends; ambiguous ones are")
	require.True(t, got.WinnerID.Null, "a clear lead, but a variant below the sample of 10")
	require.Equal(t, "insufficient_data", got.Confidence.Value)

	// The tenth send of Original, and two refused by the recipient's server: bounces, not sends.
	abSends(t, r, cmp, original, 1, "sent", "", false, false)
	abSends(t, r, cmp, original, 2, "failed", "recipient_rejected", false, false)
	abSends(t, r, cmp, original, 3, "failed", "smtp_timeout", false, false)
	got = r.abAnalysis(t, cmp)
	require.Equal(t, []abRow{
		{name: "Original", sent: 10, replied: 1, bounced: 2, replyRate: 0.1, bounceRate: 0.1667},
		{name: "Short", sent: 10, opened: 3, replied: 6, openRate: 0.3, replyRate: 0.6},
	}, abRows(got))
	require.Equal(t, short, got.WinnerID.Value)
	require.Equal(t, "Short", got.WinnerName.Value)
	// 6 vs 1 of 10: pooled p = 0.35, z = 0.5 / sqrt(0.35 * 0.65 * 0.2) = 2.344, medium (1.645 to 2.576).
	require.Equal(t, "medium", got.Confidence.Value)

	// Judged by open rate instead: 3 of 10 against 0 of 10, pooled p = 0.15, z = 0.3 / sqrt(0.15 * 0.85 * 0.2)
	// = 1.879, medium; three opens of Original make it a tie, which has no winner.
	require.NoError(t, r.c.CampaignsUpdateAdvanced(context.Background(), &api.CampaignAdvancedUpdate{Settings: api.AdvancedOutreachSettings{
		AbTesting: api.NewOptAdvancedOutreachSettingsAbTesting(api.AdvancedOutreachSettingsAbTesting{
			DefaultWinningRule: api.NewOptAdvancedOutreachSettingsAbTestingDefaultWinningRule(api.AdvancedOutreachSettingsAbTestingDefaultWinningRuleOpenRate),
			MinSampleSize:      api.NewOptInt(10)}),
	}}, api.CampaignsUpdateAdvancedParams{ID: cmp}))
	got = r.abAnalysis(t, cmp)
	require.Equal(t, "open_rate", got.WinningRule.Value)
	require.Equal(t, short, got.WinnerID.Value)
	require.Equal(t, "medium", got.Confidence.Value)
	orgExec(t, r.env, r.org, `UPDATE send_tasks SET opened_at = now() WHERE organization_id = $1 AND variant_id = $2 AND id IN (
		SELECT id FROM send_tasks WHERE organization_id = $1 AND variant_id = $2 AND status = 'ambiguous' LIMIT 3)`, r.org, original)
	got = r.abAnalysis(t, cmp)
	require.Equal(t, 0.3, got.Variants[0].OpenRate.Value)
	require.True(t, got.WinnerID.Null && got.WinnerName.Null, "3 of 10 each: a tie")
	require.Equal(t, "low", got.Confidence.Value)
}

func TestCampaignABAnalysisIsTheOrganizationsOwnAndNeedsTheReadScope(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp, _, _ := abCampaign(t, r, api.AdvancedOutreachSettingsAbTestingDefaultWinningRuleClickRate)

	them := r.env.Client(t, r.env.Bootstrap(t, "globex").APIKey)
	_, err := them.CampaignsGetAbAnalysis(ctx, api.CampaignsGetAbAnalysisParams{ID: cmp})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = r.c.CampaignsGetAbAnalysis(ctx, api.CampaignsGetAbAnalysisParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "campaign_not_found")

	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	got, err := reader.CampaignsGetAbAnalysis(ctx, api.CampaignsGetAbAnalysisParams{ID: cmp})
	require.NoError(t, err)
	require.Equal(t, "click_rate", got.WinningRule.Value)
	require.Len(t, got.Variants, 2)

	other := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadContacts|auth.WriteCampaigns))
	_, err = other.CampaignsGetAbAnalysis(ctx, api.CampaignsGetAbAnalysisParams{ID: cmp})
	requireAPIError(t, err, 403, "missing_scope")
}
