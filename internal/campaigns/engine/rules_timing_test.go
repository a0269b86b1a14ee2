package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
)

// Rules of when a lead is sent: the sending window, the entry delay, per-lead holds and send-time optimisation.

func TestALeadOutsideTheWindowWaitsForItsStartAndAScheduleChangeTakesEffectAtOnce(t *testing.T) {
	r := newRig(t)
	ny := zone(t, "America/New_York")
	weekdays := func(c *api.CampaignCreate) {
		c.Timezone, c.Days = api.NewOptString("America/New_York"), api.NewOptInt(monToFri)
		c.StartTime, c.EndTime = api.NewOptString("09:00"), api.NewOptString("17:00")
	}
	saturday := nextWallTime(r.clock, ny, 12, 0, time.Saturday)
	r.clockTo(t, saturday)
	waits := r.campaignWith(t, oneStep(), weekdays, "waits@example.net")
	patched := r.campaignWith(t, oneStep(), weekdays, "patched@example.net")

	require.Zero(t, r.run(t).Sends, "nothing is sent on a Saturday")
	monday := time.Date(saturday.Year(), saturday.Month(), saturday.Day()+2, 9, 0, 0, 0, ny)
	l := r.lead(t, waits, "waits@example.net")
	require.Equal(t, engine.ReasonOutsideWindow, l.WaitReason)
	require.NotNil(t, l.Due)
	require.True(t, l.Due.Equal(monday), "due at the next window start, Monday 09:00 New York, not %s", l.Due.In(ny))
	require.Equal(t, engine.ReasonOutsideWindow, r.lead(t, patched, "patched@example.net").WaitReason)

	// Adding Saturday to one campaign's days makes its waiting lead due at once; the other keeps waiting.
	_, err := r.c.CampaignsUpdate(context.Background(), &api.CampaignUpdate{Days: api.NewOptInt(monToSat)},
		api.CampaignsUpdateParams{ID: patched})
	require.NoError(t, err)
	require.Equal(t, 1, r.run(t).Sends)
	require.Equal(t, 1, r.work(t))
	require.Equal(t, map[string]int{"patched@example.net": 1}, r.received())
	require.Equal(t, engine.ReasonOutsideWindow, r.lead(t, waits, "waits@example.net").WaitReason)

	r.clockTo(t, monday.Add(-time.Minute))
	require.Zero(t, r.run(t).Sends, "a minute before the window opens")
	r.clockTo(t, monday)
	require.Equal(t, 1, r.run(t).Sends, "sent when the window opens")
	r.work(t)
	require.Equal(t, map[string]int{"patched@example.net": 1, "waits@example.net": 1}, r.received())
}

