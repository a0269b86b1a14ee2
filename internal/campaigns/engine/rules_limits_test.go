package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/mail/sending"
)

// Rules of how many leads are sent: the campaign's daily limit, its ramp, the new-lead quota and its order, and
// the mailbox's gap and cap shared by every campaign.

// localMidnight is the first midnight in loc after t.
func localMidnight(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}

// requireUnsentWait asserts every lead of the campaign not sent yet waits with the reason until at.
func (r *rig) requireUnsentWait(t *testing.T, id uuid.UUID, leads map[string]leadRow, reason string, at time.Time) {
	t.Helper()
	for email, l := range leads {
		if l.Sent > 0 || l.Task != nil {
			continue
		}
		require.Equal(t, reason, l.WaitReason, "%s of campaign %v", email, id)
		require.NotNil(t, l.Due, email)
		require.True(t, l.Due.Equal(at), "%s is due %s, want %s", email, l.Due, at)
	}
}

// requireHoldWait checks that GET .../leads/{contactId}/hold tells every unsent lead of the campaign the reason
// and the time it waits for (a campaign-wide wait is one write to the campaign; the API reads it per lead).
func (r *rig) requireHoldWait(t *testing.T, id uuid.UUID, reason string, at time.Time) {
	t.Helper()
	for email, l := range r.leadsOf(t, id) {
		if l.Sent > 0 || l.Task != nil {
			continue
		}
		h, err := r.c.CampaignsGetLeadHold(context.Background(), api.CampaignsGetLeadHoldParams{ID: id, ContactId: r.contactID(t, email)})
		require.NoError(t, err)
		require.Equal(t, reason, h.WaitReason.Value, email)
		require.True(t, h.NextStepAt.Value.Equal(at), "%s: next step at %s, want %s", email, h.NextStepAt.Value, at)
	}
}

