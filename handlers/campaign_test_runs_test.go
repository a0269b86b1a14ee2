package handlers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/testrun"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
)

// runWait makes each wait of a test run last d.
func runWait(d time.Duration) apitest.Option {
	return func(c *config.Config) { c.TestRunWait = d }
}

// waitStep is a wait step of minutes.
func waitStep(minutes string) api.CampaignStepCreate {
	return api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindWait),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"wait_minutes": jx.Raw(minutes)})}
}

// runSequence is an opener, a thread reply three days later, a 90-minute wait and a second thread reply.
func runSequence() []api.CampaignStepCreate {
	return []api.CampaignStepCreate{
		{Name: api.NewOptString("Opener"), Subject: api.NewOptString(openerSubject), BodyPlain: api.NewOptString(openerPlain)},
		{Name: api.NewOptString("Bump"), BodyPlain: api.NewOptString("Any thoughts, {{.FirstName}}?")},
		waitStep("90"),
		{Name: api.NewOptString("Last"), WaitAfter: api.NewOptInt(0), BodyPlain: api.NewOptString("Last note from {{.Sender.FirstName}}.")},
	}
}

func (r *sendRig) startRun(t *testing.T, req api.StartCampaignTest) *api.CampaignTestRun {
	t.Helper()
	run, err := r.c.CampaignsTest(context.Background(), &req, api.CampaignsTestParams{ID: r.camp.ID})
	require.NoError(t, err)
	return run
}

func (r *sendRig) getRun(t *testing.T, id uuid.UUID) *api.CampaignTestRun {
	t.Helper()
	run, err := r.c.CampaignsGetTestRun(context.Background(), api.CampaignsGetTestRunParams{ID: r.camp.ID, RunId: id})
	require.NoError(t, err)
	return run
}

