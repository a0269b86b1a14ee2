package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// warmupDay is a daily_stats entry as a comparable value: date, sent, replied, target.
type warmupDay struct {
	Date                  string
	Sent, Replied, Target int
}

func warmupDays(r *api.WarmupAnalytics) []warmupDay {
	out := []warmupDay{}
	for _, d := range r.DailyStats {
		out = append(out, warmupDay{d.Date.Value.Format(time.DateOnly), d.EmailsSent.Value, d.EmailsReplied.Value, d.TargetVolume.Value})
	}
	return out
}

// warmupSummary is the summary as a comparable value.
type warmupSummary struct {
	Sent, Replied                     int
	AverageDaily, ReplyRate, Progress float64
	DaysActive                        int
}

func warmupSummaryOf(r *api.WarmupAnalytics) warmupSummary {
	s := r.Summary
	return warmupSummary{s.TotalSent.Value, s.TotalReplied.Value, s.AverageDaily.Value, s.ReplyRate.Value, s.TargetProgress.Value, s.DaysActive.Value}
}

// warmupAnalytics asks for the warmup report from from to to, narrowed by emailID ("" leaves it out).
func warmupAnalytics(t *testing.T, c *api.Client, from, to, emailID string) (*api.WarmupAnalytics, error) {
	t.Helper()
	p := api.AnalyticsWarmupParams{From: postureDate(t, from), To: postureDate(t, to)}
	if emailID != "" {
		p.EmailID = api.NewOptString(emailID)
	}
	return c.AnalyticsWarmup(context.Background(), p)
}

func postureDate(t testing.TB, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	require.NoError(t, err)
	return d
}

// warmupRig is an organization with three mailboxes: a@ warming since Monday 2 November 09:00 (base 2, +2 a
// day, max 40), b@ not warming (its warmup was stopped), c@ warming from the same anchor (base 5, +20 a day,
// max 30) and paused on the 4th at 10:00; and the warmup rollups of a@ and b@.
type warmupRig struct {
	env        *apitest.Env
	org        uuid.UUID
	key        string
	a, b, cbox uuid.UUID
}

func newWarmupRig(t *testing.T) warmupRig {
	t.Helper()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	r := warmupRig{env: env, org: org, key: boot.APIKey}
	r.a = campMailbox(t, env, org, "a@acme.example", 50)
	r.b = campMailbox(t, env, org, "b@acme.example", 50)
	r.cbox = campMailbox(t, env, org, "c@acme.example", 50)
	anchor := postureTime(t, "2026-11-02T09:00:00Z")
	orgExec(t, env, org, `UPDATE mailboxes SET warmup = $3, warmup_base = 2, warmup_increase = 2, warmup_max = 40, warmup_days = 7
		WHERE organization_id = $1 AND id = $2`, org, r.a, anchor)
	orgExec(t, env, org, `UPDATE mailboxes SET warmup = $3, warmup_paused_at = $4, warmup_base = 5, warmup_increase = 20,
		warmup_max = 30, warmup_days = 7 WHERE organization_id = $1 AND id = $2`, org, r.cbox, anchor, postureTime(t, "2026-11-04T10:00:00Z"))
	seedMailboxDay(t, env, org, r.a, "smtp_imap", "2026-11-02", "warmup", rollupCounts{"sent": 3, "replies": 1})
	seedMailboxDay(t, env, org, r.a, "smtp_imap", "2026-11-03", "warmup", rollupCounts{"sent": 9, "replies": 3})
	seedMailboxDay(t, env, org, r.a, "smtp_imap", "2026-11-05", "warmup", rollupCounts{"sent": 12, "replies": 2})
	seedMailboxDay(t, env, org, r.a, "smtp_imap", "2026-11-06", "warmup", rollupCounts{"sent": 500, "replies": 500}) // after the window
	seedMailboxDay(t, env, org, r.a, "smtp_imap", "2026-11-03", "campaign", rollupCounts{"sent": 50, "replies": 7})  // not warmup
	seedMailboxDay(t, env, org, r.b, "gmail", "2026-11-04", "warmup", rollupCounts{"sent": 5, "replies": 5})
	return r
}

