package handlers_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// dashCounters are the rollup tables' counter columns, in the order dashCounterArgs gives their values.
const dashCounters = `sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
	intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes, placement_inbox, placement_spam`

func dashCounterArgs(c metrics.Counters) []any {
	return []any{c.Sent, c.Opens, c.MachineOpens, c.Clicks, c.MachineClicks, c.Replies, c.IntentPositive, c.IntentNegative, c.IntentQuestion,
		c.IntentNeutral, c.IntentOutOfOffice, c.IntentAutomated, c.BouncesHard, c.BouncesSoft, c.Complaints, c.Unsubscribes, c.PlacementInbox,
		c.PlacementSpam}
}

const dashValues = `$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21`

// dashOrgDay seeds one analytics_org_days row, as the rollup feeds will write it.
func dashOrgDay(t *testing.T, env *apitest.Env, org uuid.UUID, day time.Time, kind string, c metrics.Counters) {
	t.Helper()
	orgExec(t, env, org, `INSERT INTO analytics_org_days (organization_id, day, kind, `+dashCounters+`) VALUES ($1, $2, $3, `+dashValues+`)`,
		append([]any{org, day, kind}, dashCounterArgs(c)...)...)
}

// dashCampaignDay seeds one analytics_campaign_days row.
func dashCampaignDay(t *testing.T, env *apitest.Env, org, campaign uuid.UUID, day time.Time, c metrics.Counters) {
	t.Helper()
	orgExec(t, env, org, `INSERT INTO analytics_campaign_days (organization_id, campaign_id, day, `+dashCounters+`) VALUES ($1, $2, $3, `+dashValues+`)`,
		append([]any{org, campaign, day}, dashCounterArgs(c)...)...)
}

// dashMailboxDay seeds one analytics_mailbox_days row of kind.
func dashMailboxDay(t *testing.T, env *apitest.Env, org, mailbox uuid.UUID, day time.Time, kind string, c metrics.Counters) {
	t.Helper()
	orgExec(t, env, org, `INSERT INTO analytics_mailbox_days (organization_id, mailbox_id, day, kind, `+dashCounters+`)
		VALUES ($1, $2, $3, $22, `+dashValues+`)`, append(append([]any{org, mailbox, day}, dashCounterArgs(c)...), kind)...)
}

// dashMailbox seeds an active mailbox and returns its id (a UUIDv7, as the API's: later is newer).
func dashMailbox(t *testing.T, env *apitest.Env, org uuid.UUID, email string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	orgExec(t, env, org, `INSERT INTO mailboxes (organization_id, id, email, provider) VALUES ($1, $2, $3, 'smtp_imap')`, org, id, email)
	return id
}

// dashOpenError records an open entry of a mailbox's error log.
func dashOpenError(t *testing.T, env *apitest.Env, org, mailbox uuid.UUID, code, severity string) {
	t.Helper()
	orgExec(t, env, org, `INSERT INTO mailbox_errors (organization_id, id, mailbox_id, code, severity, title, message)
		VALUES ($1, $2, $3, $4, $5, $4, 'seeded')`, org, uuid.New(), mailbox, code, severity)
}

// dashBuckets are the health buckets total, healthy, warning and error, checked to repeat under their earlier names.
func dashBuckets(t *testing.T, h api.AccountHealthSummary) [4]int {
	t.Helper()
	out := [4]int{h.Total, h.Healthy, h.Warning, h.Error}
	require.Equal(t, h.Total, h.Healthy+h.Warning+h.Error, "every mailbox in exactly one bucket")
	//lint:ignore SA1019 the earlier names must keep repeating the buckets
	require.Equal(t, out, [4]int{h.TotalAccounts.Value, h.HealthyAccounts.Value, h.WarningAccounts.Value, h.ErrorAccounts.Value})
	return out
}

// dashV7At is a UUIDv7 stamped with instant at, as ids created then are.
func dashV7At(at time.Time) uuid.UUID {
	id := uuid.New()
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(at.UnixMilli()))
	copy(id[:6], ms[2:])
	id[6] = 0x70 | id[6]&0x0f
	return id
}

// dashNow is the instant the analytics tests stop the clock at: mid-morning UTC, so "today" is 2026-03-15.
var dashNow = time.Date(2026, 3, 15, 10, 30, 0, 0, time.UTC)

