package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
)

func TestUsageCountsMailboxesCampaignsAndContactsOverItsPeriod(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Clock.Set(dashNow)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID

	for daysAgo, sent := range map[int]int64{0: 10, 1: 20, 6: 40, 7: 80, 29: 160, 30: 320} {
		dashOrgDay(t, env, org, dashDay(daysAgo), "campaign", metrics.Counters{Sent: sent})
	}
	dashOrgDay(t, env, org, dashDay(0), "direct", metrics.Counters{Sent: 1000})
	dashOrgDay(t, env, org, dashDay(0), "warmup", metrics.Counters{Sent: 2000})

	seedCampaign(t, env, org, "Draft")
	orgExec(t, env, org, `UPDATE campaigns SET status = 'active' WHERE id = $1`, seedCampaign(t, env, org, "Live"))
	orgExec(t, env, org, `UPDATE campaigns SET status = 'paused_no_accounts' WHERE id = $1`, seedCampaign(t, env, org, "Stuck"))
	orgExec(t, env, org, `UPDATE campaigns SET status = 'completed' WHERE id = $1`, seedCampaign(t, env, org, "Done"))

	warming := dashMailbox(t, env, org, "warming@acme.example")
	orgExec(t, env, org, `UPDATE mailboxes SET warmup = $2 WHERE id = $1`, warming, dashNow.Add(-48*time.Hour))
	paused := dashMailbox(t, env, org, "paused@acme.example")
	orgExec(t, env, org, `UPDATE mailboxes SET warmup = $2, warmup_paused_at = $2 WHERE id = $1`, paused, dashNow.Add(-time.Hour))
	broken := dashMailbox(t, env, org, "broken@acme.example")
	orgExec(t, env, org, `UPDATE mailboxes SET status = 'inactive' WHERE id = $1`, broken)
	dashOpenError(t, env, org, broken, "EMAIL_SERVER_ERROR", "warning")

	// Contacts are added at the first instant of today, the last instant of yesterday, and one unsubscribed.
	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{midnight, midnight.Add(-time.Millisecond), midnight.Add(-48 * time.Hour)} {
		orgExec(t, env, org, `INSERT INTO contacts (organization_id, id, email, created_at) VALUES ($1, $2, $3, $4)`,
			org, dashV7At(at), uuid.NewString()+"@example.com", at)
	}
	orgExec(t, env, org, `UPDATE contacts SET subscribed = false WHERE created_at < $1`, midnight.Add(-time.Hour))

	u, err := c.AnalyticsUsage(ctx, api.AnalyticsUsageParams{})
	require.NoError(t, err)
	require.Equal(t, api.UsageOverviewPeriodDay, u.Period)
	require.False(t, u.UserID.Set, "an API key acts for no one")
	require.Equal(t, api.UsageOverviewEmailAccounts{Total: api.NewOptInt(3), Active: api.NewOptInt(2), InWarmup: api.NewOptInt(1),
		WithErrors: api.NewOptInt(1)}, u.EmailAccounts.Value, "a paused warmup is not warming; the inactive box has an open error")
	require.Equal(t, api.UsageOverviewCampaigns{Total: api.NewOptInt(4), Active: api.NewOptInt(1), Paused: api.NewOptInt(1),
		Draft: api.NewOptInt(1), EmailsSent: api.NewOptInt(10)}, u.Campaigns.Value, "today's campaign sends only")
	require.Equal(t, api.UsageOverviewContacts{Total: api.NewOptInt(3), Subscribed: api.NewOptInt(2), AddedToday: api.NewOptInt(1)},
		u.Contacts.Value, "00:00:00.000 today is today, 23:59:59.999 yesterday is not")
	require.Equal(t, api.UsageOverviewAPI{TotalCalls: api.NewOptInt(0), DailyLimit: api.NewOptInt(0), TopEndpoints: []api.UsageOverviewAPITopEndpointsItem{}},
		u.API.Value, "a placeholder: the API key usage endpoints report calls")

	// week is today and the 6 days before (10 + 20 + 40), month the 30 days to 29 days ago (+ 80 + 160).
	for period, want := range map[string]int{"week": 70, "month": 310, "day": 10, "year": 10, "": 10} {
		u, err = c.AnalyticsUsage(ctx, api.AnalyticsUsageParams{Period: api.NewOptString(period)})
		require.NoError(t, err, period)
		require.Equal(t, want, u.Campaigns.Value.EmailsSent.Value, period)
		if period == "week" || period == "month" {
			require.Equal(t, api.UsageOverviewPeriod(period), u.Period)
		} else {
			require.Equal(t, api.UsageOverviewPeriodDay, u.Period, "an unknown period falls back to day")
		}
	}

	// A person's session names them.
	u, err = env.Owner(t, "acme").AnalyticsUsage(ctx, api.AnalyticsUsageParams{})
	require.NoError(t, err)
	require.Equal(t, boot.UserID, u.UserID.Value)

	// At the next midnight today's contact and sends are yesterday's.
	env.Clock.Set(midnight.Add(24 * time.Hour))
	u, err = c.AnalyticsUsage(ctx, api.AnalyticsUsageParams{})
	require.NoError(t, err)
	require.Zero(t, u.Contacts.Value.AddedToday.Value)
	require.Zero(t, u.Campaigns.Value.EmailsSent.Value)

	// Another organization counts nothing of it.
	u, err = env.Client(t, env.Bootstrap(t, "globex").APIKey).AnalyticsUsage(ctx, api.AnalyticsUsageParams{Period: api.NewOptString("month")})
	require.NoError(t, err)
	require.Zero(t, u.Campaigns.Value.Total.Value)
	require.Zero(t, u.Campaigns.Value.EmailsSent.Value)
	require.Zero(t, u.EmailAccounts.Value.Total.Value)
	require.Zero(t, u.Contacts.Value.Total.Value)
}
