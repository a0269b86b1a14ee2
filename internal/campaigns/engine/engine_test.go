package engine_test

import (
	"bytes"
	"context"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

func twoSteps() []api.CampaignStepCreate {
	return []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("Hi {{.FirstName}}, a first note.")},
		{BodyPlain: api.NewOptString("Following up."), WaitAfter: api.NewOptInt(1)},
	}
}

func header(t *testing.T, raw []byte, name string) string {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	return m.Header.Get(name)
}

func TestAnActiveCampaignSendsEveryStepToEveryLeadOnceAndCompletes(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net", "b@example.net", "c@example.net")

	st := r.run(t)
	require.Equal(t, 3, st.Sends)
	require.Equal(t, 3, r.work(t))
	require.Len(t, r.smtp.Messages(), 3)
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, "active", l.State)
	require.Equal(t, 1, l.Position)
	require.Equal(t, 1, l.Sent)
	require.Nil(t, l.Task)
	require.Equal(t, engine.ReasonFollowUp, l.WaitReason)
	require.Equal(t, 3, r.eventCount(t, events.CampaignEmailSent))

	// Nothing is due again until the follow-up's day.
	require.Zero(t, r.run(t).Sends)
	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 3, r.run(t).Sends)
	require.Equal(t, 3, r.work(t))
	msgs := r.smtp.Messages()
	require.Len(t, msgs, 6)
	first, follow := header(t, msgs[0].Data, "Message-Id"), msgs[3].Data
	require.Equal(t, "Re: Hello Lead", header(t, follow, "Subject"))
	require.NotEmpty(t, header(t, follow, "In-Reply-To"))
	require.Contains(t, []string{header(t, msgs[3].Data, "In-Reply-To"), header(t, msgs[4].Data, "In-Reply-To"),
		header(t, msgs[5].Data, "In-Reply-To")}, first, "a follow-up answers its own lead's first message")

	l = r.lead(t, id, "a@example.net")
	require.Equal(t, "completed", l.State)
	require.Equal(t, 2, l.Sent)
	got, err := r.c.CampaignsGet(t.Context(), api.CampaignsGetParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, "completed", string(got.Status))
	require.Equal(t, 1, r.eventCount(t, events.CampaignCompleted))
	require.Zero(t, r.run(t).Sends, "a completed campaign sends nothing more")
}

func TestARecipientTheServerRejectsIsABounceAndIsNotRetried(t *testing.T) {
	r := newRig(t)
	r.smtp.OnRcpt(func(to string) error {
		if strings.HasPrefix(to, "gone@") {
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
		}
		return nil
	})
	id := r.campaign(t, twoSteps(), "gone@example.net", "here@example.net")
	require.Equal(t, 2, r.run(t).Sends)
	r.work(t)
	l := r.lead(t, id, "gone@example.net")
	require.Equal(t, "failed", l.State)
	require.Equal(t, 1, l.Bounced)
	require.Nil(t, l.Due)
	require.Contains(t, l.Failure, "No such user")
	require.Equal(t, 1, r.eventCount(t, events.CampaignEmailBounced))
	r.advance(48 * time.Hour)
	require.Equal(t, 1, r.run(t).Sends, "only the lead that was not rejected gets its follow-up")
}

func TestAFailedSendUndoesTheStepAndTheLeadFailsAfterFiveAttempts(t *testing.T) {
	r := newRig(t)
	r.smtp.OnRcpt(func(to string) error {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	})
	id := r.campaign(t, twoSteps(), "x@example.net")
	for attempt := 1; attempt <= 5; attempt++ {
		require.Equal(t, 1, r.run(t).Sends, "lead attempt %d", attempt)
		for range 5 { // the pipeline's own five tries of one send, each after its backoff
			r.work(t)
			r.advance(20 * time.Minute)
		}
		l := r.lead(t, id, "x@example.net")
		require.Zero(t, l.Position, "the failed step is due again")
		require.Nil(t, l.Task)
		if attempt < 5 {
			require.Equal(t, engine.ReasonRetry, l.WaitReason)
			require.Equal(t, "pending", l.State)
		}
	}
	l := r.lead(t, id, "x@example.net")
	require.Equal(t, "failed", l.State)
	require.Contains(t, l.Failure, "after 5 attempts")
	require.Zero(t, r.run(t).Sends)
	var day struct{ sent, newLeads int }
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT sent, new_leads FROM campaign_send_days WHERE campaign_id = $1`, id).Scan(&day.sent, &day.newLeads)
	})
	require.Zero(t, day.sent, "every failed send gave its place in the day back")
	require.Zero(t, day.newLeads)
}

func TestPausingALeadWhoseStepIsQueuedCancelsTheSendAndResumeSendsItOnce(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "held@example.net")
	require.Equal(t, 1, r.run(t).Sends)
	var contact uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM contacts WHERE email = 'held@example.net'`).Scan(&contact)
	})
	_, err := r.c.CampaignsPauseLead(t.Context(), api.OptCampaignLeadPauseRequest{},
		api.CampaignsPauseLeadParams{ID: id, ContactId: contact})
	require.NoError(t, err)
	r.work(t)
	require.Empty(t, r.smtp.Messages(), "the queued send of a held lead is cancelled")
	l := r.lead(t, id, "held@example.net")
	require.Zero(t, l.Position)
	require.Nil(t, l.Task)
	require.Zero(t, r.run(t).Sends, "a held lead is not planned")

	_, err = r.c.CampaignsResumeLead(t.Context(), api.CampaignsResumeLeadParams{ID: id, ContactId: contact})
	require.NoError(t, err)
	r.advance(time.Minute)
	require.Equal(t, 1, r.run(t).Sends)
	r.work(t)
	require.Len(t, r.smtp.Messages(), 1, "the step goes out once after the resume")
}
