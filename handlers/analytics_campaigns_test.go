package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// rollupRow writes one rollup row through the application role as the rollup feeds would have left it:
// table is analytics_campaign_days (key: day), analytics_step_days (key: step, variant, day) or
// analytics_campaign_hours (key: hour). Until the feeds land, report tests seed the rows they read this way.
func rollupRow(t *testing.T, env *apitest.Env, org uuid.UUID, table string, key map[string]any, c metrics.Counters) {
	t.Helper()
	cols := []string{"organization_id", "sent", "opens", "machine_opens", "clicks", "machine_clicks", "replies", "bounces_hard",
		"bounces_soft", "complaints", "unsubscribes"}
	args := []any{org, c.Sent, c.Opens, c.MachineOpens, c.Clicks, c.MachineClicks, c.Replies, c.BouncesHard, c.BouncesSoft,
		c.Complaints, c.Unsubscribes}
	for k, v := range key {
		cols, args = append(cols, k), append(args, v)
	}
	marks := make([]string, len(cols))
	for i := range marks {
		marks[i] = fmt.Sprintf("$%d", i+1)
	}
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(marks, ", ")+")", args...)
		return err
	}))
}

// engagementRows writes n distinct contacts' engagement rows of one key (the first clicked of them clicked).
func engagementRows(t *testing.T, env *apitest.Env, org, camp uuid.UUID, dimension, key string, n, clicked int) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		for i := range n {
			if _, err := tx.Exec(ctx, `INSERT INTO analytics_engagement (organization_id, campaign_id, dimension, key, contact_id, clicked)
				VALUES ($1, $2, $3, $4, $5, $6)`, org, camp, dimension, key, uuid.New(), i < clicked); err != nil {
				return err
			}
		}
		return nil
	}))
}

// engagedLeads adds n leads to the campaign (new contacts) with the same engagement counts: sends opened by a
// person, sends opened only by machines, sends clicked by a person, sends clicked only by machines.
func engagedLeads(t *testing.T, env *apitest.Env, org, camp uuid.UUID, n, opened, machineOpened, clicked, machineClicked int) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `WITH c AS (
			  INSERT INTO contacts (organization_id, id, email)
			  SELECT $1, gen_random_uuid(), gen_random_uuid()::text || '@example.net' FROM generate_series(1, $3::int) RETURNING id)
			INSERT INTO campaign_leads (organization_id, campaign_id, contact_id, state, opened, machine_opened, clicked,
			  machine_clicked)
			SELECT $1, $2, c.id, 'completed', $4, $5, $6, $7 FROM c`, org, camp, n, opened, machineOpened, clicked, machineClicked)
		return err
	}))
}

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// campaignReportRig is an organization with a three-step campaign and three leads, one of them finished.
type campaignReportRig struct {
	env   *apitest.Env
	org   uuid.UUID
	c     *api.Client
	camp  uuid.UUID
	steps []uuid.UUID
}

func newCampaignReportRig(t *testing.T) *campaignReportRig {
	t.Helper()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	r := &campaignReportRig{env: env, org: boot.OrganizationID, c: env.Client(t, boot.APIKey)}
	ctx := context.Background()
	r.camp = campCreate(t, r.c, api.CampaignCreate{Name: "Spring launch", Steps: []api.CampaignStepCreate{
		{Name: api.NewOptString("Intro"), Subject: api.NewOptString("Hello"), BodyHTML: api.NewOptString("<p>Hi</p>")},
		{Name: api.NewOptString("Nudge"), Subject: api.NewOptString("Again"), BodyHTML: api.NewOptString("<p>Hi again</p>")},
		{Name: api.NewOptString("Last"), Subject: api.NewOptString("Bye"), BodyHTML: api.NewOptString("<p>Bye</p>")}}}).ID
	steps, err := r.c.CampaignsListSteps(ctx, api.CampaignsListStepsParams{ID: r.camp})
	require.NoError(t, err)
	for _, s := range steps {
		r.steps = append(r.steps, s.ID)
	}
	res, err := r.c.ContactsCreate(ctx, []api.ContactCreate{{Email: "ada@example.net", Campaigns: []uuid.UUID{r.camp}},
		{Email: "bob@example.net", Campaigns: []uuid.UUID{r.camp}}, {Email: "cy@example.net", Campaigns: []uuid.UUID{r.camp}}},
		api.ContactsCreateParams{})
	require.NoError(t, err)
	created := createdOK(t, res)
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE campaign_leads SET state = 'completed' WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3",
			r.org, r.camp, created[2].ID)
		return err
	}))
	return r
}