// awaitRun reads a run until ok holds of it.
func (r *sendRig) awaitRun(t *testing.T, id uuid.UUID, ok func(*api.CampaignTestRun) bool) *api.CampaignTestRun {
	t.Helper()
	var run *api.CampaignTestRun
	deadline := time.Now().Add(2 * time.Minute)
	for run = r.getRun(t, id); !ok(run); run = r.getRun(t, id) {
		if time.Now().After(deadline) {
			raw, _ := run.MarshalJSON()
			t.Fatalf("the run never got there: %s", raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return run
}

func TestTestRunSendsTheSequenceInOrderWithThreadingAndCompletes(t *testing.T) {
	t.Parallel()
	// The API writes times to the second, so a wait of a whole second is what the times can show for sure: two
	// instants a second or more apart never land in the same second.
	wait := time.Second
	r := newSendRig(t, runSequence(), runWait(wait))
	r.env.StartWorkers(t)

	run := r.startRun(t, api.StartCampaignTest{ProspectEmail: api.NewOptString("QA@example.net"), ContactID: api.NewOptUUID(r.contact.ID)})
	require.Equal(t, api.CampaignTestRunStateRunning, run.State)
	require.Equal(t, "qa@example.net", run.ProspectEmail, "mail goes to the prospect address")
	require.Equal(t, r.contact.ID, run.ContactID, "and is personalised for the contact")
	require.Equal(t, r.box.ID, run.EmailAccountID.Value, "from the campaign's first sender")
	require.Equal(t, 4, run.StepCount.Value)
	require.Len(t, run.Steps, 4)
	require.Equal(t, []string{"email", "email", "wait", "email"}, []string{run.Steps[0].Kind, run.Steps[1].Kind, run.Steps[2].Kind, run.Steps[3].Kind})

	run = r.awaitRun(t, run.ID, func(run *api.CampaignTestRun) bool { return run.State != api.CampaignTestRunStateRunning })
	require.Equal(t, api.CampaignTestRunStateCompleted, run.State, "%+v", run.Error)
	require.True(t, run.CompletedAt.Set)
	var outcomes []string
	for _, s := range run.Steps {
		require.Equal(t, api.CampaignTestStepStateCompleted, s.State, s.Detail.Value)
		outcomes = append(outcomes, s.Outcome.Value)
	}
	require.Equal(t, []string{"sent", "sent", "waited", "sent"}, outcomes)
	// The follow-up waited its compressed three days, and the wait step its compressed 90 minutes.
	require.GreaterOrEqual(t, run.Steps[1].StartedAt.Value.Sub(run.Steps[0].StartedAt.Value), wait)
	require.GreaterOrEqual(t, run.Steps[2].CompletedAt.Value.Sub(run.Steps[2].StartedAt.Value), wait)

	require.Equal(t, 3, r.smtp.Count())
	var got []received
	for _, m := range r.smtp.Messages() {
		got = append(got, parseReceived(t, m))
	}
	subjects := make([]string, 3)
	for i, m := range got {
		require.Equal(t, "qa@example.net", m.to)
		require.Equal(t, strings.Trim(run.Steps[[]int{0, 1, 3}[i]].MessageID.Value, "<>"), m.msgID, "message %d is step %d's", i, i)
		subjects[i], _ = m.header.Subject()
	}
	require.True(t, strings.HasSuffix(subjects[0], " Charles"), subjects[0])
	require.Equal(t, []string{subjects[0], "Re: " + subjects[0], "Re: " + subjects[0]}, subjects)
	require.Equal(t, "Any thoughts, Charles?", strings.TrimSpace(got[1].plain))
	require.Equal(t, "Last note from Ada.", strings.TrimSpace(got[2].plain))

	inReplyTo := func(m received) []string {
		ids, err := m.header.MsgIDList("In-Reply-To")
		require.NoError(t, err)
		return ids
	}
	references := func(m received) []string {
		ids, err := m.header.MsgIDList("References")
		require.NoError(t, err)
		return ids
	}
	require.Empty(t, inReplyTo(got[0]))
	require.Equal(t, []string{got[0].msgID}, inReplyTo(got[1]))
	require.Equal(t, []string{got[0].msgID}, references(got[1]))
	require.Equal(t, []string{got[1].msgID}, inReplyTo(got[2]))
	require.Equal(t, []string{got[0].msgID, got[1].msgID}, references(got[2]))
	require.Zero(t, orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks WHERE campaign_id IS NOT NULL OR contact_id IS NOT NULL"),
		"test messages are tied to no campaign or contact")
}

func TestTestRunFailsOnAnUnresolvedVariableAndSendsNothing(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil, runWait(100*time.Millisecond))
	r.env.StartWorkers(t)
	run := r.startRun(t, api.StartCampaignTest{ProspectEmail: api.NewOptString("nobody@example.net")})
	require.Equal(t, uuid.Nil, run.ContactID, "no contact has the address: it personalises alone")

	run = r.awaitRun(t, run.ID, func(run *api.CampaignTestRun) bool { return run.State != api.CampaignTestRunStateRunning })
	require.Equal(t, api.CampaignTestRunStateFailed, run.State)
	require.Equal(t, "unresolved_variables", run.Error.Value.Code)
	require.Contains(t, run.Error.Value.Message, "FirstName")
	require.NotEmpty(t, run.Error.Value.Fix.Value)
	require.Equal(t, api.CampaignTestStepStateFailed, run.Steps[0].State)
	require.Equal(t, "unresolved_variables", run.Steps[0].Error.Value.Code)
	require.Equal(t, api.CampaignTestStepStateWaiting, run.Steps[1].State, "nothing after the failed step runs")
	require.Equal(t, run.Steps[0].StepID, run.CurrentStepID.Value)
	require.Zero(t, orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks"))
	require.Zero(t, r.smtp.Count())
}

// pendingSteps counts the test-run step jobs not finished yet.
func pendingSteps(t *testing.T, workers *river.Client[pgx.Tx]) int {
	t.Helper()
	res, err := workers.JobList(context.Background(), river.NewJobListParams().Kinds("campaign_test_step").
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStatePending))
	require.NoError(t, err)
	return len(res.Jobs)
}

func TestTestRunCancelStopsFurtherSends(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil, runWait(2*time.Second))
	// An hour's gap keeps the second message queued behind the first.
	_, err := r.c.MailboxesUpdate(context.Background(), &api.MailboxUpdate{MinWaitTime: api.NewOptInt(3600)}, api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)
	workers := r.env.StartWorkers(t)
	run := r.startRun(t, api.StartCampaignTest{ContactID: api.NewOptUUID(r.contact.ID)})
	require.Equal(t, "charles@example.org", run.ProspectEmail, "the contact's address by default")

	run = r.awaitRun(t, run.ID, func(run *api.CampaignTestRun) bool {
		return run.Steps[1].State == api.CampaignTestStepStateRunning && run.Steps[1].TaskID.Set
	})
	require.Equal(t, api.CampaignTestStepStateCompleted, run.Steps[0].State)
	require.Equal(t, 1, r.smtp.Count())

	cancelled, err := r.c.CampaignsCancelTestRun(context.Background(), api.CampaignsCancelTestRunParams{ID: r.camp.ID, RunId: run.ID})
	require.NoError(t, err)
	require.Equal(t, api.CampaignTestRunStateCancelled, cancelled.State)
	require.Equal(t, api.CampaignTestStepStateCompleted, cancelled.Steps[0].State)
	require.Equal(t, api.CampaignTestStepStateSkipped, cancelled.Steps[1].State)
	require.Equal(t, "cancelled", cancelled.Steps[1].Outcome.Value)
	require.Equal(t, api.CampaignTestStepStateSkipped, cancelled.Steps[2].State)
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'canceled'",
		run.Steps[1].TaskID.Value), "the queued message is cancelled")
	_, err = r.c.CampaignsCancelTestRun(context.Background(), api.CampaignsCancelTestRunParams{ID: r.camp.ID, RunId: run.ID})
	requireAPIError(t, err, 400, "test_run_finished")

	// The next step's job was already scheduled: it runs, finds the run cancelled and sends nothing.
	require.Eventually(t, func() bool { return pendingSteps(t, workers) == 0 }, time.Minute, 100*time.Millisecond)
	require.Equal(t, int64(3), orgInt(t, r.env, r.org, "SELECT count(*) FROM river_job WHERE kind = 'campaign_test_step'"),
		"the jobs of steps 1 and 2 and the one scheduled for step 3 all ran")
	require.Equal(t, 1, r.smtp.Count())
	require.Equal(t, int64(2), orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks"))
	after := r.getRun(t, run.ID)
	require.Equal(t, api.CampaignTestRunStateCancelled, after.State)
	require.Equal(t, api.CampaignTestStepStateSkipped, after.Steps[2].State)
	require.False(t, after.Steps[2].TaskID.Set)
}