func dashDay(daysAgo int) time.Time { return time.Date(2026, 3, 15-daysAgo, 0, 0, 0, 0, time.UTC) }

func TestDashboardTotalsCountCampaignStepsOverUTCDaysIncludingToday(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Clock.Set(dashNow)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID

	dashOrgDay(t, env, org, dashDay(0), "campaign", metrics.Counters{Sent: 100, Opens: 40, MachineOpens: 10, Clicks: 12, MachineClicks: 2,
		Replies: 5, IntentPositive: 2, IntentNegative: 1, BouncesHard: 3, BouncesSoft: 1})
	dashOrgDay(t, env, org, dashDay(6), "campaign", metrics.Counters{Sent: 50, Opens: 10, Clicks: 3, Replies: 1, BouncesSoft: 1})
	dashOrgDay(t, env, org, dashDay(7), "campaign", metrics.Counters{Sent: 1000, Opens: 100})
	dashOrgDay(t, env, org, dashDay(89), "campaign", metrics.Counters{Sent: 7})
	dashOrgDay(t, env, org, dashDay(90), "campaign", metrics.Counters{Sent: 9})
	// Direct sends and warmup are not email steps: the dashboard leaves them out.
	dashOrgDay(t, env, org, dashDay(0), "direct", metrics.Counters{Sent: 500, Opens: 500, Replies: 50})
	dashOrgDay(t, env, org, dashDay(0), "warmup", metrics.Counters{Sent: 70, Replies: 20})

	d, err := c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Equal(t, api.DashboardAnalyticsPeriod7d, d.Period)
	s := d.OverallStats
	require.Equal(t, 150, s.TotalEmailsSent.Value, "today's 100 and 6 days ago's 50; 7 days ago is outside 7d")
	require.Equal(t, 50, s.TotalOpens.Value, "people and machines")
	require.Equal(t, 10, s.MachineOpens.Value)
	require.Equal(t, 15, s.TotalClicks.Value)
	require.Equal(t, 2, s.MachineClicks.Value)
	require.Equal(t, 6, s.TotalReplies.Value)
	require.Equal(t, 2, s.PositiveReplies.Value)
	require.Equal(t, 5, s.TotalBounces.Value, "hard and soft")
	require.Equal(t, 145, s.TotalDelivered.Value, "150 sent minus 5 bounced")
	require.Equal(t, 26.67, s.OpenRate.Value, "human opens (50 - 10) over 150 sends")
	require.Equal(t, 8.67, s.ClickRate.Value, "human clicks (15 - 2) over 150 sends")
	require.Equal(t, 4.0, s.ReplyRate.Value, "6 answered over 150")
	require.Equal(t, 3.33, s.BounceRate.Value, "5 bounced over 150")

	require.Len(t, d.DailyTrend, 7, "one point per day, zero days included")
	require.Equal(t, dashDay(6), d.DailyTrend[0].Date.Value, "oldest first: 6 days ago")
	require.Equal(t, 50, d.DailyTrend[0].Sent.Value)
	require.Equal(t, dashDay(0), d.DailyTrend[6].Date.Value)
	require.Equal(t, api.DailyTrendPoint{Date: api.NewOptDate(dashDay(0)), Sent: api.NewOptInt(100), Opens: api.NewOptInt(40),
		Clicks: api.NewOptInt(12), Replies: api.NewOptInt(5)}, d.DailyTrend[6])
	for _, p := range d.DailyTrend[1:6] {
		require.Zero(t, p.Sent.Value, p.Date.Value)
	}

	// An unknown period falls back to 7d rather than being refused.
	for _, p := range []string{"7d", "365d", "", "week"} {
		d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{Period: api.NewOptString(p)})
		require.NoError(t, err, p)
		require.Equal(t, api.DashboardAnalyticsPeriod7d, d.Period, p)
		require.Equal(t, 150, d.OverallStats.TotalEmailsSent.Value, p)
	}
	d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{Period: api.NewOptString("30d")})
	require.NoError(t, err)
	require.Equal(t, api.DashboardAnalyticsPeriod30d, d.Period)
	require.Equal(t, 1150, d.OverallStats.TotalEmailsSent.Value)
	require.Len(t, d.DailyTrend, 30)
	d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{Period: api.NewOptString("90d")})
	require.NoError(t, err)
	require.Equal(t, 1157, d.OverallStats.TotalEmailsSent.Value, "89 days ago is in 90d, 90 days ago is not")
	require.Len(t, d.DailyTrend, 90)

	// The days turn at midnight UTC: the last second of today still sees 6 days ago, the next day's first
	// second does not.
	env.Clock.Set(time.Date(2026, 3, 15, 23, 59, 59, 0, time.UTC))
	d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Equal(t, 150, d.OverallStats.TotalEmailsSent.Value)
	env.Clock.Set(time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC))
	d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Equal(t, 100, d.OverallStats.TotalEmailsSent.Value, "2026-03-09 is now 7 days ago")
	require.Equal(t, time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC), d.DailyTrend[6].Date.Value)

	// Another organization sees none of it.
	other := env.Bootstrap(t, "globex")
	d, err = env.Client(t, other.APIKey).AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{Period: api.NewOptString("90d")})
	require.NoError(t, err)
	require.Zero(t, d.OverallStats.TotalEmailsSent.Value)
	require.Zero(t, d.OverallStats.OpenRate.Value, "no sends, no rate")
	require.Len(t, d.DailyTrend, 90)
}

