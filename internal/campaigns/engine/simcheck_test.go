package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// isSend is the SQL condition of a send task t that went out, or may have (the claim charged it).
const isSend = `t.status IN ('sent', 'sending', 'ambiguous')`

// simReport is what the checks found after a simulated week: every broken rule, one line each, and the facts
// that show the rules were binding (a check that never bites proves nothing).
type simReport struct {
	violations []string
	// sends went out; delivered of them were recorded sent.
	sends, delivered int
	// capDays are mailbox days that reached campaign_limit; tightGaps consecutive sends of one mailbox exactly
	// min_wait_time apart.
	capDays, tightGaps int
	// By campaign name: local days whose sends reached daily_limit, the ramp's allowance, or whose new leads
	// reached max_new_leads_per_day; and the sends of each local date (YYYY-MM-DD).
	limitDays, rampDays, quotaDays map[string]int
	days                           map[string]map[string]int
	// outcomes counts the leads by state and wait reason ("active: waiting for ...").
	outcomes map[string]int
}

// check runs every check over the simulation's database.
func (s *sim) check(tb testing.TB) simReport {
	tb.Helper()
	r := simReport{limitDays: map[string]int{}, rampDays: map[string]int{}, quotaDays: map[string]int{},
		days: map[string]map[string]int{}, outcomes: map[string]int{}}
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		for _, q := range simRules {
			found, err := lines(ctx, tx, q, pgx.NamedArgs{"org": s.org, "end": s.end})
			if err != nil {
				return fmt.Errorf("%w in %s", err, q)
			}
			r.violations = append(r.violations, found...)
		}
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE `+isSend+`), count(*) FILTER (WHERE t.status = 'sent'),
			  (SELECT count(*) FROM mailbox_send_days d JOIN mailboxes m ON m.organization_id = d.organization_id AND m.id = d.mailbox_id
			    WHERE d.organization_id = $1 AND d.capped = m.campaign_limit),
			  (SELECT count(*) FROM (SELECT t.claimed_at - lag(t.claimed_at) OVER (PARTITION BY t.mailbox_id ORDER BY t.claimed_at) AS gap,
			      m.min_wait_time FROM send_tasks t JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
			      WHERE t.organization_id = $1 AND `+isSend+`) x WHERE x.gap = make_interval(secs => x.min_wait_time))
			FROM send_tasks t WHERE t.organization_id = $1 AND t.kind = 'campaign'`, s.org).
			Scan(&r.sends, &r.delivered, &r.capDays, &r.tightGaps)
	})
	s.checkCampaigns(tb, &r)
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT l.state || coalesce(': ' || nullif(`+waitOf+`, ''), ''), count(*)
			FROM campaign_leads l`+parkOf+`WHERE l.organization_id = $1 GROUP BY 1`, s.org)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				return err
			}
			r.outcomes[k] = n
		}
		return rows.Err()
	})
	return r
}