func TestTestRunStartChecksTheCampaignTheProspectAndTheCaller(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil)
	ctx := context.Background()
	start := func(c *api.Client, campaign uuid.UUID, req api.StartCampaignTest) error {
		_, err := c.CampaignsTest(ctx, &req, api.CampaignsTestParams{ID: campaign})
		return err
	}
	prospect := api.StartCampaignTest{ProspectEmail: api.NewOptString("qa@example.net")}

	waitsOnly := campCreate(t, r.c, api.CampaignCreate{Name: "Waits", Steps: []api.CampaignStepCreate{waitStep("10")}})
	requireAPIError(t, start(r.c, waitsOnly.ID, prospect), 400, "campaign_invalid")
	conn := appConnectionRow(t, r.env, r.org, "CRM")
	agentStep := campCreate(t, r.c, api.CampaignCreate{Name: "Agent", Steps: []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hi"), BodyPlain: api.NewOptString("Hello")},
		{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction), Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{
			"type": jx.Raw(`"app_action"`), "app_connection_id": jx.Raw(`"` + conn.String() + `"`), "path": jx.Raw(`"/lookup"`),
			"output_key": jx.Raw(`"crm"`)})}}})
	err := start(r.c, agentStep.ID, prospect)
	requireAPIError(t, err, 400, "campaign_invalid")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "step 2 (app_action)", "a test run never calls the real app")
	eventWait := campCreate(t, r.c, api.CampaignCreate{Name: "Event", Steps: []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hi"), BodyPlain: api.NewOptString("Hello")},
		{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction), Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{
			"type": jx.Raw(`"wait_for_event"`), "wait_event_name": jx.Raw(`"demo.booked"`), "timeout_minutes": jx.Raw("60")})}}})
	waiting, err := r.c.CampaignsTest(ctx, &prospect, api.CampaignsTestParams{ID: eventWait.ID})
	require.NoError(t, err, "a wait_for_event step runs as a compressed wait")
	require.Equal(t, "wait_for_event", waiting.Steps[1].Kind)
	noSender := campCreate(t, r.c, api.CampaignCreate{Name: "Nobody sends", SenderStrategy: api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit),
		Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("Hi"), BodyPlain: api.NewOptString("Hello")}}})
	requireAPIError(t, start(r.c, noSender.ID, prospect), 400, "campaign_invalid")

	requireAPIError(t, start(r.c, r.camp.ID, api.StartCampaignTest{}), 400, "prospect_required")
	requireAPIError(t, start(r.c, r.camp.ID, api.StartCampaignTest{ContactID: api.NewOptUUID(uuid.New())}), 404, "contact_not_found")
	requireAPIError(t, start(r.c, r.camp.ID, api.StartCampaignTest{ProspectEmail: prospect.ProspectEmail, MailboxID: api.NewOptUUID(uuid.New())}), 400, "invalid_mailbox_id")
	requireAPIError(t, start(r.c, uuid.New(), prospect), 404, "campaign_not_found")

	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	requireAPIError(t, start(reader, r.camp.ID, prospect), 403, "missing_scope")
	require.Zero(t, orgInt(t, r.env, r.org, "SELECT count(*) FROM campaign_test_runs WHERE campaign_id <> $1", eventWait.ID),
		"nothing refused was started")

	// No workers run here: the runs stay running, newest first in the list.
	var ids []uuid.UUID
	for range 3 {
		ids = append([]uuid.UUID{r.startRun(t, prospect).ID}, ids...)
	}
	page, err := reader.CampaignsListTestRuns(ctx, api.CampaignsListTestRunsParams{ID: r.camp.ID, Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{ids[0], ids[1]}, []uuid.UUID{page.Data[0].ID, page.Data[1].ID})
	require.True(t, page.Pagination.Value.HasMore.Value)
	cursor := uuid.MustParse(page.Pagination.Value.NextCursor.Value)
	page, err = reader.CampaignsListTestRuns(ctx, api.CampaignsListTestRunsParams{ID: r.camp.ID, Limit: api.NewOptInt(2), Cursor: api.NewOptUUID(cursor)})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	require.Equal(t, ids[2], page.Data[0].ID)
	require.False(t, page.Pagination.Value.HasMore.Value)
	_, err = reader.CampaignsListTestRuns(ctx, api.CampaignsListTestRunsParams{ID: r.camp.ID, Limit: api.NewOptInt(101)})
	require.Error(t, err, "the SDK refuses a limit past 100")

	got, err := reader.CampaignsGetTestRun(ctx, api.CampaignsGetTestRunParams{ID: r.camp.ID, RunId: ids[0]})
	require.NoError(t, err)
	require.Equal(t, "qa@example.net", got.ProspectEmail)
	_, err = reader.CampaignsGetTestRun(ctx, api.CampaignsGetTestRunParams{ID: waitsOnly.ID, RunId: ids[0]})
	requireAPIError(t, err, 404, "test_run_not_found")
	_, err = reader.CampaignsCancelTestRun(ctx, api.CampaignsCancelTestRunParams{ID: r.camp.ID, RunId: ids[0]})
	requireAPIError(t, err, 403, "missing_scope")
	other := r.env.Client(t, r.env.Bootstrap(t, "other").APIKey)
	_, err = other.CampaignsGetTestRun(ctx, api.CampaignsGetTestRunParams{ID: r.camp.ID, RunId: ids[0]})
	requireAPIError(t, err, 404, "campaign_not_found")
}

func TestTestRunStepJobRunTwiceSendsTheStepOnce(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil, runWait(100*time.Millisecond))
	run := r.startRun(t, api.StartCampaignTest{ContactID: api.NewOptUUID(r.contact.ID)})
	// A retried job is the same job run again after its transaction committed: here two more copies of the
	// first step's job race the original.
	workers := r.env.StartWorkers(t)
	for range 2 {
		_, err := workers.Insert(context.Background(), testrun.Args{OrganizationID: r.org, RunID: run.ID, Position: 0}, nil)
		require.NoError(t, err)
	}
	run = r.awaitRun(t, run.ID, func(run *api.CampaignTestRun) bool { return run.State != api.CampaignTestRunStateRunning })
	require.Equal(t, api.CampaignTestRunStateCompleted, run.State, "%+v", run.Error)
	require.Eventually(t, func() bool { return pendingSteps(t, workers) == 0 }, time.Minute, 100*time.Millisecond)
	require.Equal(t, int64(3), orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks"))
	require.Equal(t, 3, r.smtp.Count())
}
