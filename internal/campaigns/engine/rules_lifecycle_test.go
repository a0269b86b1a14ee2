package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// Rules of a campaign's life and its senders: an emptied explicit pool pauses it, a stop cancels what is queued,
// a completed campaign restarts for a new lead only when it could launch, and a strict ESP match waits.

func TestAnExplicitPoolWithoutAnActiveMailboxPausesTheCampaignAndGivesItsQueuedSendsBack(t *testing.T) {
	r := newRig(t)
	id := r.campaignWith(t, oneStep(), func(c *api.CampaignCreate) {
		c.SenderStrategy = api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit)
		c.Senders = []api.CampaignSenderInput{{EmailAccountID: r.box.ID}}
	}, "queued@example.net")
	require.Equal(t, 1, r.run(t).Sends)
	r.addLeads(t, id, "due@example.net")
	r.exec(t, `UPDATE mailboxes SET status = 'inactive' WHERE id = $1`, r.box.ID)

	require.Zero(t, r.run(t).Sends)
	require.Equal(t, "paused_no_accounts", r.status(t, id))
	require.Equal(t, 1, r.campaignEvents(t, id, events.CampaignPaused))
	var notified int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM notifications n
			WHERE n.organization_id = $1 AND n.category = 'campaign_paused' AND n.link = '/campaigns/' || $2::text
			  AND n.user_id IN (SELECT user_id FROM memberships WHERE organization_id = $1 AND role IN ('owner', 'admin'))`,
			r.org, id.String()).Scan(&notified)
	})
	require.Equal(t, 1, notified, "the owner hears the campaign was paused")

	cancelled := r.taskIDs(t, id, "canceled")
	require.Len(t, cancelled, 1)
	require.Empty(t, r.taskIDs(t, id, "queued"))
	l := r.lead(t, id, "queued@example.net")
	require.Nil(t, l.Task)
	require.Zero(t, l.Position, "the lead is back at its step")
	require.NotNil(t, l.Due)
	r.attempt(t, cancelled)
	require.Empty(t, r.smtp.Messages(), "a late attempt of the cancelled send sends nothing")
}

func TestStoppingACampaignCancelsItsQueuedSendsAndAStartSendsEachLeadItsStepOnce(t *testing.T) {
	r := newRig(t)
	addrs := leadAddresses("stop", 3)
	id := r.campaignWith(t, oneStep(), func(c *api.CampaignCreate) { c.DailyLimit = api.NewOptInt(3) }, addrs...)
	r.exec(t, `UPDATE mailboxes SET campaign_limit = 3 WHERE id = $1`, r.box.ID)
	require.Equal(t, 3, r.run(t).Sends)

	_, err := r.c.CampaignsStop(context.Background(), api.CampaignsStopParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, "paused", r.status(t, id))
	cancelled := r.taskIDs(t, id, "canceled")
	require.Len(t, cancelled, 3)
	for email, l := range r.leadsOf(t, id) {
		require.Nil(t, l.Task, email)
		require.Zero(t, l.Position, email)
		require.NotNil(t, l.Due, email)
		require.False(t, l.Due.After(r.clock), "%s is due now", email)
	}
	r.attempt(t, cancelled)
	require.Zero(t, r.run(t).Sends, "a stopped campaign plans nothing")
	require.Empty(t, r.smtp.Messages())

	r.start(t, id)
	require.Equal(t, 3, r.run(t).Sends, "the cancelled sends gave their places in the campaign's day and the mailbox's back")
	r.work(t)
	received := r.received()
	require.Len(t, received, 3)
	for _, a := range addrs {
		require.Equal(t, 1, received[a], a)
	}
	require.Equal(t, "completed", r.status(t, id))
}

func TestACompletedCampaignRestartsForANewLeadOnlyWhenItCouldLaunch(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, oneStep(), "first@example.net")
	r.run(t)
	r.work(t)
	require.Equal(t, "completed", r.status(t, id))
	require.Equal(t, 1, r.campaignEvents(t, id, events.CampaignStarted))

	r.addLeads(t, id, "second@example.net")
	require.Equal(t, 1, r.run(t).Sends)
	require.Equal(t, "active", r.status(t, id))
	require.Equal(t, 2, r.campaignEvents(t, id, events.CampaignStarted), "the restart is a start")
	r.work(t)
	require.Equal(t, map[string]int{"first@example.net": 1, "second@example.net": 1}, r.received())
	require.Equal(t, "completed", r.status(t, id))

	// With no active mailbox the launch checks fail: the restart is refused and the new lead waits for a person.
	r.exec(t, `UPDATE mailboxes SET status = 'inactive' WHERE id = $1`, r.box.ID)
	r.advance(time.Minute)
	r.addLeads(t, id, "third@example.net")
	require.Zero(t, r.run(t).Sends)
	require.Equal(t, "completed", r.status(t, id))
	require.Equal(t, 2, r.campaignEvents(t, id, events.CampaignStarted))
	refused := r.logLines(t, id, "restart_refused")
	require.Len(t, refused, 1)
	require.Contains(t, refused[0], "could not restart")
	l := r.lead(t, id, "third@example.net")
	require.Nil(t, l.Due, "it waits for a person to start the campaign")
	require.Contains(t, l.WaitReason, "could not restart")
	require.Zero(t, r.run(t).Sends, "a refused restart is not tried again on every run")
	require.Len(t, r.logLines(t, id, "restart_refused"), 1)
}

func TestStrictESPMatchingLeavesALeadWaitingWhenNoMailboxOfItsProviderExists(t *testing.T) {
	r := newRig(t)
	id := r.createWith(t, oneStep(), func(c *api.CampaignCreate) {
		c.EspMatchMode = api.NewOptCampaignCreateEspMatchMode(api.CampaignCreateEspMatchModeStrict)
	})
	r.addLeads(t, id, "gmail-user@example.net", "unknown@example.net")
	r.exec(t, `UPDATE contacts SET esp_provider = 'google' WHERE email = 'gmail-user@example.net'`)
	r.start(t, id)

	require.Equal(t, 1, r.run(t).Sends, "a contact whose provider is unknown is sent from any mailbox")
	r.work(t)
	require.Equal(t, map[string]int{"unknown@example.net": 1}, r.received())
	l := r.lead(t, id, "gmail-user@example.net")
	require.Equal(t, engine.ReasonESP, l.WaitReason)
	require.NotNil(t, l.Due)
	require.True(t, l.Due.Equal(r.clock.Add(time.Hour)), "looked at again in an hour, not %s", l.Due)

	// prefer falls back to a mailbox of another provider.
	_, err := r.c.CampaignsUpdate(context.Background(), &api.CampaignUpdate{
		EspMatchMode: api.NewOptCampaignUpdateEspMatchMode(api.CampaignUpdateEspMatchModePrefer)}, api.CampaignsUpdateParams{ID: id})
	require.NoError(t, err)
	r.clockTo(t, *l.Due)
	require.Equal(t, 1, r.run(t).Sends)
	r.work(t)
	require.Equal(t, 1, r.received()["gmail-user@example.net"])
}