func TestWarmupReportPlansTargetsWithTheMailboxRampAndSumsItsDays(t *testing.T) {
	t.Parallel()
	r := newWarmupRig(t)
	c := r.env.Client(t, r.key)

	// a@: the day before warmup started plans nothing; the 2nd is day one at the base; +2 a day after.
	one, err := warmupAnalytics(t, c, "2026-11-01", "2026-11-05", r.a.String())
	require.NoError(t, err)
	require.Equal(t, r.a, one.EmailAccountID)
	require.Equal(t, api.NewOptString("a@acme.example"), one.Email)
	require.Equal(t, postureTime(t, "2026-11-01T00:00:00Z"), one.DateRange.From.Value.UTC())
	require.Equal(t, postureTime(t, "2026-11-06T00:00:00Z"), one.DateRange.To.Value.UTC())
	require.Equal(t, []warmupDay{{"2026-11-01", 0, 0, 0}, {"2026-11-02", 3, 1, 2}, {"2026-11-03", 9, 3, 4}, {"2026-11-04", 0, 0, 6},
		{"2026-11-05", 12, 2, 8}}, warmupDays(one))
	// 24 sends over 3 active days; 6 of 24 answered; 24 sends against 20 planned is 120 percent.
	require.Equal(t, warmupSummary{Sent: 24, Replied: 6, AverageDaily: 8, ReplyRate: 25, Progress: 120, DaysActive: 3}, warmupSummaryOf(one))

	// c@: the ramp stops at its max and stands still from the day after its pause began.
	paused, err := warmupAnalytics(t, c, "2026-11-01", "2026-11-05", r.cbox.String())
	require.NoError(t, err)
	require.Equal(t, []warmupDay{{"2026-11-01", 0, 0, 0}, {"2026-11-02", 0, 0, 5}, {"2026-11-03", 0, 0, 25}, {"2026-11-04", 0, 0, 30},
		{"2026-11-05", 0, 0, 0}}, warmupDays(paused))
	require.Equal(t, warmupSummary{}, warmupSummaryOf(paused), "nothing sent: every figure 0, none divided by zero")

	// Unfiltered: every mailbox's sends and targets add up (b@ plans nothing now its warmup is off).
	all, err := warmupAnalytics(t, c, "2026-11-01", "2026-11-05", "")
	require.NoError(t, err)
	require.Equal(t, uuid.Nil, all.EmailAccountID)
	require.False(t, all.Email.Set)
	require.Equal(t, []warmupDay{{"2026-11-01", 0, 0, 0}, {"2026-11-02", 3, 1, 7}, {"2026-11-03", 9, 3, 29}, {"2026-11-04", 5, 5, 36},
		{"2026-11-05", 12, 2, 8}}, warmupDays(all))
	// 29 sends over 4 active days (7.25), 11 of 29 answered (37.93), 29 of 80 planned (36.25).
	require.Equal(t, warmupSummary{Sent: 29, Replied: 11, AverageDaily: 7.25, ReplyRate: 37.93, Progress: 36.25, DaysActive: 4}, warmupSummaryOf(all))

	// A malformed email_id is ignored: the answer is the unfiltered one.
	ignored, err := warmupAnalytics(t, c, "2026-11-01", "2026-11-05", "not-a-mailbox")
	require.NoError(t, err)
	require.Equal(t, all, ignored)

	// A mailbox the organization does not have, or another organization's, is not found.
	_, err = warmupAnalytics(t, c, "2026-11-01", "2026-11-05", uuid.NewString())
	requireAPIError(t, err, 404, "mailbox_not_found")
	other := r.env.Bootstrap(t, "globex")
	theirs := campMailbox(t, r.env, other.OrganizationID, "z@globex.example", 50)
	seedMailboxDay(t, r.env, other.OrganizationID, theirs, "gmail", "2026-11-02", "warmup", rollupCounts{"sent": 1000})
	_, err = warmupAnalytics(t, c, "2026-11-01", "2026-11-05", theirs.String())
	requireAPIError(t, err, 404, "mailbox_not_found")
	again, err := warmupAnalytics(t, c, "2026-11-01", "2026-11-05", "")
	require.NoError(t, err)
	require.Equal(t, all, again, "another organization's warmup never counts")
}

func TestWarmupReportOfAMailboxScopedKeyCoversOnlyItsMailboxes(t *testing.T) {
	t.Parallel()
	r := newWarmupRig(t)
	scoped := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadAnalytics, r.a))

	// Unfiltered, or with a malformed email_id, the key sees a@ alone, as the zero UUID.
	for _, emailID := range []string{"", "not-a-mailbox"} {
		mine, err := warmupAnalytics(t, scoped, "2026-11-01", "2026-11-05", emailID)
		require.NoError(t, err)
		require.Equal(t, uuid.Nil, mine.EmailAccountID)
		require.Equal(t, warmupSummary{Sent: 24, Replied: 6, AverageDaily: 8, ReplyRate: 25, Progress: 120, DaysActive: 3}, warmupSummaryOf(mine))
		require.Equal(t, []warmupDay{{"2026-11-01", 0, 0, 0}, {"2026-11-02", 3, 1, 2}, {"2026-11-03", 9, 3, 4}, {"2026-11-04", 0, 0, 6},
			{"2026-11-05", 12, 2, 8}}, warmupDays(mine), "b@'s sends and c@'s targets are not the key's")
	}
	named, err := warmupAnalytics(t, scoped, "2026-11-01", "2026-11-05", r.a.String())
	require.NoError(t, err)
	require.Equal(t, r.a, named.EmailAccountID)
	for _, id := range []uuid.UUID{r.b, r.cbox} {
		_, err = warmupAnalytics(t, scoped, "2026-11-01", "2026-11-05", id.String())
		requireAPIError(t, err, 404, "mailbox_not_found")
	}
	// A key scoped to no mailbox of this organization's rollups sees zeros, not the organization's numbers.
	none := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadAnalytics, uuid.New()))
	empty, err := warmupAnalytics(t, none, "2026-11-01", "2026-11-05", "")
	require.NoError(t, err)
	require.Equal(t, warmupSummary{}, warmupSummaryOf(empty))
}

func TestWarmupReportRefusesBadDates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)

	_, err := warmupAnalytics(t, c, "2026-11-05", "2026-11-04", "")
	requireAPIError(t, err, 400, "invalid_date_range")
	_, err = warmupAnalytics(t, c, "2025-01-01", "2026-01-02", "")
	requireAPIError(t, err, 400, "date_range_too_long")
	year, err := warmupAnalytics(t, c, "2025-01-01", "2026-01-01", "")
	require.NoError(t, err)
	require.Len(t, year.DailyStats, 366)
	day, err := warmupAnalytics(t, c, "2026-11-05", "2026-11-05", "")
	require.NoError(t, err)
	require.Len(t, day.DailyStats, 1)

	status, code, msg := postureRawError(t, env, boot.APIKey, "/v1/analytics/warmup", url.Values{"from": {"2026-11-01"}, "to": {"2026-13-01"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_parameter", code)
	require.Equal(t, "The query parameter to must be a date such as 2025-01-31 (YYYY-MM-DD).", msg)
	status, code, msg = postureRawError(t, env, boot.APIKey, "/v1/analytics/warmup", url.Values{"to": {"2026-11-01"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_parameter", code)
	require.Equal(t, "The query parameter from is required.", msg)
}
