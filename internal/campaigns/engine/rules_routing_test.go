package engine_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
)

// Rules of who gets which step: step conditions route leads, and the gates (unsubscribed, suppressed, a
// verification verdict) stop leads before anything is sent.

// conditioned is a three-step sequence whose second step carries the conditions object.
func conditioned(when, otherwise string) []api.CampaignStepCreate {
	cond := api.CampaignStepCreateConditions{"when": jx.Raw(`"` + when + `"`), "otherwise": jx.Raw(`"` + otherwise + `"`)}
	return []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("Body of step one.")},
		{BodyPlain: api.NewOptString("Body of step two."), WaitAfter: api.NewOptInt(1),
			Conditions: api.NewOptCampaignStepCreateConditions(cond)},
		{BodyPlain: api.NewOptString("Body of step three."), WaitAfter: api.NewOptInt(1)},
	}
}

// stepsReceived lists which of the sequence's steps each recipient got, by the bodies the SMTP server saw.
func (r *rig) stepsReceived() map[string][]string {
	out := map[string][]string{}
	for _, m := range r.smtp.Messages() {
		for _, step := range []string{"one", "two", "three"} {
			if bytes.Contains(m.Data, []byte("Body of step "+step+".")) {
				for _, to := range m.To {
					out[to] = append(out[to], step)
				}
			}
		}
	}
	return out
}

func TestStepConditionsSkipOrStopALeadWhoseEngagementDoesNotMatch(t *testing.T) {
	r := newRig(t)
	skip := r.campaign(t, conditioned("opened", "skip"), "opener@example.net", "silent@example.net")
	stop := r.campaign(t, conditioned("clicked", "stop"), "noclick@example.net")
	require.Equal(t, 3, r.run(t).Sends)
	r.work(t)
	r.exec(t, `UPDATE campaign_leads SET opened = 1 WHERE campaign_id = $1 AND contact_id = $2`, skip, r.contactID(t, "opener@example.net"))

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends, "only the lead that opened gets step two")
	r.work(t)
	silent := r.lead(t, skip, "silent@example.net")
	require.Equal(t, engine.ReasonConditionSkip, silent.WaitReason)
	require.Equal(t, 2, silent.Position, "step two is skipped")
	require.NotNil(t, silent.Due)
	require.True(t, silent.Due.Equal(r.clock.Add(24*time.Hour)), "step three keeps its own delay")
	stopped := r.lead(t, stop, "noclick@example.net")
	require.Equal(t, "completed", stopped.State)
	require.Equal(t, engine.ReasonConditionStop, stopped.WaitReason)
	require.Nil(t, stopped.Due)
	require.Equal(t, 1, stopped.Sent)

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 2, r.run(t).Sends)
	r.work(t)
	require.Equal(t, map[string][]string{
		"opener@example.net":  {"one", "two", "three"},
		"silent@example.net":  {"one", "three"},
		"noclick@example.net": {"one"},
	}, r.stepsReceived())
	require.Equal(t, "completed", r.status(t, skip))
	require.Equal(t, "completed", r.status(t, stop))
}

func TestAStepConditionTheEngineDoesNotKnowIsRefusedNamingTheField(t *testing.T) {
	r := newRig(t)
	id := r.create(t, oneStep())
	_, err := r.c.CampaignsCreateStep(context.Background(), api.NewOptCampaignStepCreate(api.CampaignStepCreate{
		BodyPlain: api.NewOptString("Follow-up."), WaitAfter: api.NewOptInt(1),
		Conditions: api.NewOptCampaignStepCreateConditions(api.CampaignStepCreateConditions{"when": jx.Raw(`"bounced"`)}),
	}), api.CampaignsCreateStepParams{ID: id})
	msg := apiRefusal(t, err, 400, "invalid_step")
	require.Contains(t, msg, "conditions.when")
	require.Contains(t, msg, "opened")
}

func TestTheGatesStopUnsubscribedSuppressedAndRefusedAddressesBeforeAnythingIsSent(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	strict := r.create(t, oneStep())
	r.addLeads(t, strict, "ok@example.net", "unsub@example.net", "supp@example.net", "invalid@example.net", "risky@example.net")
	lenient := r.createWith(t, oneStep(), func(c *api.CampaignCreate) { c.RiskyEmails = api.NewOptBool(true) })
	r.addLeads(t, lenient, "risky-ok@example.net")
	_, err := r.c.ContactsUpdate(ctx, &api.ContactUpdate{Subscribed: api.NewOptBool(false)},
		api.ContactsUpdateParams{ID: r.contactID(t, "unsub@example.net")})
	require.NoError(t, err)
	_, err = r.c.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{
		Entries: []api.AddSuppressionsRequestEntriesItem{{Value: "supp@example.net"}}, Reason: api.NewOptString("asked")})
	require.NoError(t, err)
	r.exec(t, `UPDATE contacts SET verification_status = 'invalid', verification_source = 'manual' WHERE email = 'invalid@example.net'`)
	r.exec(t, `UPDATE contacts SET verification_status = 'risky', verification_source = 'manual'
		WHERE email IN ('risky@example.net', 'risky-ok@example.net')`)
	r.start(t, strict)
	r.start(t, lenient)

	require.Equal(t, 2, r.run(t).Sends)
	r.work(t)
	require.Equal(t, map[string]int{"ok@example.net": 1, "risky-ok@example.net": 1}, r.received(),
		"risky addresses go out only with risky_emails")
	unsub := r.lead(t, strict, "unsub@example.net")
	require.Equal(t, "completed", unsub.State)
	require.Zero(t, unsub.Sent)
	require.Nil(t, unsub.Due)
	for email, failure := range map[string]string{
		"supp@example.net":    "suppressed",
		"invalid@example.net": "invalid",
		"risky@example.net":   "risky_emails",
	} {
		l := r.lead(t, strict, email)
		require.Equal(t, "undeliverable", l.State, email)
		require.Contains(t, l.Failure, failure, email)
		require.Nil(t, l.Due, email)
		require.Zero(t, l.Sent, email)
	}
	require.Len(t, r.logLines(t, strict, "lead_undeliverable"), 3)
	require.Equal(t, "completed", r.status(t, strict))
}
