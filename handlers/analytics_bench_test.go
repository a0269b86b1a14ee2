package handlers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/analytics/accounts"
	"github.com/outflowhq/outflow/internal/analytics/campaignstats"
	"github.com/outflowhq/outflow/internal/analytics/dashboard"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Shape of the analytics benchmark's organization: 10,020,000 campaign sends across 500 campaigns.
const (
	benchCampaigns     = 500
	benchCampaignDays  = 120 // each campaign sends on 120 consecutive UTC days, the last of them 0 to 59 days ago
	benchSendMailboxes = 100
	benchLeadCampaigns = 10   // campaigns with their leads seeded (the campaign report counts its leads)
	benchLeads         = 7000 // leads of each of those
	benchEngaged       = 2000 // distinct people engaging with each campaign, per engagement dimension
	benchLogs          = 200_000
)

// benchCounters are the rollup counter columns, in the order the seed writes them.
var benchCounters = []string{"sent", "opens", "machine_opens", "clicks", "machine_clicks", "replies", "intent_positive",
	"intent_negative", "intent_question", "intent_neutral", "intent_out_of_office", "intent_automated", "bounces_hard",
	"bounces_soft", "complaints", "unsubscribes"}

// seedAnalytics fills org with the rollups 10,020,000 campaign sends across benchCampaigns campaigns leave as
// of the UTC day today: three email steps per campaign (the first split between two A/B variants), each
// campaign-day sending 42 + 42 + 50 + 33 messages with fixed shares opened, clicked, answered, bounced and so
// on; the campaign, hour, mailbox and organization rows are sums of the step rows, as the feeds keep them
// (each campaign-day spread over ten working hours, every hour's share summing back to the day). Each campaign
// sends from one of benchSendMailboxes mailboxes (campaign_mailboxes, the mailboxes' daily counters and sync
// rows as sending leaves them), the campaign logs hold benchLogs entries, every campaign has engagement rows,
// and the first benchLeadCampaigns campaigns have their leads. It answers the campaigns by number (those with
// leads first).
func seedAnalytics(b *testing.B, env *apitest.Env, org uuid.UUID, today time.Time) []uuid.UUID {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	exec := func(sql string, args ...any) {
		b.Helper()
		if err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	// id is the deterministic id of the n-th generated row of a kind ('m' mailbox, 'c' campaign, 's' step,
	// 'v' variant, 'p' person).
	id := func(kind, n string) string { return "md5($1::uuid::text || '" + kind + "' || (" + n + ")::text)::uuid" }
	cols := strings.Join(benchCounters, ", ")
	sums := "sum(" + strings.Join(benchCounters, "), sum(") + ")"
	exec(`INSERT INTO mailboxes (organization_id, id, email, name, provider)
SELECT $1, `+id("m", "g")+`, 'box' || g || '@acme.example', 'Box ' || g, (ARRAY['gmail', 'outlook', 'smtp_imap'])[g % 3 + 1]
FROM generate_series(0, $2::int - 1) g`, org, benchSendMailboxes)
	exec(`INSERT INTO mailbox_sync (organization_id, mailbox_id, backfill_status, last_synced_at)
SELECT $1, `+id("m", "g")+`, 'complete', now() FROM generate_series(0, $2::int - 1) g`, org, benchSendMailboxes)
	// Campaign g is created 120 + g % 60 days before today and sends on the 120 days after.
	exec(`INSERT INTO campaigns (organization_id, id, name, status, created_at)
SELECT $1, `+id("c", "g")+`, 'Campaign ' || g, CASE WHEN g % 5 = 0 THEN 'paused' ELSE 'active' END,
  (($3::date - $4::int - g % 60)::timestamp + interval '9 hours') AT TIME ZONE 'UTC'
FROM generate_series(0, $2::int - 1) g`, org, benchCampaigns, today, benchCampaignDays)
	exec(`INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id)
SELECT $1, `+id("c", "g")+`, `+id("m", "g % $3::int")+` FROM generate_series(0, $2::int - 1) g`, org, benchCampaigns, benchSendMailboxes)
	exec(`INSERT INTO campaign_steps (organization_id, campaign_id, id, position, name, subject, body_plain)
SELECT $1, `+id("c", "g")+`, `+id("s", "g * 3 + p")+`, p, 'Step ' || (p + 1), 'Subject ' || p, 'Body'
FROM generate_series(0, $2::int - 1) g, generate_series(0, 2) p`, org, benchCampaigns)
	// The step rows: per campaign-day, step 1 as variants A and B (42 sends each), step 2 (50) and step 3 (33).
	exec(`INSERT INTO analytics_step_days (organization_id, campaign_id, step_id, variant_id, day, `+cols+`)
SELECT $1, `+id("c", "g")+`, `+id("s", "g * 3 + v.p")+`,
  CASE WHEN v.k < 0 THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE `+id("v", "g * 2 + v.k")+` END,
  $4::date - ($3::int - 1) - g % 60 + d,
  v.n, v.n * 4 / 10, v.n / 10, v.n / 8, v.n / 40, v.n / 20, (g + d + v.p) % 2, (g + d) % 5 / 4, (g + 2 * d) % 6 / 5,
  (g + d + v.k) % 3 / 2, (g + d) % 9 / 8, (g + d) % 11 / 10, v.n / 40, (g + 3 * d) % 4 / 3, (g + d + v.p) % 50 / 49, v.n / 45
FROM generate_series(0, $2::int - 1) g, generate_series(0, $3::int - 1) d,
  (VALUES (0, 0, 42), (0, 1, 42), (1, -1, 50), (2, -1, 33)) v (p, k, n)`, org, benchCampaigns, benchCampaignDays, today)
	exec(`INSERT INTO analytics_campaign_days (organization_id, campaign_id, day, `+cols+`)
SELECT organization_id, campaign_id, day, `+sums+` FROM analytics_step_days WHERE organization_id = $1 GROUP BY 1, 2, 3`, org)
	// Ten working hours a day (08:00 to 17:00 UTC), each counter split so the hours sum back to the day.
	hourly := make([]string, len(benchCounters))
	for i, c := range benchCounters {
		hourly[i] = c + " / 10 + (h - 8 < " + c + " % 10)::int"
	}
	exec(`INSERT INTO analytics_campaign_hours (organization_id, campaign_id, hour, `+cols+`)
SELECT organization_id, campaign_id, (day + make_interval(hours => h)) AT TIME ZONE 'UTC', `+strings.Join(hourly, ", ")+`
FROM analytics_campaign_days, generate_series(8, 17) h WHERE organization_id = $1`, org)
	exec(`INSERT INTO analytics_mailbox_days (organization_id, mailbox_id, day, kind, provider, `+cols+`)
SELECT d.organization_id, m.id, d.day, 'campaign', m.provider, `+sums+`
FROM analytics_campaign_days d
JOIN campaign_mailboxes cm ON cm.organization_id = d.organization_id AND cm.campaign_id = d.campaign_id
JOIN mailboxes m ON m.organization_id = cm.organization_id AND m.id = cm.mailbox_id
WHERE d.organization_id = $1 GROUP BY 1, 2, 3, 4, 5`, org)
	exec(`INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total)
SELECT organization_id, mailbox_id, day, sent, sent FROM analytics_mailbox_days WHERE organization_id = $1`, org)
	exec(`INSERT INTO analytics_org_days (organization_id, day, kind, `+cols+`)
SELECT organization_id, day, 'campaign', `+sums+` FROM analytics_campaign_days WHERE organization_id = $1 GROUP BY 1, 2`, org)
	exec(`INSERT INTO analytics_engagement (organization_id, campaign_id, dimension, key, contact_id, clicked)
SELECT $1, `+id("c", "g")+`, dim, CASE dim WHEN 'country' THEN (ARRAY['US', 'GB', 'DE', 'FR', 'NL', 'ES', 'IT', 'CA', 'AU', 'SE', 'BR', ''])[p % 12 + 1]
  WHEN 'client' THEN (ARRAY['Apple Mail', 'Gmail', 'Outlook', 'Thunderbird', 'Yahoo Mail', ''])[p % 6 + 1]
  ELSE (ARRAY['desktop', 'mobile', 'tablet', ''])[p % 4 + 1] END, `+id("p", "p")+`, p % 5 = 0
FROM generate_series(0, $2::int - 1) g, generate_series(0, $3::int - 1) p, unnest(ARRAY['country', 'client', 'device']) dim`,
		org, benchCampaigns, benchEngaged)
	exec(`INSERT INTO contacts (organization_id, id, email)
SELECT $1, `+id("p", "p")+`, 'lead' || p || '@client.example' FROM generate_series(0, $2::int - 1) p`, org, benchLeads)
	exec(`INSERT INTO campaign_leads (organization_id, campaign_id, contact_id, state, sent, opened, machine_opened, clicked, replied, bounced)
SELECT $1, `+id("c", "g")+`, `+id("p", "p")+`, CASE WHEN p % 3 = 0 THEN 'completed' WHEN p % 3 = 1 THEN 'active' ELSE 'pending' END,
  1 + p % 3, (p % 5 < 2)::int, (p % 10 = 2)::int, (p % 8 = 0)::int, (p % 20 = 0)::int, (p % 50 = 0)::int
FROM generate_series(0, $2::int - 1) g, generate_series(0, $3::int - 1) p`, org, benchLeadCampaigns, benchLeads)
	exec(`INSERT INTO campaign_logs (organization_id, campaign_id, id, contact_id, event_type, message, created_at)
SELECT $1, `+id("c", "g % $3::int")+`, gen_random_uuid(), CASE WHEN g % 4 = 0 THEN NULL ELSE `+id("p", "g % $4::int")+` END,
  (ARRAY['email_sent', 'email_opened', 'reply_received', 'lead_completed'])[g % 4 + 1], 'Event ' || g, now() - make_interval(secs => g * 30)
FROM generate_series(0, $2::int - 1) g`, org, benchLogs, benchLeadCampaigns, benchLeads)
	// As autovacuum would after a load this size (the app role may not VACUUM: it does not own the tables).
	if _, err := env.DB.OwnerPool(b).Exec(ctx, `VACUUM ANALYZE mailboxes, mailbox_sync, mailbox_send_days, campaigns, campaign_mailboxes,
  campaign_steps, contacts, campaign_leads, campaign_logs, analytics_org_days, analytics_campaign_days, analytics_step_days,
  analytics_campaign_hours, analytics_mailbox_days, analytics_engagement`); err != nil {
		b.Fatal(err)
	}
	var camps []uuid.UUID
	err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM campaigns WHERE organization_id = $1 ORDER BY substring(name from 10)::int`, org)
		if err != nil {
			return err
		}
		camps, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded the rollups of %d campaign sends across %d campaigns in %s", benchCampaigns*benchCampaignDays*167, len(camps),
		time.Since(start).Round(time.Millisecond))
	return camps
}

// BenchmarkAnalyticsReports measures GET /v1/analytics/dashboard (7d and 90d) and GET
// /v1/analytics/campaigns/{id} over an organization whose rollups hold 10,020,000 campaign sends across 500
// campaigns, next to the statements the dashboard, accounts and campaignstats packages run, run directly in
// one transaction in the same order. Each sub-benchmark reports its p95 in ms; the target is outflow
// p95 within 1.5x + 5 ms of the SQL's and under 50 ms.
func BenchmarkAnalyticsReports(b *testing.B) {
	env := apitest.New(b)
	boot := env.Bootstrap(b, "acme")
	org := boot.OrganizationID
	now := time.Now().UTC()
	env.Clock.Set(now) // the API's today is the baseline's, whenever the run crosses midnight
	today := accounts.UTCDay(now)
	camps := seedAnalytics(b, env, org, today)
	key := newKey(b, env.Client(b, boot.APIKey), api.CreateAPIKey{Name: "reports", Permissions: int64(auth.ReadAnalytics),
		RateLimitPerMinute: api.NewOptInt(10_000)})
	c := env.Client(b, key.Secret)
	ctx := context.Background()
	q := dbq.New()

	// dashboardSQL runs what dashboard.Build runs for a period of days (accounts.List's statements included)
	// and answers the period's sends and the mailboxes counted.
	dashboardSQL := func(b *testing.B, days int) (sent int64, boxes int) {
		from := today.AddDate(0, 0, -(days - 1))
		err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := q.AnalyticsOrgDays(ctx, tx, dbq.AnalyticsOrgDaysParams{OrganizationID: org, Kind: "campaign", FromDay: from, ToDay: today})
			if err != nil {
				return err
			}
			for _, r := range rows {
				sent += r.Sent
			}
			if _, err := q.AnalyticsTopCampaigns(ctx, tx, dbq.AnalyticsTopCampaignsParams{OrganizationID: org, FromDay: from, ToDay: today,
				RowLimit: dashboard.TopCampaigns}); err != nil {
				return err
			}
			if _, err := q.AnalyticsRecentActivity(ctx, tx, dbq.AnalyticsRecentActivityParams{OrganizationID: org, RowLimit: dashboard.RecentActivity}); err != nil {
				return err
			}
			if _, err := q.AnalyticsCampaignCounts(ctx, tx, org); err != nil {
				return err
			}
			states, err := q.AnalyticsMailboxStates(ctx, tx, dbq.AnalyticsMailboxStatesParams{OrganizationID: org})
			if err != nil {
				return err
			}
			ids, mailboxDays := make([]uuid.UUID, len(states)), make([]time.Time, len(states))
			for i, s := range states {
				ids[i], mailboxDays[i] = s.Mailbox.ID, sending.MailboxDay(now, s.Mailbox.Timezone)
			}
			boxes = len(states)
			if _, err := q.AnalyticsMailboxOpenErrors(ctx, tx, dbq.AnalyticsMailboxOpenErrorsParams{OrganizationID: org, MailboxIds: ids}); err != nil {
				return err
			}
			if _, err := q.AnalyticsMailboxCappedToday(ctx, tx, dbq.AnalyticsMailboxCappedTodayParams{OrganizationID: org, MailboxIds: ids,
				Days: mailboxDays}); err != nil {
				return err
			}
			_, err = q.AnalyticsMailboxWarmup(ctx, tx, dbq.AnalyticsMailboxWarmupParams{OrganizationID: org, MailboxIds: ids, Today: today,
				Since: today.AddDate(0, 0, -(accounts.WarmupScoreDays - 1))})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return sent, boxes
	}
	dashboardAPI := func(b *testing.B, period string) (int64, int) {
		d, err := c.AnalyticsDashboard(ctx, api.AnalyticsDashboardParams{Period: api.NewOptString(period)})
		if err != nil {
			b.Fatal(err)
		}
		return int64(d.OverallStats.TotalEmailsSent.Value), d.AccountHealth.Total
	}
	// campaignSQL runs what campaignstats.Get runs and answers the campaign's sends and its leads.
	camp := camps[1] // active, with leads, sending until yesterday
	campaignSQL := func(b *testing.B) (sent, leads int64) {
		err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			head, err := q.AnalyticsCampaignHead(ctx, tx, dbq.AnalyticsCampaignHeadParams{OrganizationID: org, ID: camp})
			if err != nil {
				return err
			}
			t, err := q.AnalyticsCampaignTotals(ctx, tx, dbq.AnalyticsCampaignTotalsParams{OrganizationID: org, CampaignID: camp})
			if err != nil {
				return err
			}
			if _, err := q.AnalyticsCampaignSteps(ctx, tx, dbq.AnalyticsCampaignStepsParams{OrganizationID: org, CampaignID: camp}); err != nil {
				return err
			}
			_, err = q.AnalyticsCampaignEngagement(ctx, tx, dbq.AnalyticsCampaignEngagementParams{OrganizationID: org, CampaignID: camp,
				RowLimit: campaignstats.EngagementTop})
			sent, leads = t.Sent, head.TotalContacts
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return sent, leads
	}
	campaignAPI := func(b *testing.B) (int64, int64) {
		r, err := c.AnalyticsCampaignGet(ctx, api.AnalyticsCampaignGetParams{ID: camp})
		if err != nil {
			b.Fatal(err)
		}
		return int64(r.Summary.EmailsSent.Value), int64(r.Summary.TotalContacts.Value)
	}

	type pair struct{ a, b int64 }
	cases := []struct {
		name        string
		direct, via func(*testing.B) pair
	}{
		{"dashboard_7d", func(b *testing.B) pair { s, n := dashboardSQL(b, 7); return pair{s, int64(n)} },
			func(b *testing.B) pair {
				s, n := dashboardAPI(b, "7d")
				return pair{s, int64(n)}
			}},
		{"dashboard_90d", func(b *testing.B) pair { s, n := dashboardSQL(b, 90); return pair{s, int64(n)} },
			func(b *testing.B) pair {
				s, n := dashboardAPI(b, "90d")
				return pair{s, int64(n)}
			}},
		{"campaign", func(b *testing.B) pair { s, n := campaignSQL(b); return pair{s, n} },
			func(b *testing.B) pair { s, n := campaignAPI(b); return pair{s, n} }},
	}
	for _, tc := range cases {
		if d, v := tc.direct(b), tc.via(b); d != v || d.a == 0 || d.b == 0 {
			b.Fatalf("%s: direct SQL counted %d sends and %d mailboxes or leads, the API %d and %d", tc.name, d.a, d.b, v.a, v.b)
		}
		for _, run := range []struct {
			leaf string
			fn   func(*testing.B) pair
		}{{"baseline", tc.direct}, {"outflow", tc.via}} {
			b.Run(tc.name+"/"+run.leaf, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					t0 := time.Now()
					run.fn(b)
					took = append(took, time.Since(t0))
				}
				slices.Sort(took)
				p95 := took[(len(took)*95)/100]
				b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
			})
		}
	}
}
