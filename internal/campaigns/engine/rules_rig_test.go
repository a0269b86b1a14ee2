package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/sending"
)

// Helpers of the rule tests (rules_*_test.go): placing the simulated clock on a local wall time, campaigns with
// their own settings, and what the SMTP server, the activity log and the notifications saw.

// Legacy weekday bits of a campaign's days (bit 0 = Monday ... bit 6 = Sunday).
const (
	monToFri = 0b0011111
	monToSat = 0b0111111
)

// nextWallTime is the first instant after from whose wall clock in loc reads hh:mm on one of days (none: any
// day).
func nextWallTime(from time.Time, loc *time.Location, hh, mm int, days ...time.Weekday) time.Time {
	l := from.In(loc)
	for i := 0; ; i++ {
		at := time.Date(l.Year(), l.Month(), l.Day()+i, hh, mm, 0, 0, loc)
		if !at.After(from) {
			continue
		}
		if len(days) == 0 {
			return at
		}
		for _, d := range days {
			if at.Weekday() == d {
				return at
			}
		}
	}
}

// clockTo moves the simulated clock forward to at (never back: contacts entered at real database time).
func (r *rig) clockTo(t testing.TB, at time.Time) {
	t.Helper()
	require.False(t, at.Before(r.clock), "the clock only moves forward (from %s to %s)", r.clock, at)
	r.clock = at
}

// createWith creates a draft campaign with the rig's defaults (every day all day in UTC, daily_limit 1000)
// changed by set.
func (r *rig) createWith(t testing.TB, steps []api.CampaignStepCreate, set func(*api.CampaignCreate)) uuid.UUID {
	t.Helper()
	req := api.CampaignCreate{Name: "Rules", Steps: steps, Timezone: api.NewOptString("UTC"), Days: api.NewOptInt(127),
		StartTime: api.NewOptString("00:00"), EndTime: api.NewOptString("24:00"), DailyLimit: api.NewOptInt(1000)}
	if set != nil {
		set(&req)
	}
	c, err := r.c.CampaignsCreate(context.Background(), &req, api.CampaignsCreateParams{})
	require.NoError(t, err)
	return c.ID
}

// campaignWith creates a campaign as createWith does, adds the addresses as leads and starts it.
func (r *rig) campaignWith(t testing.TB, steps []api.CampaignStepCreate, set func(*api.CampaignCreate), emails ...string) uuid.UUID {
	t.Helper()
	id := r.createWith(t, steps, set)
	r.addLeads(t, id, emails...)
	r.start(t, id)
	return id
}

// oneStep is a one-email sequence.
func oneStep() []api.CampaignStepCreate {
	return []api.CampaignStepCreate{{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("A first note.")}}
}

// received counts the messages the SMTP server accepted by recipient.
func (r *rig) received() map[string]int {
	out := map[string]int{}
	for _, m := range r.smtp.Messages() {
		for _, to := range m.To {
			out[to]++
		}
	}
	return out
}

// status is the campaign's status as GET /campaigns/{id} shows it.
func (r *rig) status(t testing.TB, id uuid.UUID) string {
	t.Helper()
	c, err := r.c.CampaignsGet(context.Background(), api.CampaignsGetParams{ID: id})
	require.NoError(t, err)
	return string(c.Status)
}

// logLines are the campaign's activity-log messages of one type, oldest first.
func (r *rig) logLines(t testing.TB, id uuid.UUID, typ string) []string {
	t.Helper()
	var out []string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT message FROM campaign_logs WHERE campaign_id = $1 AND event_type = $2 ORDER BY id`, id, typ)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return out
}

// campaignEvents counts the outbox events of a type about one campaign.
func (r *rig) campaignEvents(t testing.TB, id uuid.UUID, typ events.Type) int {
	t.Helper()
	var n int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM event_outbox WHERE event_type = $1 AND data ->> 'campaign_id' = $2`,
			string(typ), id.String()).Scan(&n)
	})
	return n
}

// taskIDs are the campaign's send tasks in a status, oldest first.
func (r *rig) taskIDs(t testing.TB, id uuid.UUID, status string) []uuid.UUID {
	t.Helper()
	var out []uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM send_tasks WHERE campaign_id = $1 AND status = $2 ORDER BY id`, id, status)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	return out
}

// attempt runs one attempt of each task from the rig's mailbox, as a send worker whose job was already queued
// would, whatever the task's status.
func (r *rig) attempt(t testing.TB, tasks []uuid.UUID) {
	t.Helper()
	outbox := events.NewOutbox(r.jobs)
	for _, id := range tasks {
		_, err := r.pipe.Attempt(context.Background(), outbox, sending.Args{OrganizationID: r.org, TaskID: id, MailboxID: r.box.ID})
		require.NoError(t, err)
	}
}

// mailboxDay is how many capped sends the rig's mailbox was charged on a day of its own zone.
func (r *rig) mailboxDay(t testing.TB, day time.Time) int {
	t.Helper()
	var n int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT coalesce(sum(capped), 0) FROM mailbox_send_days WHERE mailbox_id = $1 AND day = $2`,
			r.box.ID, day).Scan(&n)
	})
	return n
}

// apiRefusal asserts err is the API's error envelope with the status and code, and answers its message.
func apiRefusal(t testing.TB, err error, status int, code string) string {
	t.Helper()
	var se *api.ErrorStatusCode
	require.True(t, errors.As(err, &se), "want a %d %s error, got %v", status, code, err)
	require.Equal(t, status, se.StatusCode)
	require.Equal(t, code, se.Response.Code)
	require.NotEmpty(t, strings.TrimSpace(se.Response.Message))
	return se.Response.Message
}

// contactID is the id of the organization's contact with the address.
func (r *rig) contactID(t testing.TB, email string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM contacts WHERE email = $1`, email).Scan(&id)
	})
	return id
}

// leadsOf reads every lead of the campaign by its contact's address.
func (r *rig) leadsOf(t testing.TB, id uuid.UUID) map[string]leadRow {
	t.Helper()
	out := map[string]leadRow{}
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.email, l.state, `+waitOf+`, l.failure_reason, l.step_position, l.sent, l.bounced,
				`+dueOf+`, l.task_id
			FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id`+parkOf+`
			WHERE l.campaign_id = $1`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var email string
			var l leadRow
			if err := rows.Scan(&email, &l.State, &l.WaitReason, &l.Failure, &l.Position, &l.Sent, &l.Bounced, &l.Due, &l.Task); err != nil {
				return err
			}
			out[email] = l
		}
		return rows.Err()
	})
	return out
}

// leadAddresses are n addresses with the prefix.
func leadAddresses(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d@example.net", prefix, i)
	}
	return out
}
