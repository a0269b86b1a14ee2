package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

func TestAccountStatusShowsHealthErrorsUsageAndWarmup(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	// 02:00 UTC on 15 March is still 14 March in New York: the cap's day.
	now := time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC)
	env.Clock.Set(now)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	today := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)

	warm := dashMailbox(t, env, org, "warm@acme.example")
	orgExec(t, env, org, `UPDATE mailboxes SET timezone = 'America/New_York', campaign_limit = 40, warmup = $2, warmup_base = 2,
		warmup_increase = 2, warmup_max = 30, warmup_reply_rate = 35, warmup_health = 'throttled', last_synced_at = $3 WHERE id = $1`,
		warm, now.Add(-3*24*time.Hour-time.Hour), now.Add(-time.Minute))
	orgExec(t, env, org, `INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total) VALUES ($1, $2, '2026-03-14', 7, 9),
		($1, $2, '2026-03-15', 99, 99)`, org, warm)
	dashMailboxDay(t, env, org, warm, today, "warmup", metrics.Counters{Sent: 5})
	dashMailboxDay(t, env, org, warm, today.AddDate(0, 0, -6), "warmup", metrics.Counters{Sent: 95, BouncesHard: 5, PlacementInbox: 80, PlacementSpam: 20})
	dashMailboxDay(t, env, org, warm, today.AddDate(0, 0, -7), "warmup", metrics.Counters{Sent: 1000, BouncesHard: 1000})
	dashMailboxDay(t, env, org, warm, today, "campaign", metrics.Counters{Sent: 3})
	dashOpenError(t, env, org, warm, "EMAIL_RATE_LIMITED", "warning")
	orgExec(t, env, org, `INSERT INTO mailbox_sync (organization_id, mailbox_id, last_error) VALUES ($1, $2, 'IMAP: connection reset')`, org, warm)
	camp := seedCampaign(t, env, org, "Spring")
	orgExec(t, env, org, `UPDATE campaigns SET status = 'active' WHERE id = $1`, camp)
	orgExec(t, env, org, `INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id) VALUES ($1, $2, $3)`, org, camp, warm)

	stopped := dashMailbox(t, env, org, "stopped@acme.example")
	dashMailboxDay(t, env, org, stopped, today.AddDate(0, 0, -40), "warmup", metrics.Counters{Sent: 4})
	cold := dashMailbox(t, env, org, "cold@acme.example")
	draft := seedCampaign(t, env, org, "Draft")
	orgExec(t, env, org, `INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id) VALUES ($1, $2, $3)`, org, draft, cold)
	dashOpenError(t, env, org, cold, "EMAIL_AUTH_ERROR", "critical")

	d, err := c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: warm})
	require.NoError(t, err)
	require.Equal(t, "warm@acme.example", d.Email)
	require.Equal(t, "smtp_imap", d.Provider)
	require.Equal(t, "active", d.Status)
	require.True(t, d.LastSyncedAt.Value.Equal(now.Add(-time.Minute)))
	require.Equal(t, "warning", d.Health.Status.Value)
	require.Equal(t, 70, d.Health.Score.Value, "three warnings: the error log's, the failed sync and warmup's throttled")
	require.Len(t, d.Health.Issues, 3)
	require.Contains(t, d.Health.Issues[1], "connection reset")
	require.Len(t, d.Errors, 1)
	require.Equal(t, "EMAIL_RATE_LIMITED", d.Errors[0].ErrorCode.Value)
	require.Equal(t, "warning", d.Errors[0].Severity.Value)
	require.Equal(t, api.AccountDailyUsage{Date: api.NewOptDate(time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)), CampaignSent: api.NewOptInt(7),
		CampaignLimit: api.NewOptInt(40), WarmupSent: api.NewOptInt(5), WarmupLimit: api.NewOptInt(8)}, d.DailyUsage,
		"the cap's counter of its New York day; warmup today (UTC) against the ramp: 2 + 2 x 3 active days")
	require.True(t, d.InCampaign.Value)
	ws := d.WarmupStatus.Value
	require.True(t, ws.Enabled.Value)
	require.False(t, ws.Paused.Value)
	require.True(t, ws.StartedAt.Value.Equal(now.Add(-3*24*time.Hour-time.Hour)))
	require.Equal(t, api.WarmupStatus{Enabled: ws.Enabled, Paused: ws.Paused, StartedAt: ws.StartedAt, CurrentVolume: api.NewOptInt(5),
		TargetVolume: api.NewOptInt(8), MaxVolume: api.NewOptInt(30), ReplyRate: api.NewOptFloat64(35), DaysActive: api.NewOptInt(3)}, ws)
	wh := d.WarmupHealth.Value
	require.Equal(t, api.WarmupHealthStateThrottled, wh.State.Value)
	require.Equal(t, 60, wh.Score.Value, "last 7 days: 5 bounces of 100 sends cost 20 points, 20 percent spam placement 20 more")
	//lint:ignore SA1019 the deprecated spam_score is still filled
	require.Equal(t, 20, wh.SpamScore.Value)
	require.True(t, wh.EvaluatedAt.Value.Equal(now))

	d, err = c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: stopped})
	require.NoError(t, err)
	require.True(t, d.WarmupStatus.Set, "warmup ran once: its days are in the rollup")
	require.False(t, d.WarmupStatus.Value.Enabled.Value)
	require.False(t, d.WarmupHealth.Set, "not in a warmup pool")
	require.Equal(t, api.AccountHealth{Status: api.NewOptString("healthy"), Score: api.NewOptInt(100), Issues: []string{}}, d.Health)
	require.False(t, d.InCampaign.Value)

	d, err = c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: cold})
	require.NoError(t, err)
	require.False(t, d.WarmupStatus.Set, "warmup never enabled")
	require.False(t, d.WarmupHealth.Set)
	require.Equal(t, "error", d.Health.Status.Value)
	require.Equal(t, 60, d.Health.Score.Value)
	require.False(t, d.InCampaign.Value, "a draft campaign does not send")
	require.Equal(t, api.AccountDailyUsage{Date: api.NewOptDate(today), CampaignSent: api.NewOptInt(0), CampaignLimit: api.NewOptInt(50),
		WarmupSent: api.NewOptInt(0), WarmupLimit: api.NewOptInt(0)}, d.DailyUsage, "UTC without a time zone")

	list, err := c.AnalyticsAccountsList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 3)
	require.Equal(t, []uuid.UUID{cold, stopped, warm}, []uuid.UUID{list.Data[0].ID, list.Data[1].ID, list.Data[2].ID}, "newest first")
	require.Equal(t, d.Health, list.Data[0].Health, "the list and the one account compute alike")
	require.Equal(t, 7, list.Data[2].DailyUsage.CampaignSent.Value)

	// Another organization sees none of them.
	other := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = other.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: warm})
	requireAPIError(t, err, 404, "not_found")
	olist, err := other.AnalyticsAccountsList(ctx)
	require.NoError(t, err)
	require.Empty(t, olist.Data)

	// A mailbox-scoped key lists and reads its own mailboxes only.
	scoped := newKey(t, c, api.CreateAPIKey{Name: "one box", Permissions: int64(auth.ReadAnalytics), AllowedEmailAccounts: []uuid.UUID{stopped}})
	sc := env.Client(t, scoped.Secret)
	list, err = sc.AnalyticsAccountsList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.Equal(t, stopped, list.Data[0].ID)
	_, err = sc.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: stopped})
	require.NoError(t, err)
	_, err = sc.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: warm})
	requireAPIError(t, err, 404, "mailbox_not_found")
}