func TestDashboardListsTopCampaignsRecentActivityAndActiveCampaigns(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Clock.Set(dashNow)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID

	a, b, old := seedCampaign(t, env, org, "Alpha"), seedCampaign(t, env, org, "Beta"), seedCampaign(t, env, org, "Old")
	orgExec(t, env, org, `UPDATE campaigns SET status = 'active' WHERE id = $1`, b)
	seedCampaign(t, env, org, "Silent")
	dashCampaignDay(t, env, org, a, dashDay(0), metrics.Counters{Sent: 10, Opens: 5, MachineOpens: 1, Clicks: 2, Replies: 3})
	dashCampaignDay(t, env, org, b, dashDay(0), metrics.Counters{Sent: 60, Opens: 30, Replies: 1})
	dashCampaignDay(t, env, org, b, dashDay(3), metrics.Counters{Sent: 40, Opens: 10, MachineOpens: 10, Replies: 2})
	dashCampaignDay(t, env, org, old, dashDay(7), metrics.Counters{Sent: 500, Replies: 50})

	d, err := c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Equal(t, []api.TopCampaign{
		{CampaignID: api.NewOptUUID(b), Name: api.NewOptString("Beta"), Status: api.NewOptString("active"), EmailsSent: api.NewOptInt(100),
			OpenRate: api.NewOptFloat64(30), ClickRate: api.NewOptFloat64(0), ReplyRate: api.NewOptFloat64(3)},
		{CampaignID: api.NewOptUUID(a), Name: api.NewOptString("Alpha"), Status: api.NewOptString("draft"), EmailsSent: api.NewOptInt(10),
			OpenRate: api.NewOptFloat64(40), ClickRate: api.NewOptFloat64(20), ReplyRate: api.NewOptFloat64(30)},
	}, d.TopCampaigns, "3 replies each: more sends first; Old sent 7 days ago, Silent never")
	require.Equal(t, 1, d.OverallStats.ActiveCampaigns.Value)
	d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{Period: api.NewOptString("30d")})
	require.NoError(t, err)
	require.Len(t, d.TopCampaigns, 3)
	require.Equal(t, old, d.TopCampaigns[0].CampaignID.Value, "50 replies in 30d")

	contact := uuid.New()
	orgExec(t, env, org, `INSERT INTO contacts (organization_id, id, email) VALUES ($1, $2, 'grace@example.com')`, org, contact)
	for i := range 12 {
		id := dashV7At(dashNow.Add(time.Duration(i-12) * time.Minute))
		var who any
		if i%2 == 0 {
			who = contact
		}
		orgExec(t, env, org, `INSERT INTO campaign_logs (organization_id, campaign_id, id, contact_id, event_type, created_at)
			VALUES ($1, $2, $3, $4, 'email_sent', $5)`, org, a, id, who, dashNow.Add(time.Duration(i-12)*time.Minute))
	}
	d, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Len(t, d.RecentActivity, 10, "the ten newest entries")
	require.Equal(t, api.RecentActivity{Type: api.NewOptString("email_sent"), CampaignID: api.NewOptUUID(a), CampaignName: api.NewOptString("Alpha"),
		Timestamp: api.NewOptDateTime(dashNow.Add(-time.Minute))}, d.RecentActivity[0], "newest first; an entry without a contact names none")
	require.Equal(t, "grace@example.com", d.RecentActivity[1].ContactEmail.Value)
	require.Equal(t, contact, d.RecentActivity[1].ContactID.Value)
	require.Equal(t, dashNow.Add(-10*time.Minute), d.RecentActivity[9].Timestamp.Value)
}

