package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/deliverability"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// rateCampaign starts a two-step campaign over twenty leads (the fewest sends a rate is judged on) whose
// bounce_pipeline block pauses at the thresholds, and sends their first step.
func (r *rig) rateCampaign(t testing.TB, bounceThreshold, complaintThreshold string) (uuid.UUID, []string) {
	t.Helper()
	emails := leadAddresses("rate", 20)
	id := r.create(t, twoSteps())
	r.exec(t, `UPDATE campaigns SET advanced = jsonb_build_object('bounce_pipeline', jsonb_build_object('enabled', true,
		'auto_suppress_on_bounce', true, 'auto_suppress_on_complaint', true, 'auto_suppress_on_unsubscribe', true,
		'auto_pause_campaign_on_spike', true, 'pause_bounce_rate_threshold', $2::numeric,
		'pause_complaint_rate_threshold', $3::numeric)) WHERE id = $1`, id, bounceThreshold, complaintThreshold)
	r.addLeads(t, id, emails...)
	r.start(t, id)
	require.Equal(t, 20, r.run(t).Sends)
	require.Equal(t, 20, r.work(t))
	return id, emails
}

// pausedReason is the campaign's stored paused_reason.
func (r *rig) pausedReason(t testing.TB, id uuid.UUID) string {
	t.Helper()
	var reason string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT paused_reason FROM campaigns WHERE id = $1`, id).Scan(&reason)
	})
	return reason
}

func TestTheBounceRateWarnsInItsBandThenPausesTheCampaignAtTheThreshold(t *testing.T) {
	r := newRig(t)
	id, emails := r.rateCampaign(t, "0.1", "0.003")
	bounce := func(email string) {
		r.report(t, r.corpus(t, "postfix_hard.eml", id, email, "bob@example.net", email))
	}
	bounce(emails[0]) // 1 of 20: 5%, the band's edge (half the threshold)
	warnings := r.eventData(t, events.CampaignDeliverabilityWarning)
	require.Len(t, warnings, 1)
	require.Equal(t, map[string]any{"campaign_id": id.String(), "campaign_name": "Launch", "metric": "bounce_rate",
		"rate": 0.05, "threshold": 0.1, "sends": float64(20), "bounced": float64(1)}, warnings[0])
	require.Equal(t, "active", r.status(t, id))
	require.Zero(t, r.campaignEvents(t, id, events.CampaignPaused))

	bounce(emails[1]) // 2 of 20: 10%, the threshold
	require.Equal(t, "paused", r.status(t, id))
	require.Equal(t, "its bounce rate reached 10.0% of its last 20 sends (threshold 10.0%)", r.pausedReason(t, id))
	require.Equal(t, 1, r.campaignEvents(t, id, events.CampaignPaused))
	require.Len(t, r.eventData(t, events.CampaignDeliverabilityWarning), 1, "the band was entered once")
	require.Equal(t, 1, r.notified(t, "campaign_paused"))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM audit_log WHERE event = 'campaign.paused' AND target_id = $1
		AND actor_type = 'system'`, id.String()), "the pause is audited as the system's")

	bounce(emails[2])
	require.Equal(t, "paused", r.status(t, id))
	require.Equal(t, 1, r.campaignEvents(t, id, events.CampaignPaused), "a paused campaign is not paused again")
	require.Equal(t, 3, r.eventCount(t, events.CampaignEmailBounced))
}

func TestTheComplaintRateWarnsInItsBandThenPausesTheCampaignAtTheThreshold(t *testing.T) {
	r := newRig(t)
	id, emails := r.rateCampaign(t, "0.05", "0.1")
	complain := func(email string) {
		r.report(t, r.corpus(t, "arf_abuse.eml", id, email, "henry@example.net", email))
	}
	complain(emails[0])
	warnings := r.eventData(t, events.CampaignDeliverabilityWarning)
	require.Len(t, warnings, 1)
	require.Equal(t, "complaint_rate", warnings[0]["metric"])
	require.Equal(t, float64(1), warnings[0]["complained"])
	require.Equal(t, "active", r.status(t, id))
	require.Equal(t, engine.ReasonComplained, r.lead(t, id, emails[0]).WaitReason)

	complain(emails[1])
	require.Equal(t, "paused", r.status(t, id))
	require.Equal(t, "its complaint rate reached 10.0% of its last 20 sends (threshold 10.0%)", r.pausedReason(t, id))
	require.Equal(t, 1, r.campaignEvents(t, id, events.CampaignPaused))
	require.Equal(t, 2, r.eventCount(t, events.DeliverabilityComplaint))
	require.Equal(t, 2, r.notified(t, "health_complaint"))
	require.Zero(t, r.eventCount(t, events.CampaignEmailBounced), "a complaint is not a bounce")
}