func TestCampaignAnalyticsSumsTheRollupsAndRatesThemByHand(t *testing.T) {
	t.Parallel()
	r := newCampaignReportRig(t)
	env, org, camp := r.env, r.org, r.camp
	ctx := context.Background()
	d1, d2 := date("2026-03-01"), date("2026-03-02")
	rollupRow(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": camp, "day": d1}, metrics.Counters{Sent: 100,
		Opens: 40, MachineOpens: 10, Clicks: 12, MachineClicks: 2, Replies: 5, BouncesHard: 3, BouncesSoft: 1, Complaints: 1, Unsubscribes: 2})
	rollupRow(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": camp, "day": d2}, metrics.Counters{Sent: 50,
		Opens: 10, Clicks: 3, Replies: 1, BouncesSoft: 1})
	variant := uuid.New()
	rollupRow(t, env, org, "analytics_step_days", map[string]any{"campaign_id": camp, "step_id": r.steps[0], "variant_id": uuid.Nil, "day": d1},
		metrics.Counters{Sent: 100, Opens: 40, MachineOpens: 10, Clicks: 12, MachineClicks: 2, Replies: 5, BouncesHard: 3, BouncesSoft: 1})
	rollupRow(t, env, org, "analytics_step_days", map[string]any{"campaign_id": camp, "step_id": r.steps[0], "variant_id": variant, "day": d2},
		metrics.Counters{Sent: 20, Opens: 4, Clicks: 1})
	rollupRow(t, env, org, "analytics_step_days", map[string]any{"campaign_id": camp, "step_id": r.steps[1], "variant_id": uuid.Nil, "day": d2},
		metrics.Counters{Sent: 30, Opens: 6, Clicks: 2, Replies: 1, BouncesSoft: 1})
	for _, k := range []struct {
		key            string
		opens, clicked int
	}{{"US", 3, 1}, {"DE", 2, 0}, {"PL", 1, 1}, {"", 1, 0}, {"SE", 1, 0}, {"NL", 1, 0}, {"IT", 1, 0}, {"GB", 1, 0}, {"FR", 1, 0}, {"ES", 1, 0}} {
		engagementRows(t, env, org, camp, "country", k.key, k.opens, k.clicked)
	}
	engagementRows(t, env, org, camp, "device", "desktop", 2, 1)
	engagementRows(t, env, org, camp, "device", "mobile", 1, 0)
	// The people behind the opens and clicks, beside the rig's three leads who did nothing: 20 had one send
	// opened by a person and another only by machines; 4 had sends opened only by machines; 3 had a send opened
	// and clicked by a person and another clicked only by machines; 2 had a send opened and clicked only by
	// machines.
	engagedLeads(t, env, org, camp, 20, 1, 1, 0, 0)
	engagedLeads(t, env, org, camp, 4, 0, 2, 0, 0)
	engagedLeads(t, env, org, camp, 3, 1, 0, 1, 1)
	engagedLeads(t, env, org, camp, 2, 0, 1, 0, 1)

	got, err := r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: camp})
	require.NoError(t, err)
	require.Equal(t, camp, got.CampaignID)
	require.Equal(t, "Spring launch", got.Name)
	require.Equal(t, "draft", got.Status)
	s := got.Summary
	require.Equal(t, api.CampaignAnalyticsSummary{TotalContacts: api.NewOptInt(32), EmailsSent: api.NewOptInt(150),
		EmailsPending: api.NewOptInt(2),
		UniqueOpens:   api.NewOptInt(29), // 20 + 4 + 3 + 2 contacts with an opened send
		MachineOpens:  api.NewOptInt(6),  // 4 + 2 whose sends machines alone opened
		UniqueClicks:  api.NewOptInt(5),  // 3 + 2
		MachineClicks: api.NewOptInt(2),  // the 2 whose sends machines alone clicked
		Replies:       api.NewOptInt(6), Bounces: api.NewOptInt(5), Unsubscribes: api.NewOptInt(2),
		OpenRate:   api.NewOptFloat64(26.67), // (50 - 10) sends opened by a person / 150 sends
		ClickRate:  api.NewOptFloat64(8.67),  // (15 - 2) / 150
		ReplyRate:  api.NewOptFloat64(4),     // 6 / 150
		BounceRate: api.NewOptFloat64(3.33),  // (3 + 1 + 1) / 150
	}, s)

	require.Len(t, got.Steps, 3, "every step, the unsent one too")
	step := func(i int) api.CampaignStepStats { return got.Steps[i] }
	require.Equal(t, api.CampaignStepStats{StepID: api.NewOptUUID(r.steps[0]), Name: api.NewOptString("Intro"),
		Position: step(0).Position, EmailsSent: api.NewOptInt(120), Opens: api.NewOptInt(44), MachineOpens: api.NewOptInt(10),
		Clicks: api.NewOptInt(13), MachineClicks: api.NewOptInt(2), Replies: api.NewOptInt(5), Bounces: api.NewOptInt(4),
		OpenRate:   api.NewOptFloat64(28.33), // (44 - 10) / 120, both variants and both days
		ClickRate:  api.NewOptFloat64(9.17),  // (13 - 2) / 120
		ReplyRate:  api.NewOptFloat64(4.17),  // 5 / 120
		BounceRate: api.NewOptFloat64(3.33),  // 4 / 120
	}, step(0))
	require.Equal(t, 20.0, step(1).OpenRate.Value, "6 / 30")
	require.Equal(t, 6.67, step(1).ClickRate.Value, "2 / 30")
	require.Equal(t, 3.33, step(1).ReplyRate.Value, "1 / 30")
	require.Equal(t, "Last", step(2).Name.Value)
	require.Zero(t, step(2).EmailsSent.Value)
	require.Zero(t, step(2).OpenRate.Value, "0 while nothing was sent")
	require.Less(t, step(0).Position.Value, step(1).Position.Value)
	require.Less(t, step(1).Position.Value, step(2).Position.Value)

	require.Equal(t, []api.CampaignEngagementBucket{{Key: "US", Opens: 3, Clicks: 1}, {Key: "DE", Opens: 2}, {Key: "PL", Opens: 1, Clicks: 1},
		{Key: "", Opens: 1}, {Key: "ES", Opens: 1}, {Key: "FR", Opens: 1}, {Key: "GB", Opens: 1}, {Key: "IT", Opens: 1}},
		got.Engagement.Countries, "the busiest eight by contacts who opened, then clicked, then key")
	require.Equal(t, []api.CampaignEngagementBucket{{Key: "desktop", Opens: 2, Clicks: 1}, {Key: "mobile", Opens: 1}}, got.Engagement.Devices)
	require.Empty(t, got.Engagement.Clients)
	require.NotNil(t, got.Engagement.Clients, "an empty dimension is an empty list")
}