func TestAccountHealthTurnsAnAuthFailureIntoAnErrorAfterTheGrace(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Clock.Set(dashNow)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	box := dashMailbox(t, env, org, "box@acme.example")
	grace := env.Config.DomainAuthGrace
	orgExec(t, env, org, `UPDATE mailboxes SET auth_state = 'failing', auth_failing_since = $2 WHERE id = $1`, box, dashNow.Add(-grace))
	d, err := c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: box})
	require.NoError(t, err)
	require.Equal(t, "warning", d.Health.Status.Value, "at the end of the grace, still a warning")
	require.Equal(t, 90, d.Health.Score.Value)
	env.Clock.Set(dashNow.Add(time.Second))
	d, err = c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: box})
	require.NoError(t, err)
	require.Equal(t, "error", d.Health.Status.Value, "past it, sending stopped")
	require.Equal(t, 60, d.Health.Score.Value)
}

func TestAccountListFailsWholeWhenOneStatusCannotBeComputed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	good, bad := dashMailbox(t, env, org, "good@acme.example"), dashMailbox(t, env, org, "bad@acme.example")

	// A severity the health rules do not know (the schema forbids it; the test drops that wall as the owner).
	owner, err := pgx.Connect(ctx, env.DB.URL)
	require.NoError(t, err)
	defer owner.Close(ctx)
	_, err = owner.Exec(ctx, `ALTER TABLE mailbox_errors DROP CONSTRAINT mailbox_errors_severity_check`)
	require.NoError(t, err)
	dashOpenError(t, env, org, bad, "EMAIL_ODD", "apocalyptic")

	_, err = c.AnalyticsAccountsList(ctx)
	requireAPIError(t, err, 500, "internal_error")
	_, err = c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{})
	requireAPIError(t, err, 500, "internal_error")
	_, err = c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: bad})
	requireAPIError(t, err, 500, "internal_error")
	d, err := c.AnalyticsAccountGet(ctx, api.AnalyticsAccountGetParams{ID: good})
	require.NoError(t, err, "the others still answer one by one")
	require.Equal(t, "healthy", d.Health.Status.Value)
}
