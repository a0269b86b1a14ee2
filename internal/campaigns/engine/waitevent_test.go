package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
)

// eventWaitSteps is a sequence that waits up to an hour for the contact's "demo.booked" event, with the step's
// on_timeout, then sends an email at once.
func eventWaitSteps(onTimeout string) []api.CampaignStepCreate {
	return []api.CampaignStepCreate{
		{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction),
			OnTimeout: api.NewOptCampaignStepCreateOnTimeout(api.CampaignStepCreateOnTimeout(onTimeout)),
			Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"type": jx.Raw(`"wait_for_event"`),
				"wait_event_name": jx.Raw(`"demo.booked"`), "timeout_minutes": jx.Raw("60")})},
		{Subject: api.NewOptString("Thanks {{.FirstName}}"), BodyPlain: api.NewOptString("See you at the demo."),
			WaitAfter: api.NewOptInt(0)},
	}
}

// stepRun is a lead's run of the campaign's step at position pos: its id and status ("" when it has none).
func (r *rig) stepRun(t testing.TB, campaign uuid.UUID, email string, pos int) (uuid.UUID, string) {
	t.Helper()
	var id uuid.UUID
	var status string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT r.id, r.status FROM campaign_step_runs r
			JOIN campaign_steps s ON s.organization_id = r.organization_id AND s.id = r.step_id
			JOIN contacts c ON c.organization_id = r.organization_id AND c.id = r.contact_id
			WHERE r.campaign_id = $1 AND c.email = $2 AND s.position = $3`, campaign, email, pos).Scan(&id, &status)
		if err == pgx.ErrNoRows {
			return nil
		}
		return err
	})
	return id, status
}

// resume publishes the contact's event as POST /events does, at the rig's clock.
func (r *rig) resume(t testing.TB, email, event string) []engine.Resumed {
	t.Helper()
	var out []engine.Resumed
	contact := r.contactID(t, email)
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = engine.ResumeWaits(ctx, tx, r.org, contact, event, uuid.New(), r.clock)
		return err
	})
	return out
}

func TestAProductEventResumesAWaitingLeadOnceAndItsNextStepSends(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, eventWaitSteps("stop"), "a@example.net", "b@example.net")
	r.run(t)
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, `waiting for the event "demo.booked"`, l.WaitReason)
	require.WithinDuration(t, r.clock.Add(time.Hour), *l.Due, time.Second)
	run, status := r.stepRun(t, id, "a@example.net", 0)
	require.Equal(t, engine.RunWaiting, status)

	require.Empty(t, r.resume(t, "a@example.net", "demo.cancelled"), "another event resumes nothing")
	r.advance(time.Minute)
	got := r.resume(t, "a@example.net", "demo.booked")
	require.Len(t, got, 1)
	require.Equal(t, engine.Resumed{StepRunID: run, CampaignID: id, StepID: got[0].StepID, ContactID: r.contactID(t, "a@example.net")}, got[0])
	require.Empty(t, r.resume(t, "a@example.net", "demo.booked"), "a wait resumes once")
	require.Equal(t, r.clock, *r.lead(t, id, "a@example.net").Due, "the resumed lead is due now")

	r.run(t) // past the wait
	r.run(t) // the email, due at once
	require.Equal(t, 1, r.work(t))
	require.Equal(t, map[string]int{"a@example.net": 1}, r.received())
	require.Equal(t, "completed", r.lead(t, id, "a@example.net").State)
	_, status = r.stepRun(t, id, "a@example.net", 0)
	require.Equal(t, engine.RunResumed, status)
	require.Equal(t, `waiting for the event "demo.booked"`, r.lead(t, id, "b@example.net").WaitReason, "the other lead still waits")
}

func TestAWaitForEventThatTimesOutContinuesOrStopsByItsOnTimeout(t *testing.T) {
	r := newRig(t)
	goOn := r.campaign(t, eventWaitSteps("continue"), "go@example.net")
	stop := r.campaign(t, eventWaitSteps("stop"), "stop@example.net")
	r.run(t)
	r.advance(59 * time.Minute)
	r.run(t)
	require.Zero(t, r.work(t), "nothing moves before the timeout")

	r.advance(time.Minute)
	r.run(t)
	require.Empty(t, r.resume(t, "go@example.net", "demo.booked"), "a timed-out wait is not resumed")
	_, status := r.stepRun(t, goOn, "go@example.net", 0)
	require.Equal(t, engine.RunTimedOut, status)
	l := r.lead(t, stop, "stop@example.net")
	require.Equal(t, "completed", l.State)
	require.Equal(t, engine.ReasonEventTimedOut, l.WaitReason)
	require.Equal(t, "completed", r.status(t, stop))

	r.run(t)
	require.Equal(t, 1, r.work(t))
	require.Equal(t, map[string]int{"go@example.net": 1}, r.received(), "on_timeout continue sends the next step; stop sends nothing")
}