func TestTheDailyLimitSendsThatManyPerCampaignLocalDayAndTheRestWaitForTheNextDay(t *testing.T) {
	r := newRig(t)
	ny := zone(t, "America/New_York")
	r.clockTo(t, nextWallTime(r.clock, ny, 10, 0))
	id := r.campaignWith(t, oneStep(), func(c *api.CampaignCreate) {
		c.Timezone, c.DailyLimit = api.NewOptString("America/New_York"), api.NewOptInt(2)
	}, leadAddresses("day", 5)...)

	require.Equal(t, 2, r.run(t).Sends)
	r.work(t)
	tomorrow := localMidnight(r.clock, ny)
	r.requireUnsentWait(t, id, r.leadsOf(t, id), engine.ReasonCampaignLimit, tomorrow)
	r.requireHoldWait(t, id, engine.ReasonCampaignLimit, tomorrow)
	// A lead added later the same day finds the day's sends taken.
	r.advance(time.Hour)
	r.addLeads(t, id, "later@example.net")
	require.Zero(t, r.run(t).Sends)
	r.requireUnsentWait(t, id, r.leadsOf(t, id), engine.ReasonCampaignLimit, tomorrow)
	r.requireHoldWait(t, id, engine.ReasonCampaignLimit, tomorrow)

	for day, want := range []int{2, 2} {
		r.clockTo(t, tomorrow)
		require.Equal(t, want, r.run(t).Sends, "day %d", day+2)
		r.work(t)
		tomorrow = localMidnight(r.clock, ny)
		r.requireUnsentWait(t, id, r.leadsOf(t, id), engine.ReasonCampaignLimit, tomorrow)
	}
	received := r.received()
	require.Len(t, received, 6)
	for to, n := range received {
		require.Equal(t, 1, n, to)
	}
	require.Equal(t, "completed", r.status(t, id))
	var actor, from string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT actor_type, metadata->>'from' FROM audit_log
			WHERE event = 'campaign.completed' AND target_id = $1`, id.String()).Scan(&actor, &from)
	})
	require.Equal(t, "system", actor, "the engine's completion is audited, by the system")
	require.Equal(t, "active", from)
}

func TestTheRampSendsMoreEachSendingDayUpToItsCeiling(t *testing.T) {
	r := newRig(t)
	id := r.campaignWith(t, oneStep(), func(c *api.CampaignCreate) {
		c.DailyLimit, c.RampEnabled = api.NewOptInt(10), api.NewOptBool(true)
		c.RampStart, c.RampIncrement, c.RampCeiling = api.NewOptInt(1), api.NewOptInt(1), api.NewOptInt(3)
	}, leadAddresses("ramp", 10)...)

	for day, want := range []int{1, 2, 3, 3, 1} {
		require.Equal(t, want, r.run(t).Sends, "day %d", day+1)
		r.work(t)
		c, err := r.c.CampaignsGet(context.Background(), api.CampaignsGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, day, c.RampLevel.Value, "the level advances once per sending day (day %d)", day+1)
		tomorrow := localMidnight(r.clock, time.UTC)
		if day < 4 {
			r.requireUnsentWait(t, id, r.leadsOf(t, id), engine.ReasonRamp, tomorrow)
		}
		r.clockTo(t, tomorrow)
	}
	require.Len(t, r.received(), 10)
}

func TestTheNewLeadQuotaLetsOneNewLeadStartEachDayBesideTheFollowUps(t *testing.T) {
	r := newRig(t)
	id := r.campaignWith(t, twoSteps(), func(c *api.CampaignCreate) { c.MaxNewLeadsPerDay = api.NewOptInt(1) },
		leadAddresses("quota", 3)...)

	require.Equal(t, 1, r.run(t).Sends)
	r.work(t)
	leads := r.leadsOf(t, id)
	first := ""
	for email, l := range leads {
		if l.Sent == 1 {
			first = email
		}
	}
	require.NotEmpty(t, first)
	r.requireUnsentWait(t, id, leads, engine.ReasonNewLeadQuota, localMidnight(r.clock, time.UTC))

	r.clockTo(t, *leads[first].Due)
	require.Equal(t, 2, r.run(t).Sends, "the first lead's follow-up and one new lead")
	r.work(t)
	leads = r.leadsOf(t, id)
	require.Equal(t, 2, leads[first].Sent)
	require.Equal(t, "completed", leads[first].State)
	started := 0
	for email, l := range leads {
		if email != first && l.Sent == 1 {
			started++
		}
	}
	require.Equal(t, 1, started, "one new lead on the second day")
	r.requireUnsentWait(t, id, leads, engine.ReasonNewLeadQuota, localMidnight(r.clock, time.UTC))
}

func TestPrioritizeNewLeadsDecidesWhoTakesTheDaysLastSend(t *testing.T) {
	for _, prioritize := range []bool{false, true} {
		t.Run(fmt.Sprintf("prioritize_new_leads=%v", prioritize), func(t *testing.T) {
			r := newRig(t)
			id := r.campaignWith(t, twoSteps(), func(c *api.CampaignCreate) {
				c.DailyLimit, c.PrioritizeNewLeads = api.NewOptInt(1), api.NewOptBool(prioritize)
			}, "one@example.net", "two@example.net")
			require.Equal(t, 1, r.run(t).Sends)
			r.work(t)
			leads := r.leadsOf(t, id)
			started, fresh := "one@example.net", "two@example.net"
			if leads[started].Sent == 0 {
				started, fresh = fresh, started
			}
			require.Equal(t, engine.ReasonCampaignLimit, leads[fresh].WaitReason)

			r.clockTo(t, *leads[started].Due) // the follow-up is due, and so is the new lead since midnight
			require.Equal(t, 1, r.run(t).Sends)
			r.work(t)
			leads = r.leadsOf(t, id)
			if prioritize {
				require.Equal(t, 1, leads[fresh].Sent, "the new lead took the day's send")
				require.Equal(t, 1, leads[started].Sent)
				require.Equal(t, 1, leads[started].Position, "the follow-up waits")
				require.Equal(t, engine.ReasonCampaignLimit, leads[started].WaitReason)
				return
			}
			require.Equal(t, 2, leads[started].Sent, "the follow-up took the day's send")
			require.Zero(t, leads[fresh].Sent)
			require.Equal(t, engine.ReasonCampaignLimit, leads[fresh].WaitReason, "the new lead waits")
		})
	}
}

func TestTheMailboxGapSpacesSendsAndItsCapStopsTheDayUntilTheMailboxsMidnight(t *testing.T) {
	r := newRig(t)
	tokyo := zone(t, "Asia/Tokyo")
	r.clockTo(t, nextWallTime(r.clock, tokyo, 12, 0))
	id := r.campaign(t, oneStep(), leadAddresses("gap", 3)...)
	r.exec(t, `UPDATE mailboxes SET min_wait_time = 120, campaign_limit = 2, timezone = 'Asia/Tokyo' WHERE id = $1`, r.box.ID)

	require.Equal(t, 1, r.run(t).Sends, "one send per gap")
	r.work(t)
	var last time.Time
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT last_capped_send_at FROM mailboxes WHERE id = $1`, r.box.ID).Scan(&last)
	})
	require.True(t, last.Equal(r.clock))
	// The waiting leads line up: one takes the slot the gap opens, the other's place is past the cap.
	waits := map[string]time.Time{}
	for email, l := range r.leadsOf(t, id) {
		if l.Sent == 0 && l.Task == nil {
			require.NotNil(t, l.Due, email)
			waits[l.WaitReason] = *l.Due
		}
	}
	require.Len(t, waits, 2, "%v", waits)
	require.True(t, waits[engine.ReasonGap].Equal(last.Add(120*time.Second)), "%v", waits)
	require.True(t, waits[engine.ReasonMailboxCap].Equal(localMidnight(r.clock, tokyo)), "%v", waits)
	r.advance(119 * time.Second)
	require.Zero(t, r.run(t).Sends)

	r.advance(time.Second)
	require.Equal(t, 1, r.run(t).Sends, "the next send once the gap is over")
	r.work(t)
	midnight := localMidnight(r.clock, tokyo)
	r.requireUnsentWait(t, id, r.leadsOf(t, id), engine.ReasonMailboxCap, midnight)
	require.Equal(t, 2, r.mailboxDay(t, sending.MailboxDay(r.clock, "Asia/Tokyo")))

	r.clockTo(t, midnight)
	require.Equal(t, 1, r.run(t).Sends)
	r.work(t)
	require.Len(t, r.received(), 3)
	require.Equal(t, 1, r.mailboxDay(t, sending.MailboxDay(r.clock, "Asia/Tokyo")))
}

