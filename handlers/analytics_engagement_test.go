package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/geotest"
)

const (
	appleMailUA     = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)"
	androidChromeUA = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36"
)

// engagementRow is one analytics_engagement row without its organization and campaign.
type engagementRow struct {
	Dimension, Key string
	Clicked        bool
}

// engagementOf lists the rig's campaign's engagement rows in a fixed order.
func (r *trackRig) engagementOf(t *testing.T) []engagementRow {
	t.Helper()
	var out []engagementRow
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT dimension, key, clicked FROM analytics_engagement
			WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3 ORDER BY dimension, key`, r.org, r.camp, r.lead)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[engagementRow])
		return err
	})
	return out
}

func TestTrackingStoresTheReadersCountryAndRecordsEngagementForPeopleOnly(t *testing.T) {
	t.Parallel()
	geo := geotest.Write(t, "GeoLite2-Country", map[string]string{"127.0.0.0/24": "NL", "127.0.1.0/24": "BE", "127.0.2.0/24": "US"})
	r := newTrackRig(t, func(c *config.Config) { c.GeoIPDB, c.ClickBurstWindow = geo, time.Second })
	r.env.StartWorkers(t)
	ctx := context.Background()
	task := r.send(t, time.Now().Add(-time.Hour))

	r.open(t, time.Time{}, task, fromReader, appleMailUA)
	r.open(t, time.Time{}, task, fromScanner, androidChromeUA)
	r.click(t, time.Time{}, task, 0, fromScanner, androidChromeUA)
	r.click(t, time.Time{}, task, 0, fromOffice, androidChromeUA)
	require.Equal(t, []judged{{Kind: "open", Link: -1, Verdict: "human", Rule: "human"},
		{Kind: "open", Link: -1, Verdict: "machine", Rule: "scanner"},
		{Kind: "click", Link: 0, Verdict: "machine", Rule: "scanner"},
		{Kind: "click", Link: 0, Verdict: "human", Rule: "human", Ticket: true}}, r.judgements(t, task))
	var countries []string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT country FROM tracking_events WHERE organization_id = $1 AND task_id = $2 ORDER BY at, id", r.org, task)
		if err != nil {
			return err
		}
		countries, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	require.Equal(t, []string{"NL", "US", "US", "BE"}, countries, "each event's country, from its address (which is not stored)")

	// The human click counts once its effects apply; the scanner's open and click never do.
	require.Eventually(t, func() bool { _, clicked := r.stamps(t, task); return clicked != nil }, 30*time.Second, 100*time.Millisecond)
	want := []engagementRow{{"client", "Apple Mail", false}, {"client", "Chrome", true}, {"country", "BE", true},
		{"country", "NL", false}, {"device", "desktop", false}, {"device", "mobile", true}}
	require.Equal(t, want, r.engagementOf(t))

	got, err := r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: r.camp})
	require.NoError(t, err)
	require.Equal(t, api.CampaignEngagement{
		Countries: []api.CampaignEngagementBucket{{Key: "BE", Opens: 1, Clicks: 1}, {Key: "NL", Opens: 1}},
		Clients:   []api.CampaignEngagementBucket{{Key: "Chrome", Opens: 1, Clicks: 1}, {Key: "Apple Mail", Opens: 1}},
		Devices:   []api.CampaignEngagementBucket{{Key: "mobile", Opens: 1, Clicks: 1}, {Key: "desktop", Opens: 1}},
	}, got.Engagement, "one contact, counted once per key; the click counts as an open")

	// A rebuild from the stored events equals what was kept as they arrived.
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM analytics_engagement WHERE organization_id = $1", r.org)
		return err
	})
	require.Empty(t, r.engagementOf(t))
	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return engagement.Rebuild(ctx, tx, r.org) })
	require.Equal(t, want, r.engagementOf(t))
	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return engagement.Rebuild(ctx, tx, r.org) })
	require.Equal(t, want, r.engagementOf(t), "rebuilding twice changes nothing")
}

func TestTrackingWithoutAGeoDatabaseStoresEveryCountryAsUnknown(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	task := r.send(t, time.Now().Add(-time.Hour))
	r.open(t, time.Time{}, task, fromReader, browserUA)
	require.Len(t, r.judgements(t, task), 1)
	require.Equal(t, []engagementRow{{"client", "Safari", false}, {"country", "", false}, {"device", "desktop", false}}, r.engagementOf(t))
}

func TestCampaignReportCountsSendsOpensAndClicksDrivenThroughTheTrackingEndpoints(t *testing.T) {
	t.Parallel()
	geo := geotest.Write(t, "GeoLite2-Country", map[string]string{"127.0.0.0/24": "NL", "127.0.1.0/24": "BE"})
	r := newTrackRig(t, func(c *config.Config) { c.GeoIPDB, c.ClickBurstWindow = geo, time.Second })
	r.env.StartWorkers(t)
	ctx := context.Background()
	sent := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	first, second := r.send(t, sent), r.send(t, sent.Add(time.Minute))
	// The sends are stored as the pipeline leaves them, without its feed: a rebuild counts them.
	r.rebuild(t)

	// The first send: a scanner's open before midnight, then the reader's after it (the send's first open stays
	// the scanner's, on 1 March, and is a person's now). The second: the reader's click from the office on 2 March.
	r.open(t, sent.Add(10*time.Minute), first, fromScanner, androidChromeUA)
	r.open(t, sent.Add(40*time.Minute), first, fromReader, appleMailUA)
	r.click(t, sent.Add(50*time.Minute), second, 0, fromOffice, androidChromeUA)
	require.Eventually(t, func() bool { _, clicked := r.stamps(t, second); return clicked != nil }, 30*time.Second, 100*time.Millisecond)

	got, err := r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: r.camp})
	require.NoError(t, err)
	require.Equal(t, api.CampaignAnalyticsSummary{TotalContacts: api.NewOptInt(1), EmailsSent: api.NewOptInt(2),
		EmailsPending: api.NewOptInt(1), UniqueOpens: api.NewOptInt(1), MachineOpens: api.NewOptInt(0),
		UniqueClicks: api.NewOptInt(1), MachineClicks: api.NewOptInt(0), Replies: api.NewOptInt(0), Bounces: api.NewOptInt(0),
		Unsubscribes: api.NewOptInt(0), OpenRate: api.NewOptFloat64(50), ClickRate: api.NewOptFloat64(50),
		ReplyRate: api.NewOptFloat64(0), BounceRate: api.NewOptFloat64(0)}, got.Summary,
		"2 sends, 1 opened by a person (the scanner's open taken back), 1 clicked by a person")
	require.Len(t, got.Steps, 1)
	require.Equal(t, 2, got.Steps[0].EmailsSent.Value)
	require.Equal(t, 50.0, got.Steps[0].OpenRate.Value)
	require.Equal(t, 50.0, got.Steps[0].ClickRate.Value)
	require.Equal(t, api.CampaignEngagement{
		Countries: []api.CampaignEngagementBucket{{Key: "BE", Opens: 1, Clicks: 1}, {Key: "NL", Opens: 1}},
		Clients:   []api.CampaignEngagementBucket{{Key: "Chrome", Opens: 1, Clicks: 1}, {Key: "Apple Mail", Opens: 1}},
		Devices:   []api.CampaignEngagementBucket{{Key: "mobile", Opens: 1, Clicks: 1}, {Key: "desktop", Opens: 1}},
	}, got.Engagement, "the scanner's open and country count nowhere")

	daily, err := r.c.AnalyticsCampaignDaily(ctx, api.AnalyticsCampaignDailyParams{ID: r.camp, From: date("2026-03-01"), To: date("2026-03-02")})
	require.NoError(t, err)
	require.Equal(t, []api.CampaignDayPoint{
		{Date: api.NewOptDate(date("2026-03-01")), Sent: api.NewOptInt(2), Opens: api.NewOptInt(1), Clicks: api.NewOptInt(0), Replies: api.NewOptInt(0)},
		{Date: api.NewOptDate(date("2026-03-02")), Sent: api.NewOptInt(0), Opens: api.NewOptInt(0), Clicks: api.NewOptInt(1), Replies: api.NewOptInt(0)},
	}, daily.Data, "each on the day of its first open or click, cut at UTC midnight")
	hourly, err := r.c.AnalyticsCampaignHourly(ctx, api.AnalyticsCampaignHourlyParams{ID: r.camp, Date: api.NewOptDate(date("2026-03-02"))})
	require.NoError(t, err)
	require.Equal(t, 1, hourly.Data[0].Clicks.Value, "the click at 00:20")
	require.Zero(t, hourly.Data[0].Sent.Value)
}