// lines runs a query answering one text column.
func lines(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// simRules are the checks SQL answers alone, each a query (@org the organization, @end the week's end)
// answering one line per violation.
var simRules = []string{
	// A mailbox's capped sends on one of its local days stay within its campaign_limit.
	`SELECT format('mailbox %s sent %s messages on its day %s, over its campaign_limit %s', x.email, x.n, x.day, x.campaign_limit)
	FROM (SELECT m.email, m.campaign_limit, (t.claimed_at AT TIME ZONE coalesce(nullif(m.timezone, ''), 'UTC'))::date AS day,
	    count(*) AS n
	  FROM send_tasks t JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
	  WHERE t.organization_id = @org AND ` + isSend + ` GROUP BY 1, 2, 3) x
	WHERE x.n > x.campaign_limit`,
	// Its day counter holds exactly what was sent on that day.
	`SELECT format('mailbox %s: its counter for %s holds %s capped sends, but %s went out', m.email, coalesce(d.day, x.day),
	  coalesce(d.capped, 0), coalesce(x.n, 0))
	FROM (SELECT mailbox_id, day, capped FROM mailbox_send_days WHERE organization_id = @org) d
	FULL JOIN (SELECT t.mailbox_id, t.counted_day AS day, count(*) AS n FROM send_tasks t
	  WHERE t.organization_id = @org AND ` + isSend + ` GROUP BY 1, 2) x ON x.mailbox_id = d.mailbox_id AND x.day = d.day
	JOIN mailboxes m ON m.organization_id = @org AND m.id = coalesce(d.mailbox_id, x.mailbox_id)
	WHERE coalesce(d.capped, 0) <> coalesce(x.n, 0)`,
	// Consecutive sends of one mailbox are at least its min_wait_time apart.
	`SELECT format('mailbox %s sent at %s, %s after its send at %s (min_wait_time %s s)', x.email, x.claimed_at,
	  x.claimed_at - x.prev, x.prev, x.min_wait_time)
	FROM (SELECT m.email, m.min_wait_time, t.claimed_at,
	    lag(t.claimed_at) OVER (PARTITION BY t.mailbox_id ORDER BY t.claimed_at) AS prev
	  FROM send_tasks t JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
	  WHERE t.organization_id = @org AND ` + isSend + `) x
	WHERE x.claimed_at < x.prev + make_interval(secs => x.min_wait_time)`,
	// No step of a campaign goes to a contact twice.
	`SELECT format('campaign %s sent step %s to %s %s times', c.name, st.position + 1, t.to_email, count(*))
	FROM send_tasks t JOIN campaigns c ON c.organization_id = t.organization_id AND c.id = t.campaign_id
	JOIN campaign_steps st ON st.organization_id = t.organization_id AND st.id = t.step_id
	WHERE t.organization_id = @org AND t.status IN ('queued', 'sending', 'sent', 'ambiguous')
	GROUP BY c.name, st.position, t.to_email HAVING count(*) > 1`,
	// Every lead ends in a stated state: completed, in flight with its send queued, or waiting past the week's
	// end with the reason.
	`SELECT format('lead %s of %s is %s (position %s, due %s, reason "%s", task %s %s, failure "%s")', ct.email, c.name,
	  l.state, l.step_position, ` + dueOf + `, ` + waitOf + `, l.task_id, t.status, l.failure_reason)
	FROM campaign_leads l JOIN campaigns c ON c.organization_id = l.organization_id AND c.id = l.campaign_id` + parkOf + `
	JOIN contacts ct ON ct.organization_id = l.organization_id AND ct.id = l.contact_id
	LEFT JOIN send_tasks t ON t.organization_id = l.organization_id AND t.id = l.task_id
	WHERE l.organization_id = @org AND NOT (
	  l.state = 'completed' AND l.task_id IS NULL AND l.due_at IS NULL
	  OR l.state IN ('pending', 'active') AND l.task_id IS NOT NULL AND t.status = 'queued'
	  OR l.state IN ('pending', 'active') AND l.task_id IS NULL AND ` + dueOf + ` > @end AND ` + waitOf + ` <> '')`,
	// A lead's sent count and position are its sends: every step before its position went out once (the one
	// in flight is still queued).
	`SELECT format('lead %s of %s has sent %s and position %s, but %s of its sends went out', ct.email, c.name, l.sent,
	  l.step_position, coalesce(x.n, 0))
	FROM campaign_leads l JOIN campaigns c ON c.organization_id = l.organization_id AND c.id = l.campaign_id
	JOIN contacts ct ON ct.organization_id = l.organization_id AND ct.id = l.contact_id
	LEFT JOIN (SELECT t.campaign_id, t.contact_id, count(*) AS n FROM send_tasks t WHERE t.organization_id = @org AND t.status = 'sent'
	  GROUP BY 1, 2) x ON x.campaign_id = l.campaign_id AND x.contact_id = l.contact_id
	WHERE l.organization_id = @org
	  AND (l.sent <> coalesce(x.n, 0) OR l.step_position <> coalesce(x.n, 0) + (l.task_id IS NOT NULL)::int)`,
}

// simSend is one send as the campaign checks read it.
type simSend struct {
	campaign uuid.UUID
	position int
	at       time.Time
}

// checkCampaigns checks each campaign's sends against its own settings as the spec gave them: inside its
// windows in its zone, on or after its start date, and per local day within daily_limit, the ramp's allowance
// and the new-lead quota; the day counters the engine keeps say the same.
func (s *sim) checkCampaigns(tb testing.TB, r *simReport) {
	tb.Helper()
	var sends []simSend
	counters := map[uuid.UUID]map[time.Time][2]int{}
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT t.campaign_id, st.position, t.claimed_at FROM send_tasks t
			JOIN campaign_steps st ON st.organization_id = t.organization_id AND st.id = t.step_id
			WHERE t.organization_id = $1 AND `+isSend, s.org)
		if err != nil {
			return err
		}
		if sends, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (simSend, error) {
			var x simSend
			return x, row.Scan(&x.campaign, &x.position, &x.at)
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT campaign_id, day, sent, new_leads FROM campaign_send_days WHERE organization_id = $1`, s.org)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uuid.UUID
			var day time.Time
			var sent, newLeads int
			if err := rows.Scan(&id, &day, &sent, &newLeads); err != nil {
				return err
			}
			if counters[id] == nil {
				counters[id] = map[time.Time][2]int{}
			}
			counters[id][day] = [2]int{sent, newLeads}
		}
		return rows.Err()
	})
	for i, c := range s.spec.campaigns {
		id := s.campaigns[i]
		loc, err := time.LoadLocation(c.zone)
		require.NoError(tb, err)
		days := map[time.Time][2]int{} // local date: sends, first steps
		for _, x := range sends {
			if x.campaign != id {
				continue
			}
			local := x.at.In(loc)
			if !c.inWindow(local) {
				r.violations = append(r.violations, fmt.Sprintf("%s sent at %s (%s), outside its windows", c.name,
					local.Format(time.RFC3339), local.Weekday()))
			}
			if c.startDays > 0 && x.at.Before(s.start.AddDate(0, 0, c.startDays)) {
				r.violations = append(r.violations, fmt.Sprintf("%s sent at %s, before its start date", c.name, x.at))
			}
			y, m, d := local.Date()
			day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			n := days[day]
			n[0]++
			if x.position == 0 {
				n[1]++
			}
			days[day] = n
		}
		sorted := make([]time.Time, 0, len(days))
		for d := range days {
			sorted = append(sorted, d)
		}
		sort.Slice(sorted, func(a, b int) bool { return sorted[a].Before(sorted[b]) })
		r.days[c.name] = map[string]int{}
		for k, day := range sorted {
			n, date := days[day], day.Format(time.DateOnly)
			r.days[c.name][date] = n[0]
			if counters[id][day] != n {
				r.violations = append(r.violations, fmt.Sprintf("%s on %s: its day counter says %d sent and %d new, but %d and %d went out",
					c.name, date, counters[id][day][0], counters[id][day][1], n[0], n[1]))
			}
			switch {
			case n[0] > c.dailyLimit:
				r.violations = append(r.violations, fmt.Sprintf("%s sent %d on %s, over its daily_limit %d", c.name, n[0], date, c.dailyLimit))
			case n[0] == c.dailyLimit:
				r.limitDays[c.name]++
			}
			if c.ramp != [3]int{} {
				allowance := min(c.ramp[0]+k*c.ramp[1], c.ramp[2]) // the k-th sending day is ramp level k
				switch {
				case n[0] > allowance:
					r.violations = append(r.violations, fmt.Sprintf("%s sent %d on %s, its sending day %d, over the ramp's %d",
						c.name, n[0], date, k+1, allowance))
				case n[0] == allowance:
					r.rampDays[c.name]++
				}
			}
			if c.maxNew > 0 {
				switch {
				case n[1] > c.maxNew:
					r.violations = append(r.violations, fmt.Sprintf("%s started %d new leads on %s, over max_new_leads_per_day %d",
						c.name, n[1], date, c.maxNew))
				case n[1] == c.maxNew:
					r.quotaDays[c.name]++
				}
			}
		}
	}
}

// inWindow reports whether the local time falls in one of the campaign's windows on its weekday.
func (c simCampaign) inWindow(local time.Time) bool {
	minute := local.Hour()*60 + local.Minute()
	return slices.ContainsFunc(c.week[local.Weekday()], func(sp span) bool { return minute >= sp.start && minute < sp.end })
}

// first is the first n lines of ls, one a line.
func first(ls []string, n int) string {
	return strings.Join(ls[:min(n, len(ls))], "\n")
}

// p99 is the 99th percentile of ds (0 when empty).
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}