func TestAnIngestedEventIsMatchedByWhatItNamesAndRecordedOnce(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net", "b@example.net")
	r.run(t)
	r.work(t)
	rec := deliverability.New(r.eng, r.now)
	outbox := events.NewOutbox(r.jobs)
	ingest := func(h deliverability.Hint, key string) (out deliverability.Outcome, err error) {
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			var m deliverability.Match
			if m, err = deliverability.MatchRecipient(ctx, tx, r.org, h); err == nil {
				out, err = rec.Record(ctx, tx, outbox, m, deliverability.Event{OrganizationID: r.org, Kind: deliverability.KindComplaint,
					Source: deliverability.SourceIngest, Recipient: h.Email, Provider: "ses", Reason: "abuse", FeedbackType: "abuse",
					IdempotencyKey: key})
			}
			return nil
		})
		return out, err
	}
	refused := func(err error, status int, code string) {
		var ae *apierror.Error
		require.True(t, errors.As(err, &ae), "%v", err)
		require.Equal(t, status, ae.Status)
		require.Equal(t, code, ae.Code)
	}
	campaignID := uuid.NullUUID{UUID: id, Valid: true}

	out, err := ingest(deliverability.Hint{Email: "A@Example.net", CampaignID: campaignID}, "provider-1")
	require.NoError(t, err)
	require.True(t, out.Applied)
	require.True(t, out.Suppressed)
	aTask := r.taskIDs(t, id, "sent")[0]
	require.Equal(t, []recorded{{Kind: "complaint", Source: "ingest", Reason: "abuse", Provider: "ses", MatchedBy: "ingest",
		Feedback: "abuse", Task: &aTask}}, r.recorded(t, "a@example.net"))
	require.Equal(t, engine.ReasonComplained, r.lead(t, id, "a@example.net").WaitReason)

	out, err = ingest(deliverability.Hint{Email: "a@example.net", CampaignID: campaignID}, "provider-1")
	require.NoError(t, err)
	require.True(t, out.Duplicate, "the same key records nothing")
	out, err = ingest(deliverability.Hint{Email: "a@example.net", TaskID: uuid.NullUUID{UUID: aTask, Valid: true}}, "")
	require.NoError(t, err)
	require.False(t, out.Duplicate)
	require.False(t, out.Applied, "a second complaint about one send is evidence only")
	require.Len(t, r.recorded(t, "a@example.net"), 2)
	require.Equal(t, 1, r.eventCount(t, events.DeliverabilityComplaint))
	require.Equal(t, 1, r.notified(t, "health_complaint"))

	out, err = ingest(deliverability.Hint{Email: "stranger@example.org"}, "")
	require.NoError(t, err)
	require.True(t, out.Applied)
	require.Equal(t, "complaint", r.suppressed(t, "stranger@example.org"), "an address alone is still suppressed")
	require.Equal(t, 2, r.eventCount(t, events.DeliverabilityComplaint))

	_, err = ingest(deliverability.Hint{Email: "a@example.net", TaskID: uuid.NullUUID{UUID: uuid.New(), Valid: true}}, "")
	refused(err, 404, "task_not_found")
	_, err = ingest(deliverability.Hint{Email: "b@example.net", TaskID: uuid.NullUUID{UUID: aTask, Valid: true}}, "")
	refused(err, 400, "task_recipient_mismatch")
	bContact := uuid.NullUUID{UUID: r.contactID(t, "b@example.net"), Valid: true}
	_, err = ingest(deliverability.Hint{Email: "a@example.net", ContactID: bContact}, "")
	refused(err, 400, "contact_recipient_mismatch")
	_, err = ingest(deliverability.Hint{Email: "a@example.net", CampaignID: uuid.NullUUID{UUID: uuid.New(), Valid: true}}, "")
	refused(err, 404, "campaign_not_found")
	_, err = ingest(deliverability.Hint{Email: "not an address"}, "")
	refused(err, 400, "invalid_recipient_email")
	require.Equal(t, "active", r.lead(t, id, "b@example.net").State, "nothing refused moved a lead")

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends, "b's follow-up; a completed when it complained")
	queued := r.taskIDs(t, id, "queued")
	require.Len(t, queued, 1)
	_, err = ingest(deliverability.Hint{Email: "b@example.net", TaskID: uuid.NullUUID{UUID: queued[0], Valid: true}}, "")
	refused(err, 400, "task_not_sent")
}
