package handlers_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// rollupCounts are the counters of one seeded rollup row, by column name (migrations/00040_analytics.sql).
type rollupCounts map[string]int64

// seedRollup writes one rollup row into table for org with the key columns keys (column -> value) and the
// counters c, as the rollup feeds will once they land (branch ana-rollup); reports read nothing else.
func seedRollup(t testing.TB, env *apitest.Env, org uuid.UUID, table string, keys map[string]any, c rollupCounts) {
	t.Helper()
	cols, marks, args := []string{"organization_id"}, []string{"$1"}, []any{org}
	add := func(col string, v any) {
		args = append(args, v)
		cols, marks = append(cols, col), append(marks, "$"+strconv.Itoa(len(args)))
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		add(k, keys[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		add(k, c[k])
	}
	orgExec(t, env, org, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(marks, ", ")+")", args...)
}

// seedOrgDay writes the organization's counters of one day and kind.
func seedOrgDay(t testing.TB, env *apitest.Env, org uuid.UUID, day, kind string, c rollupCounts) {
	t.Helper()
	seedRollup(t, env, org, "analytics_org_days", map[string]any{"day": day, "kind": kind}, c)
}

// seedMailboxDay writes one mailbox's counters of one day and kind, sent as provider.
func seedMailboxDay(t testing.TB, env *apitest.Env, org, mailbox uuid.UUID, provider, day, kind string, c rollupCounts) {
	t.Helper()
	seedRollup(t, env, org, "analytics_mailbox_days", map[string]any{"mailbox_id": mailbox, "provider": provider, "day": day, "kind": kind}, c)
}

// seedCampaignDay writes one campaign's counters of one day.
func seedCampaignDay(t testing.TB, env *apitest.Env, org, campaign uuid.UUID, day string, c rollupCounts) {
	t.Helper()
	seedRollup(t, env, org, "analytics_campaign_days", map[string]any{"campaign_id": campaign, "day": day}, c)
}

// deliverabilityReport asks for the report from from to to ("" leaves a parameter out).
func deliverabilityReport(t *testing.T, c *api.Client, from, to string) *api.DeliverabilityDashboard {
	t.Helper()
	var p api.AnalyticsDeliverabilityParams
	if from != "" {
		p.From = api.NewOptDateTime(postureTime(t, from))
	}
	if to != "" {
		p.To = api.NewOptDateTime(postureTime(t, to))
	}
	out, err := c.AnalyticsDeliverability(context.Background(), p)
	require.NoError(t, err)
	return out
}

func postureTime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return at
}

// postureRawError sends GET path with query q (which the SDK would refuse to build) and returns the status, code and
// message of the envelope.
func postureRawError(t *testing.T, env *apitest.Env, token, path string, q url.Values) (int, string, string) {
	t.Helper()
	resp := env.Do(t, http.MethodGet, path+"?"+q.Encode(), token, nil, nil)
	defer resp.Body.Close()
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body.Code, body.Message
}

// deliverabilityDay is a timeseries point as a comparable value: date, sent, bounces, complaints, opens, clicks,
// replies, unsubscribes.
type deliverabilityDay struct {
	Date                                                            string
	Sent, Bounces, Complaints, Opens, Clicks, Replies, Unsubscribes int
}

func deliverabilityDays(r *api.DeliverabilityDashboard) []deliverabilityDay {
	out := []deliverabilityDay{}
	for _, p := range r.Timeseries {
		out = append(out, deliverabilityDay{p.Date.Value.Format(time.DateOnly), p.Sent.Value, p.Bounces.Value, p.Complaints.Value,
			p.Opens.Value, p.Clicks.Value, p.Replies.Value, p.Unsubscribes.Value})
	}
	return out
}

func TestDeliverabilityReportCountsCampaignAndDirectTrafficByHand(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	env.Clock.Set(postureTime(t, "2026-11-20T15:00:00Z"))

	// Days 10 to 12 (to at midnight of the 13th ends the window with the 12th).
	seedOrgDay(t, env, org, "2026-11-10", "campaign", rollupCounts{"sent": 600, "opens": 200, "machine_opens": 50, "clicks": 40,
		"machine_clicks": 10, "replies": 12, "intent_positive": 5, "intent_negative": 2, "intent_question": 1, "intent_neutral": 3,
		"intent_out_of_office": 4, "intent_automated": 6, "bounces_hard": 20, "bounces_soft": 10, "complaints": 1, "unsubscribes": 3})
	seedOrgDay(t, env, org, "2026-11-10", "direct", rollupCounts{"sent": 400, "opens": 100, "replies": 8, "bounces_hard": 10, "complaints": 1})
	seedOrgDay(t, env, org, "2026-11-12", "campaign", rollupCounts{"unsubscribes": 2})
	// Warmup traffic is not the organization's outreach: only its seed placements count.
	seedOrgDay(t, env, org, "2026-11-10", "warmup", rollupCounts{"sent": 999, "replies": 500, "bounces_hard": 77, "placement_inbox": 30, "placement_spam": 10})
	// Outside the window on either side.
	seedOrgDay(t, env, org, "2026-11-09", "campaign", rollupCounts{"sent": 7000})
	seedOrgDay(t, env, org, "2026-11-13", "campaign", rollupCounts{"sent": 5000, "bounces_hard": 5000})

	m1 := campMailbox(t, env, org, "a@acme.example", 50)
	m2 := campMailbox(t, env, org, "b@acme.example", 50)
	seedMailboxDay(t, env, org, m1, "smtp_imap", "2026-11-10", "campaign", rollupCounts{"sent": 600, "bounces_hard": 20, "bounces_soft": 10, "complaints": 1})
	seedMailboxDay(t, env, org, m1, "smtp_imap", "2026-11-10", "warmup", rollupCounts{"sent": 999, "bounces_hard": 77, "placement_inbox": 30, "placement_spam": 10})
	seedMailboxDay(t, env, org, m1, "smtp_imap", "2026-11-13", "campaign", rollupCounts{"sent": 100, "bounces_hard": 100})
	seedMailboxDay(t, env, org, m2, "gmail", "2026-11-11", "direct", rollupCounts{"sent": 400, "bounces_hard": 10, "complaints": 1})
	camp := campCreate(t, c, api.CampaignCreate{Name: "Launch"})
	seedCampaignDay(t, env, org, camp.ID, "2026-11-10", rollupCounts{"sent": 600, "bounces_hard": 20, "bounces_soft": 10, "complaints": 1})
	seedCampaignDay(t, env, org, camp.ID, "2026-11-13", rollupCounts{"sent": 900})

	// Current state: two suppressions in force (one expiring later), one expired; one dead-lettered delivery.
	orgExec(t, env, org, `INSERT INTO suppressions (organization_id, id, kind, value, source, expires_at) VALUES
		($1, $2, 'email', 'x@y.example', 'bounce', NULL), ($1, $3, 'domain', 'z.example', 'manual', $5),
		($1, $4, 'email', 'old@y.example', 'manual', $6)`, org, uuid.New(), uuid.New(), uuid.New(),
		postureTime(t, "2026-12-01T00:00:00Z"), postureTime(t, "2026-11-20T14:00:00Z"))
	endpoint := uuid.New()
	orgExec(t, env, org, `INSERT INTO webhook_endpoints (organization_id, id, url, secret_sealed) VALUES ($1, $2, 'https://hooks.example/x', '\x00')`, org, endpoint)
	orgExec(t, env, org, `INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status) VALUES
		($1, $3, $2, $5, 'email.bounced', 'abandoned'), ($1, $4, $2, $6, 'email.bounced', 'failed')`,
		org, endpoint, uuid.New(), uuid.New(), uuid.New(), uuid.New())

	r := deliverabilityReport(t, c, "2026-11-10T00:00:00Z", "2026-11-13T00:00:00Z")
	require.Equal(t, postureTime(t, "2026-11-10T00:00:00Z"), r.From.UTC())
	require.Equal(t, postureTime(t, "2026-11-13T00:00:00Z"), r.To.UTC(), "the window as applied ends with the 12th")
	require.Equal(t, 1000, r.EmailsSent.Value)
	require.Equal(t, 40, r.BounceCount.Value, "hard and soft, campaign and direct; warmup's left out")
	require.Equal(t, 2, r.ComplaintCount.Value)
	require.Equal(t, 5, r.UnsubscribeCount.Value)
	require.Equal(t, 20, r.ReplyCount.Value)
	require.Equal(t, 250, r.OpenCount.Value, "human opens: (200 - 50) + 100")
	require.Equal(t, 30, r.ClickCount.Value, "human clicks: 40 - 10")
	require.Equal(t, 40+2+5+20+250+30, r.EventsTotal.Value)
	require.Equal(t, []int{5, 2, 4, 1, 3, 6}, []int{r.IntentPositive.Value, r.IntentNegative.Value, r.IntentOutOfOffice.Value,
		r.IntentQuestion.Value, r.IntentNeutral.Value, r.IntentAutomated.Value}, "intents as counted, not folded into reply_count")
	require.Equal(t, 4.0, r.BounceRate.Value, "40 / 1000")
	require.Equal(t, 0.2, r.ComplaintRate.Value, "2 / 1000")
	require.Equal(t, 25.0, r.OpenRate.Value)
	require.Equal(t, 3.0, r.ClickRate.Value)
	require.Equal(t, 2.0, r.ReplyRate.Value)
	require.Equal(t, 40, r.PlacementSamples.Value)
	require.Equal(t, api.NewOptFloat64(25.0), r.SpamPlacementRate)
	require.Equal(t, api.NewOptFloat64(75.0), r.InboxPlacementRate)
	// 100 - 4/10 of 40 (16) - 0.2/0.3 of 30 (20) - 25/40 of 40 (25) = 39.
	require.Equal(t, 39.0, r.Score)
	require.Equal(t, api.DeliverabilityDashboardBandQuarantined, r.Band)
	require.Equal(t, 2, r.SuppressedRecipients.Value, "entries in force now; the expired one is not")
	require.Equal(t, 1, r.DlqPending.Value, "the abandoned delivery; the failed one is still being retried")
	require.Equal(t, []deliverabilityDay{
		{"2026-11-10", 1000, 40, 2, 250, 30, 20, 3},
		{"2026-11-11", 0, 0, 0, 0, 0, 0, 0},
		{"2026-11-12", 0, 0, 0, 0, 0, 0, 2},
	}, deliverabilityDays(r))

	warm := r.WarmupPlacement.Value
	require.Equal(t, 40, warm.Samples.Value)
	require.Equal(t, api.NewOptFloat64(75.0), warm.InboxPlacementRate)
	require.Equal(t, api.NewOptFloat64(25.0), warm.SpamPlacementRate)

	// a@: 30 bounces of 600 (5 percent: 20 points), 1 complaint (0.17 percent: 17 points), 25 percent spam
	// placement (25 points) = 38. b@: 2.5 percent bounces (10), 0.25 percent complaints (25) = 65.
	require.Equal(t, []api.DeliverabilityMailbox{
		{EmailAccountID: api.NewOptUUID(m1), Email: api.NewOptString("a@acme.example"), Sent: api.NewOptInt(600), Bounces: api.NewOptInt(30),
			Complaints: api.NewOptInt(1), BounceRate: api.NewOptFloat64(5), ComplaintRate: api.NewOptFloat64(0.17), Band: api.NewOptString("quarantined")},
		{EmailAccountID: api.NewOptUUID(m2), Email: api.NewOptString("b@acme.example"), Sent: api.NewOptInt(400), Bounces: api.NewOptInt(10),
			Complaints: api.NewOptInt(1), BounceRate: api.NewOptFloat64(2.5), ComplaintRate: api.NewOptFloat64(0.25), Band: api.NewOptString("throttled")},
	}, r.ByMailbox)
	require.Equal(t, []api.DeliverabilityProvider{
		{Provider: api.NewOptString("smtp_imap"), Sent: api.NewOptInt(600), Bounces: api.NewOptInt(30), Complaints: api.NewOptInt(1),
			BounceRate: api.NewOptFloat64(5), ComplaintRate: api.NewOptFloat64(0.17), Band: api.NewOptString("quarantined")},
		{Provider: api.NewOptString("gmail"), Sent: api.NewOptInt(400), Bounces: api.NewOptInt(10), Complaints: api.NewOptInt(1),
			BounceRate: api.NewOptFloat64(2.5), ComplaintRate: api.NewOptFloat64(0.25), Band: api.NewOptString("throttled")},
	}, r.ByProvider)
	// The campaign: 5 percent bounces (20) and 0.17 percent complaints (17) = 63.
	require.Equal(t, []api.DeliverabilityCampaign{
		{CampaignID: api.NewOptUUID(camp.ID), Name: api.NewOptString("Launch"), Sent: api.NewOptInt(600), Bounces: api.NewOptInt(30),
			Complaints: api.NewOptInt(1), BounceRate: api.NewOptFloat64(5), ComplaintRate: api.NewOptFloat64(0.17), Band: api.NewOptString("throttled")},
	}, r.ByCampaign)

	// Another organization sees none of it.
	other := env.Bootstrap(t, "globex")
	theirs := deliverabilityReport(t, env.Client(t, other.APIKey), "2026-11-10T00:00:00Z", "2026-11-13T00:00:00Z")
	require.Zero(t, theirs.EmailsSent.Value)
	require.Zero(t, theirs.SuppressedRecipients.Value)
	require.Zero(t, theirs.DlqPending.Value)
	require.Empty(t, theirs.ByMailbox)
	require.Empty(t, theirs.ByCampaign)
	require.Equal(t, 100.0, theirs.Score)
}

func TestDeliverabilityScoreSaturatesAndBandsFollowIt(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	// One case a day; each report covers its day alone.
	cases := []struct {
		day     string
		kind    string
		c       rollupCounts
		score   float64
		band    api.DeliverabilityDashboardBand
		samples bool
	}{
		{"2026-10-01", "campaign", rollupCounts{"sent": 1000, "bounces_hard": 100}, 60, "throttled", false},                  // 10 percent: all 40 points
		{"2026-10-02", "campaign", rollupCounts{"sent": 1000, "bounces_soft": 500}, 60, "throttled", false},                  // beyond: still 40
		{"2026-10-03", "direct", rollupCounts{"sent": 10000, "complaints": 30}, 70, "throttled", false},                      // 0.30 percent: all 30
		{"2026-10-04", "direct", rollupCounts{"sent": 10000, "complaints": 300}, 70, "throttled", false},                     // beyond: still 30
		{"2026-10-05", "warmup", rollupCounts{"placement_inbox": 60, "placement_spam": 40}, 60, "throttled", true},           // 40 percent spam: all 40
		{"2026-10-06", "warmup", rollupCounts{"placement_inbox": 0, "placement_spam": 90}, 60, "throttled", true},            // beyond: still 40
		{"2026-10-07", "campaign", rollupCounts{"sent": 1000, "bounces_hard": 50}, 80, "watch", false},                       // 5 percent: half of 40
		{"2026-10-08", "campaign", rollupCounts{"sent": 10000, "complaints": 3}, 97, "healthy", false},                       // 0.03 percent: 3 points
		{"2026-10-09", "campaign", rollupCounts{"sent": 1000, "bounces_hard": 25}, 90, "healthy", false},                     // exactly 90: healthy
		{"2026-10-10", "campaign", rollupCounts{"sent": 10000, "bounces_hard": 625}, 75, "watch", false},                     // 6.25 percent: 25 points, exactly 75
		{"2026-10-11", "campaign", rollupCounts{"sent": 1000, "bounces_hard": 100, "complaints": 1}, 50, "throttled", false}, // 40 + 10: exactly 50
		{"2026-10-12", "campaign", rollupCounts{"sent": 10000, "bounces_hard": 1000, "complaints": 20}, 40, "quarantined", false},
		{"2026-10-13", "campaign", rollupCounts{"sent": 10000, "bounces_hard": 1000, "complaints": 25}, 35, "quarantined", false},
		{"2026-10-14", "campaign", rollupCounts{"sent": 1000, "bounces_hard": 100, "complaints": 3}, 30, "quarantined", false},
		{"2026-10-15", "campaign", rollupCounts{"sent": 10000, "bounces_hard": 1000, "complaints": 30, "placement_spam": 10, "placement_inbox": 190}, 25, "quarantined", true}, // 40 + 30 + 5: exactly 25
		{"2026-10-16", "campaign", rollupCounts{"sent": 100, "bounces_hard": 100, "complaints": 100, "placement_spam": 10}, 0, "blocked", true},                                // 110 points of penalty: floors at 0
		{"2026-10-17", "campaign", rollupCounts{}, 100, "healthy", false},                                                                                                      // nothing sent, nothing wrong
	}
	for _, k := range cases {
		seedOrgDay(t, env, org, k.day, k.kind, k.c)
	}
	for _, k := range cases {
		from := k.day + "T00:00:00Z"
		r := deliverabilityReport(t, c, from, from)
		require.Equal(t, k.score, r.Score, k.day)
		require.Equal(t, k.band, r.Band, k.day)
		require.Equal(t, k.samples, r.SpamPlacementRate.Set, "%s: placement rates only with seed samples", k.day)
		require.Equal(t, k.samples, r.InboxPlacementRate.Set, k.day)
		require.Equal(t, k.samples, r.PlacementSamples.Value > 0, k.day)
		require.Equal(t, k.kind == "warmup", r.WarmupPlacement.Value.SpamPlacementRate.Set, k.day)
	}
}

func TestDeliverabilityWindowDefaultsEdgesAndRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	env.Clock.Set(postureTime(t, "2026-11-20T15:00:00Z"))
	for day, sent := range map[string]int64{"2026-11-12": 100, "2026-11-13": 1, "2026-11-20": 10, "2026-11-10": 1000, "2026-11-11": 20000} {
		seedOrgDay(t, env, org, day, "campaign", rollupCounts{"sent": sent})
	}

	// Defaults: to now, from 7 days before it: the UTC days the span touches (the 13th to the 20th).
	r := deliverabilityReport(t, c, "", "")
	require.Equal(t, postureTime(t, "2026-11-13T00:00:00Z"), r.From.UTC())
	require.Equal(t, postureTime(t, "2026-11-21T00:00:00Z"), r.To.UTC())
	require.Len(t, r.Timeseries, 8)
	require.Equal(t, 11, r.EmailsSent.Value)
	// Only to: from is 7 days before it.
	r = deliverabilityReport(t, c, "", "2026-11-17T12:00:00Z")
	require.Equal(t, postureTime(t, "2026-11-10T00:00:00Z"), r.From.UTC())
	require.Equal(t, 1000+20000+100+1, r.EmailsSent.Value)

	// Edges at UTC midnight: a to at midnight ends the window with the day before; an instant after it
	// takes that day in; a from late in a day takes the whole day; offsets are read as the instants they are.
	require.Equal(t, 1000, deliverabilityReport(t, c, "2026-11-10T23:59:59Z", "2026-11-11T00:00:00Z").EmailsSent.Value)
	require.Equal(t, 21000, deliverabilityReport(t, c, "2026-11-10T23:59:59Z", "2026-11-11T00:00:01Z").EmailsSent.Value)
	require.Equal(t, 1000, deliverabilityReport(t, c, "2026-11-11T01:00:00+02:00", "2026-11-11T01:00:00+02:00").EmailsSent.Value,
		"23:00 UTC on the 10th")
	require.Equal(t, 20000, deliverabilityReport(t, c, "2026-11-11T00:00:00Z", "2026-11-11T00:00:00Z").EmailsSent.Value, "from equal to to is that day")

	// A year (366 days) is the most one report covers.
	r = deliverabilityReport(t, c, "2025-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
	require.Len(t, r.Timeseries, 366)
	_, err := c.AnalyticsDeliverability(context.Background(), api.AnalyticsDeliverabilityParams{
		From: api.NewOptDateTime(postureTime(t, "2025-01-01T00:00:00Z")), To: api.NewOptDateTime(postureTime(t, "2026-01-02T00:00:01Z"))})
	requireAPIError(t, err, 400, "date_range_too_long")
	_, err = c.AnalyticsDeliverability(context.Background(), api.AnalyticsDeliverabilityParams{
		From: api.NewOptDateTime(postureTime(t, "2026-11-12T00:00:00Z")), To: api.NewOptDateTime(postureTime(t, "2026-11-11T00:00:00Z"))})
	requireAPIError(t, err, 400, "invalid_date_range")
	_, err = c.AnalyticsDeliverability(context.Background(), api.AnalyticsDeliverabilityParams{
		From: api.NewOptDateTime(postureTime(t, "2026-11-21T00:00:00Z"))})
	requireAPIError(t, err, 400, "invalid_date_range")

	status, code, msg := postureRawError(t, env, boot.APIKey, "/v1/analytics/deliverability", url.Values{"from": {"yesterday"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_parameter", code)
	require.Equal(t, "The query parameter from must be a date-time such as 2025-01-31T09:00:00Z (RFC 3339).", msg)
	status, code, msg = postureRawError(t, env, boot.APIKey, "/v1/analytics/deliverability", url.Values{"from": {"2026-11-12T00:00:00Z"}, "to": {"2026-11-11T00:00:00Z"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_date_range", code)
	require.Contains(t, msg, "from must be at or before to")
}

func TestAnalyticsReportsNeedTheAnalyticsScope(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	ctx := context.Background()

	contactsOnly := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts))
	_, err := contactsOnly.AnalyticsDeliverability(ctx, api.AnalyticsDeliverabilityParams{})
	requireAPIError(t, err, 403, "missing_scope")
	_, err = contactsOnly.AnalyticsWarmup(ctx, api.AnalyticsWarmupParams{From: postureDate(t, "2026-11-01"), To: postureDate(t, "2026-11-02")})
	requireAPIError(t, err, 403, "missing_scope")
}

func TestRealCampaignSendsAndAnIngestedBounceShowInTheDeliverabilityReport(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	ctx := context.Background()
	camp, err := r.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Spring", Timezone: api.NewOptString("UTC"), Days: api.NewOptInt(127),
		StartTime: api.NewOptString("00:00"), EndTime: api.NewOptString("24:00"), DailyLimit: api.NewOptInt(1000),
		Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("A short note.")}}},
		api.CampaignsCreateParams{})
	require.NoError(t, err)
	_, err = r.c.ContactsCreate(ctx, []api.ContactCreate{{Email: "ann@client.example", FirstName: api.NewOptString("Ann"), Campaigns: []uuid.UUID{camp.ID}},
		{Email: "ben@client.example", FirstName: api.NewOptString("Ben"), Campaigns: []uuid.UUID{camp.ID}}}, api.ContactsCreateParams{})
	require.NoError(t, err)
	_, err = r.env.Owner(t, "acme").CampaignsStart(ctx, api.CampaignsStartParams{ID: camp.ID})
	require.NoError(t, err)
	// The engine and the send pipeline send both emails to the SMTP server.
	require.Equal(t, map[string]int{"ann@client.example": 1, "ben@client.example": 1}, r.settle(t))
	var task, box uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, mailbox_id FROM send_tasks WHERE organization_id = $1 AND to_email = 'ann@client.example'
			AND status = 'sent'`, r.org).Scan(&task, &box)
	})
	from, to := r.clock.Add(-24*time.Hour).Format(time.RFC3339), r.clock.Add(24*time.Hour).Format(time.RFC3339)
	before := deliverabilityReport(t, r.c, from, to)
	require.Equal(t, 2, before.EmailsSent.Value)
	require.Zero(t, before.BounceCount.Value)
	require.Equal(t, 100.0, before.Score)

	// The provider reports that Ann's email bounced.
	require.NoError(t, r.c.DeliverabilityOpsIngestEvent(ctx, &api.IngestDeliverabilityEventRequest{
		EventType: api.IngestDeliverabilityEventRequestEventTypeBounce, RecipientEmail: "ann@client.example", TaskID: api.NewOptUUID(task),
		Reason: api.NewOptString("smtp; 550 5.1.1 <ann@client.example>: Recipient address rejected: User unknown")},
		api.DeliverabilityOpsIngestEventParams{}))

	after := deliverabilityReport(t, r.c, from, to)
	require.Equal(t, 2, after.EmailsSent.Value)
	require.Equal(t, 1, after.BounceCount.Value)
	require.Equal(t, 50.0, after.BounceRate.Value, "1 bounce of 2 sends")
	require.Equal(t, 60.0, after.Score, "a bounce rate past 10 percent costs the full 40 points")
	require.Equal(t, api.DeliverabilityDashboardBandThrottled, after.Band)
	require.Equal(t, 1, after.SuppressedRecipients.Value, "the hard bounce suppressed the address")
	require.Equal(t, []api.DeliverabilityCampaign{{CampaignID: api.NewOptUUID(camp.ID), Name: api.NewOptString("Spring"),
		Sent: api.NewOptInt(2), Bounces: api.NewOptInt(1), Complaints: api.NewOptInt(0), BounceRate: api.NewOptFloat64(50),
		ComplaintRate: api.NewOptFloat64(0), Band: api.NewOptString("throttled")}}, after.ByCampaign)
	require.Equal(t, []api.DeliverabilityMailbox{{EmailAccountID: api.NewOptUUID(box), Email: api.NewOptString(rigUser),
		Sent: api.NewOptInt(2), Bounces: api.NewOptInt(1), Complaints: api.NewOptInt(0), BounceRate: api.NewOptFloat64(50),
		ComplaintRate: api.NewOptFloat64(0), Band: api.NewOptString("throttled")}}, after.ByMailbox)
	require.Len(t, after.ByProvider, 1)
	var sent, bounces int
	for _, d := range deliverabilityDays(after) {
		sent, bounces = sent+d.Sent, bounces+d.Bounces
	}
	require.Equal(t, []int{2, 1}, []int{sent, bounces}, "the timeseries holds the sends and the bounce")
}

func TestARealDirectSendCountsInTheDeliverabilityReportOutsideAnyCampaign(t *testing.T) {
	t.Parallel()
	r := newInboxRig(t)
	res, err := r.session.MailboxesSend(context.Background(), &api.MailboxSendRequest{To: []string{"carol@client.example"}, Subject: "Hi",
		BodyPlain: api.NewOptString("Hello there.")}, api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	task := res.(*api.MailboxesSendOK).TaskID.Value
	r.due(t, task)
	require.Zero(t, r.attempt(t, task))
	r.delivered(t, 1)

	report := deliverabilityReport(t, r.c, "", "")
	require.Equal(t, 1, report.EmailsSent.Value)
	require.Empty(t, report.ByCampaign)
	require.Len(t, report.ByMailbox, 1)
	require.Equal(t, r.box.ID, report.ByMailbox[0].EmailAccountID.Value)
	require.Equal(t, 1, report.ByMailbox[0].Sent.Value)
}

// TestAMailboxScopedKeySeesOnlyItsOwnMailboxesInTheDeliverabilityBreakdown: by_mailbox names no mailbox the
// key may not use.
func TestAMailboxScopedKeySeesOnlyItsOwnMailboxesInTheDeliverabilityBreakdown(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	mine := campMailbox(t, env, org, "mine@acme.example", 50)
	theirs := campMailbox(t, env, org, "theirs@acme.example", 50)
	day := time.Now().UTC().Format(time.DateOnly)
	seedMailboxDay(t, env, org, mine, "smtp_imap", day, "campaign", rollupCounts{"sent": 10})
	seedMailboxDay(t, env, org, theirs, "smtp_imap", day, "campaign", rollupCounts{"sent": 20})
	require.Len(t, deliverabilityReport(t, c, "", "").ByMailbox, 2, "an unscoped key sees both")
	scoped := newKey(t, c, api.CreateAPIKey{Name: "one box", Permissions: int64(auth.ReadAnalytics), AllowedEmailAccounts: []uuid.UUID{mine}})
	got := deliverabilityReport(t, env.Client(t, scoped.Secret), "", "").ByMailbox
	require.Len(t, got, 1)
	require.Equal(t, mine, got[0].EmailAccountID.Value)
	require.Equal(t, 10, got[0].Sent.Value)
}