func TestDashboardHealthBucketsAreExclusiveByMostSevereState(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Clock.Set(dashNow)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID

	healthy := dashMailbox(t, env, org, "healthy@acme.example")
	warned := dashMailbox(t, env, org, "warned@acme.example")
	dashOpenError(t, env, org, warned, "EMAIL_RATE_LIMITED", "warning")
	orgExec(t, env, org, `UPDATE mailboxes SET auth_state = 'failing', auth_failing_since = $2 WHERE id = $1`, warned, dashNow.Add(-time.Hour))
	failing := dashMailbox(t, env, org, "failing@acme.example")
	dashOpenError(t, env, org, failing, "EMAIL_AUTH_ERROR", "error")
	dashOpenError(t, env, org, failing, "EMAIL_RATE_LIMITED", "warning")
	revoked := dashMailbox(t, env, org, "revoked@acme.example")
	orgExec(t, env, org, `UPDATE mailboxes SET status = 'revoked' WHERE id = $1`, revoked)
	inactive := dashMailbox(t, env, org, "inactive@acme.example")
	orgExec(t, env, org, `UPDATE mailboxes SET status = 'inactive' WHERE id = $1`, inactive)
	orgExec(t, env, org, `INSERT INTO mailbox_errors (organization_id, id, mailbox_id, code, severity, title, message, resolved_at)
		VALUES ($1, $2, $3, 'EMAIL_AUTH_ERROR', 'error', 'Login failed', 'fixed since', now())`, org, uuid.New(), healthy)

	d, err := c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Equal(t, [4]int{5, 1, 2, 2}, dashBuckets(t, d.AccountHealth), "a resolved error is history; an error with a warning counts once, as an error")
	require.Equal(t, 3, d.OverallStats.ActiveAccounts.Value, "revoked and inactive are not active")

	// A mailbox-scoped key counts its own mailboxes only.
	scoped := newKey(t, c, api.CreateAPIKey{Name: "one box", Permissions: int64(auth.ReadAnalytics), AllowedEmailAccounts: []uuid.UUID{failing, inactive}})
	d, err = env.Client(t, scoped.Secret).AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	require.NoError(t, err)
	require.Equal(t, [4]int{2, 0, 1, 1}, dashBuckets(t, d.AccountHealth))
	require.Equal(t, 1, d.OverallStats.ActiveAccounts.Value)
}

func TestOrganizationReportsNeedACredentialAndReadAnalytics(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	anon := env.Client(t, "")
	_, err := anon.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	requireAPIError(t, err, 401, "missing_credential")
	_, err = anon.AnalyticsUsage(ctx, api.AnalyticsUsageParams{})
	requireAPIError(t, err, 401, "missing_credential")
	_, err = anon.AnalyticsAccountsList(ctx)
	requireAPIError(t, err, 401, "missing_credential")

	other := newKey(t, c, api.CreateAPIKey{Name: "contacts only", Permissions: int64(auth.ReadContacts)})
	oc := env.Client(t, other.Secret)
	_, err = oc.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	requireAPIError(t, err, 403, "missing_scope")
	_, err = oc.AnalyticsUsage(ctx, api.AnalyticsUsageParams{})
	requireAPIError(t, err, 403, "missing_scope")
	_, err = oc.AnalyticsAccountsList(ctx)
	requireAPIError(t, err, 403, "missing_scope")
	_, err = oc.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: uuid.New()})
	requireAPIError(t, err, 403, "missing_scope")
}