func TestANewLeadWaitsForTheEntryDelayFromWhenItEntered(t *testing.T) {
	r := newRig(t)
	id := r.campaignWith(t, oneStep(), func(c *api.CampaignCreate) { c.EntryDelayMinutes = api.NewOptInt(30) }, "late@example.net")
	var entered time.Time
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT entered_at FROM campaign_leads WHERE campaign_id = $1`, id).Scan(&entered)
	})

	require.Zero(t, r.run(t).Sends)
	l := r.lead(t, id, "late@example.net")
	require.Equal(t, engine.ReasonEntryDelay, l.WaitReason)
	require.NotNil(t, l.Due)
	require.True(t, l.Due.Equal(entered.Add(30*time.Minute)), "due 30 minutes after it entered (%s), not %s", entered, l.Due)

	r.clockTo(t, entered.Add(30*time.Minute-time.Second))
	require.Zero(t, r.run(t).Sends)
	r.clockTo(t, entered.Add(30*time.Minute))
	require.Equal(t, 1, r.run(t).Sends)
	r.work(t)
	require.Equal(t, map[string]int{"late@example.net": 1}, r.received())
}

func TestAHeldLeadIsNotSentUntilResumedOrItsHoldEnds(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	id := r.campaign(t, oneStep(), "held@example.net", "until@example.net", "free@example.net")
	held, until := r.contactID(t, "held@example.net"), r.contactID(t, "until@example.net")
	_, err := r.c.CampaignsPauseLead(ctx, api.OptCampaignLeadPauseRequest{}, api.CampaignsPauseLeadParams{ID: id, ContactId: held})
	require.NoError(t, err)
	ends := r.clock.Add(2 * time.Hour)
	_, err = r.c.CampaignsPauseLead(ctx, api.NewOptCampaignLeadPauseRequest(api.CampaignLeadPauseRequest{
		Until: api.NewOptNilDateTime(ends), Reason: api.NewOptString("on leave")}),
		api.CampaignsPauseLeadParams{ID: id, ContactId: until})
	require.NoError(t, err)

	require.Equal(t, 1, r.run(t).Sends, "only the lead without a hold is sent")
	r.work(t)
	require.Equal(t, map[string]int{"free@example.net": 1}, r.received())
	h, err := r.c.CampaignsGetLeadHold(ctx, api.CampaignsGetLeadHoldParams{ID: id, ContactId: held})
	require.NoError(t, err)
	require.Contains(t, h.WaitReason.Value, "Held")
	require.True(t, h.NextStepAt.Null || !h.NextStepAt.Set, "held until resumed: no next step time")
	require.False(t, h.Sending.Value)
	require.False(t, h.Hold.Null)
	require.Equal(t, api.CampaignLeadHoldSourceManual, h.Hold.Value.Source)
	h, err = r.c.CampaignsGetLeadHold(ctx, api.CampaignsGetLeadHoldParams{ID: id, ContactId: until})
	require.NoError(t, err)
	require.True(t, h.NextStepAt.Value.Equal(ends), "a hold with until is looked at again when it ends")

	_, err = r.c.CampaignsResumeLead(ctx, api.CampaignsResumeLeadParams{ID: id, ContactId: held})
	require.NoError(t, err)
	require.Equal(t, 1, r.run(t).Sends, "a resumed lead is due at once")
	r.work(t)
	require.Equal(t, 1, r.received()["held@example.net"])

	r.clockTo(t, ends.Add(-time.Second))
	require.Zero(t, r.run(t).Sends)
	r.clockTo(t, ends)
	require.Equal(t, 1, r.run(t).Sends, "the engine lifts a hold whose until passed and sends the lead")
	r.work(t)
	require.Equal(t, map[string]int{"free@example.net": 1, "held@example.net": 1, "until@example.net": 1}, r.received())
	h, err = r.c.CampaignsGetLeadHold(ctx, api.CampaignsGetLeadHoldParams{ID: id, ContactId: until})
	require.NoError(t, err)
	require.True(t, h.Hold.Null, "the lifted hold is gone")
	require.Equal(t, "completed", r.status(t, id))
}

func TestSendTimeOptimisationWaitsForTheContactsPreferredHour(t *testing.T) {
	r := newRig(t)
	berlin := zone(t, "Europe/Berlin")
	noon := nextWallTime(r.clock, berlin, 12, 0)
	r.clockTo(t, noon)
	id := r.create(t, oneStep())
	require.NoError(t, r.c.CampaignsUpdateAdvanced(context.Background(), &api.CampaignAdvancedUpdate{Settings: api.AdvancedOutreachSettings{
		SendTimeOptimization: api.NewOptAdvancedOutreachSettingsSendTimeOptimization(api.AdvancedOutreachSettingsSendTimeOptimization{
			Enabled: api.NewOptBool(true), UseContactTimezone: api.NewOptBool(false), PreferredHours: []int{10},
			DefaultContactTimezone: api.NewOptString("Europe/Berlin"), WeekendWeightMultiplier: api.NewOptFloat64(1)})}},
		api.CampaignsUpdateAdvancedParams{ID: id}))
	r.addLeads(t, id, "berlin@example.net")
	r.start(t, id)

	require.Zero(t, r.run(t).Sends, "12:00 in Berlin is not a preferred hour")
	ten := time.Date(noon.Year(), noon.Month(), noon.Day()+1, 10, 0, 0, 0, berlin)
	l := r.lead(t, id, "berlin@example.net")
	require.Equal(t, engine.ReasonContactHours, l.WaitReason)
	require.NotNil(t, l.Due)
	require.True(t, l.Due.Equal(ten), "due at 10:00 Berlin the next day, not %s", l.Due.In(berlin))

	r.clockTo(t, ten)
	require.Equal(t, 1, r.run(t).Sends)
	r.work(t)
	require.Equal(t, map[string]int{"berlin@example.net": 1}, r.received())
}
