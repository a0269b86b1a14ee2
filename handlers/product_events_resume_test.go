package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// waitingRun stores a wait_for_event step run of contact in campaign, with status and the event name it waits
// for, and the contact's lead waiting on it (no due time), as the engine leaves them.
func (r eventsRig) waitingRun(t *testing.T, campaign, contact uuid.UUID, name, status string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	orgExec(t, r.env, r.org, `INSERT INTO campaign_leads (organization_id, campaign_id, contact_id, state, due_at)
		VALUES ($1, $2, $3, 'active', NULL) ON CONFLICT DO NOTHING`, r.org, campaign, contact)
	orgExec(t, r.env, r.org, `INSERT INTO campaign_step_runs (organization_id, id, campaign_id, step_id, contact_id, kind, status,
		wait_event_name, wait_until) VALUES ($1, $2, $3, $4, $5, 'wait_for_event', $6, $7, now() + interval '1 day')`,
		r.org, id, campaign, uuid.New(), contact, status, name)
	return id
}

// matched lists the step runs an answer names, checking each names its campaign and contact, resumed and live.
func matched(t *testing.T, res *api.ProductEventAccepted) []uuid.UUID {
	t.Helper()
	require.Len(t, res.MatchedRuns, res.MatchedWaits)
	out := make([]uuid.UUID, len(res.MatchedRuns))
	for i, m := range res.MatchedRuns {
		require.Equal(t, res.ContactID, m.ContactID.Value)
		require.True(t, m.CampaignID.Set && m.StepID.Set)
		require.Equal(t, "resumed", m.State.Value)
		require.Equal(t, api.ProductEventAcceptedMatchedRunsItemModeLive, m.Mode.Value)
		out[i] = m.RunID.Value
	}
	return out
}

func TestProductEventResumesEveryWaitOpenForItsContactAndNameOnce(t *testing.T) {
	t.Parallel()
	r := newEventsRig(t)
	ctx := context.Background()
	first, second := seedCampaign(t, r.env, r.org, "Onboarding"), seedCampaign(t, r.env, r.org, "Upsell")
	adaFirst := r.waitingRun(t, first, r.ada.ID, "demo.booked", "waiting")
	adaSecond := r.waitingRun(t, second, r.ada.ID, "demo.booked", "waiting")
	otherName := r.waitingRun(t, first, r.ada.ID, "demo.cancelled", "waiting")
	bobs := r.waitingRun(t, first, r.bob.ID, "demo.booked", "waiting")
	timedOut := r.waitingRun(t, seedCampaign(t, r.env, r.org, "Old"), r.ada.ID, "demo.booked", "timed_out")
	status := func(id uuid.UUID) int64 {
		t.Helper()
		return orgInt(t, r.env, r.org, `SELECT CASE status WHEN 'waiting' THEN 0 WHEN 'resumed' THEN 1 ELSE 2 END FROM campaign_step_runs WHERE id = $1`, id)
	}
	due := func(campaign, contact uuid.UUID) int64 {
		t.Helper()
		return orgInt(t, r.env, r.org, `SELECT count(*) FROM campaign_leads WHERE campaign_id = $1 AND contact_id = $2
			AND due_at BETWEEN now() - interval '1 minute' AND now() + interval '1 minute'`, campaign, contact)
	}

	// Another name, or another contact, resumes nothing.
	res, err := r.publish(t, "e0", api.PublishProductEvent{Name: "demo.booked.late", ContactID: api.NewOptUUID(r.ada.ID)})
	require.NoError(t, err)
	require.Empty(t, matched(t, res))
	res, err = r.publish(t, "e1", api.PublishProductEvent{Name: "demo.cancelled", ContactID: api.NewOptUUID(r.bob.ID)})
	require.NoError(t, err)
	require.Empty(t, matched(t, res))

	booked, err := r.publish(t, "e2", api.PublishProductEvent{Name: "demo.booked", Email: api.NewOptString("ada@example.com")})
	require.NoError(t, err)
	require.ElementsMatch(t, []uuid.UUID{adaFirst, adaSecond}, matched(t, booked), "each open wait of the contact for the name")
	for _, id := range []uuid.UUID{adaFirst, adaSecond} {
		require.Equal(t, int64(1), status(id))
		require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM campaign_step_runs WHERE id = $1 AND resumed_by_event = $2`,
			id, booked.EventID))
	}
	require.Equal(t, int64(1), due(first, r.ada.ID), "the resumed lead is due now")
	require.Equal(t, int64(1), due(second, r.ada.ID))
	require.Equal(t, int64(0), status(otherName))
	require.Equal(t, int64(0), status(bobs))
	require.Equal(t, int64(2), status(timedOut), "a wait that timed out stays so")
	require.Zero(t, due(first, r.bob.ID), "another contact's lead keeps waiting")

	// A second event of the name resumes nothing again; a replay of the first answers what it resumed.
	res, err = r.publish(t, "e3", api.PublishProductEvent{Name: "demo.booked", ContactID: api.NewOptUUID(r.ada.ID)})
	require.NoError(t, err)
	require.Empty(t, matched(t, res))
	other := r.env.Client(t, scopedKey(t, r.env, r.org, auth.WriteEvents))
	replay, err := other.ProductEventsCreate(ctx, &api.PublishProductEvent{Name: "demo.booked", Email: api.NewOptString("ada@example.com")},
		api.ProductEventsCreateParams{IdempotencyKey: "e2"})
	require.NoError(t, err)
	require.Equal(t, booked.EventID, replay.EventID)
	require.ElementsMatch(t, []uuid.UUID{adaFirst, adaSecond}, matched(t, replay))
	require.Equal(t, int64(2), orgInt(t, r.env, r.org, `SELECT count(*) FROM campaign_step_runs WHERE status = 'resumed'`))

	// The other name's wait resumes on its own event, a moment later.
	res, err = r.publish(t, "e4", api.PublishProductEvent{Name: "demo.cancelled", ContactID: api.NewOptUUID(r.ada.ID),
		OccurredAt: api.NewOptDateTime(time.Now().Add(-time.Minute))})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{otherName}, matched(t, res))
}