func TestCampaignsSharingAMailboxNeverExceedItsDailyCapTogether(t *testing.T) {
	r := newRig(t)
	tokyo := zone(t, "Asia/Tokyo")
	r.clockTo(t, nextWallTime(r.clock, tokyo, 12, 0))
	a := r.create(t, oneStep())
	b := r.create(t, oneStep())
	r.exec(t, `UPDATE mailboxes SET campaign_limit = 2, timezone = 'Asia/Tokyo' WHERE id = $1`, r.box.ID)
	r.addLeads(t, a, leadAddresses("a", 3)...)
	r.addLeads(t, b, leadAddresses("b", 3)...)
	r.start(t, a)
	r.start(t, b)

	for day := range 3 {
		require.Equal(t, 2, r.run(t).Sends, "day %d", day+1)
		require.Equal(t, 2, r.work(t))
		require.Len(t, r.smtp.Messages(), 2*(day+1))
		require.Equal(t, 2, r.mailboxDay(t, sending.MailboxDay(r.clock, "Asia/Tokyo")), "day %d", day+1)
		midnight := localMidnight(r.clock, tokyo)
		r.requireUnsentWait(t, a, r.leadsOf(t, a), engine.ReasonMailboxCap, midnight)
		r.requireUnsentWait(t, b, r.leadsOf(t, b), engine.ReasonMailboxCap, midnight)
		r.clockTo(t, midnight)
	}
	received := r.received()
	require.Len(t, received, 6)
	for to, n := range received {
		require.Equal(t, 1, n, to)
	}
}