func TestCampaignDailyAndHourlyCutDaysAtUTCMidnight(t *testing.T) {
	t.Parallel()
	r := newCampaignReportRig(t)
	env, org, camp := r.env, r.org, r.camp
	ctx := context.Background()
	rollupRow(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": camp, "day": date("2026-03-01")},
		metrics.Counters{Sent: 100, Opens: 40, MachineOpens: 10, Clicks: 12, MachineClicks: 2, Replies: 5})
	rollupRow(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": camp, "day": date("2026-03-02")},
		metrics.Counters{Sent: 50, Opens: 10, Clicks: 3, Replies: 1})
	lastHour := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	rollupRow(t, env, org, "analytics_campaign_hours", map[string]any{"campaign_id": camp, "hour": lastHour},
		metrics.Counters{Sent: 7, Opens: 3, MachineOpens: 1, Replies: 1})
	rollupRow(t, env, org, "analytics_campaign_hours", map[string]any{"campaign_id": camp, "hour": lastHour.Add(time.Hour)},
		metrics.Counters{Sent: 4, Clicks: 2, MachineClicks: 1})

	daily, err := r.c.AnalyticsCampaignDaily(ctx, api.AnalyticsCampaignDailyParams{ID: camp, From: date("2026-02-28"), To: date("2026-03-02")})
	require.NoError(t, err)
	require.Equal(t, []api.CampaignDayPoint{
		{Date: api.NewOptDate(date("2026-02-28")), Sent: api.NewOptInt(0), Opens: api.NewOptInt(0), Clicks: api.NewOptInt(0), Replies: api.NewOptInt(0)},
		{Date: api.NewOptDate(date("2026-03-01")), Sent: api.NewOptInt(100), Opens: api.NewOptInt(30), Clicks: api.NewOptInt(10), Replies: api.NewOptInt(5)},
		{Date: api.NewOptDate(date("2026-03-02")), Sent: api.NewOptInt(50), Opens: api.NewOptInt(10), Clicks: api.NewOptInt(3), Replies: api.NewOptInt(1)},
	}, daily.Data, "every day, zero ones too; opens and clicks are people's")

	hours := func(params api.AnalyticsCampaignHourlyParams) *api.CampaignHourlyStats {
		t.Helper()
		params.ID = camp
		out, err := r.c.AnalyticsCampaignHourly(ctx, params)
		require.NoError(t, err)
		require.Len(t, out.Data, 24)
		for h, p := range out.Data {
			require.Equal(t, h, p.Hour.Value)
		}
		return out
	}
	first := hours(api.AnalyticsCampaignHourlyParams{Date: api.NewOptDate(date("2026-03-01"))})
	require.Equal(t, date("2026-03-01"), first.Date)
	require.Equal(t, api.CampaignHourPoint{Hour: api.NewOptInt(23), Sent: api.NewOptInt(7), Opens: api.NewOptInt(2),
		Clicks: api.NewOptInt(0), Replies: api.NewOptInt(1)}, first.Data[23])
	require.Zero(t, first.Data[0].Sent.Value, "00:00 on the 2nd belongs to the 2nd")

	env.Clock.Set(time.Date(2026, 3, 2, 0, 30, 0, 0, time.UTC))
	today := hours(api.AnalyticsCampaignHourlyParams{})
	require.Equal(t, date("2026-03-02"), today.Date, "date defaults to today, UTC")
	require.Equal(t, 4, today.Data[0].Sent.Value)
	require.Equal(t, 1, today.Data[0].Clicks.Value)
	require.Zero(t, today.Data[23].Sent.Value)
	env.Clock.Set(time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC))
	require.Equal(t, date("2026-03-01"), hours(api.AnalyticsCampaignHourlyParams{}).Date, "a second before midnight is still the 1st")

	_, err = r.c.AnalyticsCampaignDaily(ctx, api.AnalyticsCampaignDailyParams{ID: camp, From: date("2026-03-02"), To: date("2026-03-01")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_date_range")
	_, err = r.c.AnalyticsCampaignDaily(ctx, api.AnalyticsCampaignDailyParams{ID: camp, From: date("2025-03-01"), To: date("2026-03-02")})
	requireAPIError(t, err, http.StatusBadRequest, "date_range_too_long")
	year, err := r.c.AnalyticsCampaignDaily(ctx, api.AnalyticsCampaignDailyParams{ID: camp, From: date("2025-03-02"), To: date("2026-03-02")})
	require.NoError(t, err)
	require.Len(t, year.Data, 366, "366 days, both ends included, is the longest range")
}

func TestCampaignCompareDropsInvalidIdsAndTakesAtMostTen(t *testing.T) {
	t.Parallel()
	r := newCampaignReportRig(t)
	env, org, camp := r.env, r.org, r.camp
	ctx := context.Background()
	other := campCreate(t, r.c, api.CampaignCreate{Name: "Autumn"}).ID
	rollupRow(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": camp, "day": date("2026-03-01")},
		metrics.Counters{Sent: 100, Opens: 40, MachineOpens: 10, Replies: 5})
	rollupRow(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": camp, "day": date("2026-03-02")},
		metrics.Counters{Sent: 50, Opens: 10, Clicks: 3, Replies: 1, BouncesSoft: 1})

	compare := func(ids string, from, to string) (*api.CampaignComparison, error) {
		return r.c.AnalyticsCampaignsCompare(ctx, api.AnalyticsCampaignsCompareParams{Ids: ids, From: date(from), To: date(to)})
	}
	got, err := compare(" "+other.String()+",not-a-uuid,, "+camp.String()+","+other.String(), "2026-03-02", "2026-03-02")
	require.NoError(t, err)
	require.Equal(t, []api.CampaignComparisonItem{
		{CampaignID: api.NewOptUUID(other), Name: api.NewOptString("Autumn"), Status: api.NewOptString("draft"), EmailsSent: api.NewOptInt(0),
			OpenRate: api.NewOptFloat64(0), ClickRate: api.NewOptFloat64(0), ReplyRate: api.NewOptFloat64(0), BounceRate: api.NewOptFloat64(0)},
		{CampaignID: api.NewOptUUID(camp), Name: api.NewOptString("Spring launch"), Status: api.NewOptString("draft"), EmailsSent: api.NewOptInt(50),
			OpenRate: api.NewOptFloat64(20), ClickRate: api.NewOptFloat64(6), ReplyRate: api.NewOptFloat64(2), BounceRate: api.NewOptFloat64(2)},
	}, got.Campaigns, "in the order given, a repeated id once, only 2 March counted")
	require.Equal(t, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), got.Period.From.Value)
	require.Equal(t, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), got.Period.To.Value, "to is the end of the last day")

	both, err := compare(camp.String(), "2026-03-01", "2026-03-02")
	require.NoError(t, err)
	require.Equal(t, 150, both.Campaigns[0].EmailsSent.Value)
	require.Equal(t, 26.67, both.Campaigns[0].OpenRate.Value, "(50 - 10) / 150")

	_, err = compare("nope, ,also-not", "2026-03-01", "2026-03-02")
	requireAPIError(t, err, http.StatusBadRequest, "invalid_ids")
	eleven := []string{camp.String()}
	for range 10 {
		eleven = append(eleven, uuid.NewString())
	}
	_, err = compare(strings.Join(eleven, ","), "2026-03-01", "2026-03-02")
	requireAPIError(t, err, http.StatusBadRequest, "too_many_ids")
	// Ten valid ids and junk: the limit counts valid ids, so this passes it and meets the unknown ones.
	_, err = compare(strings.Join(eleven[:10], ",")+",junk,x,"+camp.String(), "2026-03-01", "2026-03-02")
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	_, err = compare(camp.String(), "2026-03-02", "2026-03-01")
	requireAPIError(t, err, http.StatusBadRequest, "invalid_date_range")
}

func TestCampaignReportsAnswer404ForAnotherOrganizationsCampaign(t *testing.T) {
	t.Parallel()
	r := newCampaignReportRig(t)
	ctx := context.Background()
	rollupRow(t, r.env, r.org, "analytics_campaign_days", map[string]any{"campaign_id": r.camp, "day": date("2026-03-01")},
		metrics.Counters{Sent: 100})
	rival := r.env.Client(t, r.env.Bootstrap(t, "rival").APIKey)
	_, err := rival.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: r.camp})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	_, err = rival.AnalyticsCampaignDaily(ctx, api.AnalyticsCampaignDailyParams{ID: r.camp, From: date("2026-03-01"), To: date("2026-03-01")})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	_, err = rival.AnalyticsCampaignHourly(ctx, api.AnalyticsCampaignHourlyParams{ID: r.camp})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	_, err = rival.AnalyticsCampaignsCompare(ctx, api.AnalyticsCampaignsCompareParams{Ids: r.camp.String(), From: date("2026-03-01"),
		To: date("2026-03-01")})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	_, err = r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	mine, err := r.c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: r.camp})
	require.NoError(t, err)
	require.Equal(t, 100, mine.Summary.EmailsSent.Value)
}
