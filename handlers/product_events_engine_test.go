package handlers_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/mail"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

// engineRig is a mail rig whose campaigns run through the sequence engine and the send pipeline on the
// server's clock, held still: the test moves it and runs the engine and the queued sends step by step, as the
// workers would.
type engineRig struct {
	*mailRig
	clock time.Time
	eng   *engine.Engine
	pipe  *sending.Pipeline
	jobs  events.Inserter
}

func newEngineRig(t *testing.T) *engineRig {
	t.Helper()
	r := &engineRig{mailRig: newMailRig(t), clock: time.Now().Add(time.Minute).Truncate(time.Second)}
	r.env.Clock.Set(r.clock)
	req := r.connectReq(t, rigUser)
	req.MinWaitTime, req.CampaignLimit = api.NewOptInt(0), api.NewOptInt(500)
	_, err := r.c.MailboxesCreate(context.Background(), req, api.MailboxesCreateParams{})
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	r.jobs, err = jobs.NewClient(jobs.Deps{Pool: r.env.DB.Pool, Logger: logger}, jobs.Options{})
	require.NoError(t, err)
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	r.eng = engine.New(r.env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: r.now})
	r.pipe = sending.New(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}, logger, 72*time.Hour).WithClock(r.now)
	r.pipe.OnSettle(r.eng.Settle)
	return r
}

func (r *engineRig) now() time.Time { return r.clock }

// advance moves the clock the engine, the pipeline and the server read.
func (r *engineRig) advance(d time.Duration) {
	r.clock = r.clock.Add(d)
	r.env.Clock.Set(r.clock)
}

// settle runs the engine and every queued send due at the clock until nothing moves, and answers how many
// messages the SMTP server holds for each recipient.
func (r *engineRig) settle(t *testing.T) map[string]int {
	t.Helper()
	for range 6 {
		_, err := r.eng.RunDue(context.Background(), r.jobs)
		require.NoError(t, err)
		var tasks []sending.Args
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT id, mailbox_id FROM send_tasks WHERE status = 'queued' AND not_before <= $1 ORDER BY id`, r.clock)
			if err != nil {
				return err
			}
			tasks, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (sending.Args, error) {
				a := sending.Args{OrganizationID: r.org}
				return a, row.Scan(&a.TaskID, &a.MailboxID)
			})
			return err
		})
		for _, a := range tasks {
			_, err := r.pipe.Attempt(context.Background(), events.NewOutbox(r.jobs), a)
			require.NoError(t, err)
		}
	}
	out := map[string]int{}
	for _, m := range r.smtp.Messages() {
		for _, to := range m.To {
			out[to]++
		}
	}
	return out
}

func (r *engineRig) query(t *testing.T, f func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, f))
}

// waitStatus is the status of the contact's run of the campaign's wait_for_event step ("" when it has none).
func (r *engineRig) waitStatus(t *testing.T, campaign, contact uuid.UUID) string {
	t.Helper()
	var status string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT status FROM campaign_step_runs WHERE campaign_id = $1 AND contact_id = $2
			AND kind = 'wait_for_event'`, campaign, contact).Scan(&status)
		if err == pgx.ErrNoRows {
			return nil
		}
		return err
	})
	return status
}

func TestProductEventResumesAWaitingLeadWhoseNextEmailIsSent(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	ctx := context.Background()
	cmp, err := r.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Demo follow-up", Timezone: api.NewOptString("UTC"),
		Days: api.NewOptInt(127), StartTime: api.NewOptString("00:00"), EndTime: api.NewOptString("24:00"), DailyLimit: api.NewOptInt(1000),
		Steps: []api.CampaignStepCreate{
			{Subject: api.NewOptString("Book a demo, {{.FirstName}}"), BodyPlain: api.NewOptString("Pick a time.")},
			{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction), WaitAfter: api.NewOptInt(0),
				OnTimeout: api.NewOptCampaignStepCreateOnTimeout(api.CampaignStepCreateOnTimeoutStop),
				Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"type": jx.Raw(`"wait_for_event"`),
					"wait_event_name": jx.Raw(`"demo.booked"`), "timeout_minutes": jx.Raw("1440")})},
			{Subject: api.NewOptString("See you at the demo"), BodyPlain: api.NewOptString("Here is the agenda."), WaitAfter: api.NewOptInt(0)},
		}}, api.CampaignsCreateParams{})
	require.NoError(t, err)
	res, err := r.c.ContactsCreate(ctx, []api.ContactCreate{
		{Email: "ann@client.example", FirstName: api.NewOptString("Ann"), Campaigns: []uuid.UUID{cmp.ID}},
		{Email: "ben@client.example", FirstName: api.NewOptString("Ben"), Campaigns: []uuid.UUID{cmp.ID}},
		{Email: "cat@client.example", FirstName: api.NewOptString("Cat")},
	}, api.ContactsCreateParams{})
	require.NoError(t, err)
	leads := createdOK(t, res)
	ann, ben, cat := leads[0].ID, leads[1].ID, leads[2].ID
	_, err = r.env.Owner(t, "acme").CampaignsStart(ctx, api.CampaignsStartParams{ID: cmp.ID})
	require.NoError(t, err)

	require.Equal(t, map[string]int{"ann@client.example": 1, "ben@client.example": 1}, r.settle(t), "the first step went out")
	require.Equal(t, "waiting", r.waitStatus(t, cmp.ID, ann), "then each lead waits for the event")
	require.Equal(t, "waiting", r.waitStatus(t, cmp.ID, ben))

	publish := func(key, name string, contact uuid.UUID) *api.ProductEventAccepted {
		t.Helper()
		res, err := r.c.ProductEventsCreate(ctx, &api.PublishProductEvent{Name: name, ContactID: api.NewOptUUID(contact)},
			api.ProductEventsCreateParams{IdempotencyKey: key})
		require.NoError(t, err)
		return res
	}
	r.advance(time.Hour)
	require.Zero(t, publish("cancelled", "demo.cancelled", ann).MatchedWaits, "another name resumes nothing")
	require.Zero(t, publish("cat", "demo.booked", cat).MatchedWaits, "another contact's event resumes nothing")
	booked := publish("booked", "demo.booked", ann)
	require.Equal(t, 1, booked.MatchedWaits)
	require.Len(t, booked.MatchedRuns, 1)
	run := booked.MatchedRuns[0]
	require.Equal(t, cmp.ID, run.CampaignID.Value)
	require.Equal(t, ann, run.ContactID.Value)
	require.Equal(t, "resumed", run.State.Value)
	require.Equal(t, api.ProductEventAcceptedMatchedRunsItemModeLive, run.Mode.Value)
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM campaign_step_runs WHERE id = $1 AND campaign_id = $2
		AND step_id = $3 AND resumed_by_event = $4`, run.RunID.Value, cmp.ID, run.StepID.Value, booked.EventID), "matched_runs names the step run")
	require.Zero(t, publish("booked-again", "demo.booked", ann).MatchedWaits, "a second event resumes nothing twice")

	require.Equal(t, map[string]int{"ann@client.example": 2, "ben@client.example": 1}, r.settle(t),
		"the resumed lead's next email is sent; the other lead still waits")
	require.Equal(t, "resumed", r.waitStatus(t, cmp.ID, ann))
	require.Equal(t, "waiting", r.waitStatus(t, cmp.ID, ben))
	last, err := mail.ReadMessage(bytes.NewReader(r.smtp.Messages()[2].Data))
	require.NoError(t, err)
	require.Equal(t, "See you at the demo", last.Header.Get("Subject"))
}
