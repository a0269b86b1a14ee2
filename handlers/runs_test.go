package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// runRig is an API whose one mailbox sends to an in-process SMTP server, with the owner's session and the
// full-access key as clients.
type runRig struct {
	*mailRig
	box     *api.Mailbox
	session *api.Client
}

// prospects is the domain the rig's leads live at.
const prospects = "prospects.test"

func newRunRig(t *testing.T) *runRig {
	t.Helper()
	r := &runRig{mailRig: newMailRig(t)}
	req := r.connectReq(t, rigUser)
	req.MinWaitTime = api.NewOptInt(0)
	box, err := r.c.MailboxesCreate(context.Background(), req, api.MailboxesCreateParams{})
	require.NoError(t, err)
	r.box = box
	r.session = r.env.Client(t, r.env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken)
	return r
}

// runBody is a one-email run to two prospects from the rig's mailbox, sending at any hour of any day.
func (r *runRig) runBody(intent api.CreateOutboundRunIntent) *api.CreateOutboundRun {
	return &api.CreateOutboundRun{
		Name:    api.NewOptString("Spring outreach"),
		Senders: api.RunSenderSelection{Mode: api.RunSenderSelectionModeExplicit, MailboxIds: []uuid.UUID{r.box.ID}},
		Leads: []api.RunLead{{Email: "ada@" + prospects, FirstName: api.NewOptString("Ada")},
			{Email: "Grace@" + prospects, FirstName: api.NewOptString("Grace"), Company: api.NewOptString("Navy")}},
		Steps: []api.RunStep{{Name: api.NewOptString("Opener"), Variants: []api.RunVariant{{Subject: "Hello {{.FirstName}}",
			BodyPlain: api.NewOptString("Hi {{.FirstName}}, a short note about compilers. Would a call next week help your team?")}}}},
		DailyLimit: 50,
		Schedule: api.CreateOutboundRunSchedule{Mode: api.CreateOutboundRunScheduleModeExplicit, Timezone: api.NewOptString("UTC"),
			Days: api.NewOptInt(127), StartTime: api.NewOptString("00:00"), EndTime: api.NewOptString("24:00")},
		StopOnReply: true, OptOutEnabled: true, Intent: intent,
	}
}

// verifiedProspects stores the run's two prospects as contacts whose addresses were verified elsewhere (an
// imported verdict), so the engine sends to them without first checking them.
func (r *runRig) verifiedProspects(t *testing.T) []api.Contact {
	t.Helper()
	return createContacts(t, r.c, api.ContactCreate{Email: "ada@" + prospects, FirstName: api.NewOptString("Ada"),
		VerificationStatus: api.NewOptString("valid")},
		api.ContactCreate{Email: "grace@" + prospects, VerificationStatus: api.NewOptString("valid")})
}

// launchBody is runBody launching to the verified prospects: Ada by her contact id, Grace as an inline lead
// (her contact is enriched with the lead's fields).
func (r *runRig) launchBody(t *testing.T) *api.CreateOutboundRun {
	t.Helper()
	ada := r.verifiedProspects(t)[0]
	b := r.runBody(api.CreateOutboundRunIntentLaunch)
	b.ContactIds, b.Leads = []uuid.UUID{ada.ID}, b.Leads[1:]
	return b
}

// notToday is the schedule days mask of every weekday but today's (UTC): a campaign on it is active and sends
// nothing today.
func notToday() int {
	bit := (int(time.Now().UTC().Weekday()) + 6) % 7 // bit 0 = Monday
	return 127 &^ (1 << bit)
}

func createRun(t *testing.T, c *api.Client, body *api.CreateOutboundRun) *api.OutboundRun {
	t.Helper()
	run, err := c.RunsCreate(context.Background(), body, api.RunsCreateParams{IdempotencyKey: uuid.NewString()})
	require.NoError(t, err)
	require.Equal(t, api.RunStateQueued, run.State)
	return run
}

// awaitRun reads a run until ok holds of it (or fails after a minute).
func awaitRun(t *testing.T, c *api.Client, id uuid.UUID, ok func(*api.OutboundRunDetail) bool) *api.OutboundRunDetail {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		run, err := c.RunsGet(context.Background(), api.RunsGetParams{ID: id})
		require.NoError(t, err)
		if ok(run) {
			return run
		}
		if time.Now().After(deadline) {
			raw, _ := run.MarshalJSON()
			t.Fatalf("the run never got there: %s", raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func inState(states ...api.RunState) func(*api.OutboundRunDetail) bool {
	return func(r *api.OutboundRunDetail) bool {
		for _, s := range states {
			if r.State == s {
				return true
			}
		}
		return false
	}
}

// story is the states a run's events left it in, oldest first.
func story(run *api.OutboundRunDetail) []api.RunState {
	out := make([]api.RunState, len(run.Events))
	for i, e := range run.Events {
		out[i] = e.State.Value
	}
	return out
}

// reportField decodes one field of a run's preflight report.
func reportField[T any](t *testing.T, run *api.OutboundRunDetail, name string) T {
	t.Helper()
	require.True(t, run.PreflightReport.Set, "the run has a preflight report")
	raw, ok := run.PreflightReport.Value[name]
	require.True(t, ok, "the report has %s", name)
	var v T
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

// orgCount counts rows of a tenant table of org (as the application role, so row-level security applies).
func orgCount(t *testing.T, env *apitest.Env, org uuid.UUID, table string) int {
	t.Helper()
	var n int
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	}))
	return n
}

func TestRunCreateNeedsAnIdempotencyKeyValidatesTheBodyAndReplays(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	ctx := context.Background()
	body := r.runBody(api.CreateOutboundRunIntentDraft)
	raw, err := body.MarshalJSON()
	require.NoError(t, err)

	// Without the header, or with an empty one: 400 idempotency_key_required in the house envelope.
	for _, h := range []http.Header{{"Content-Type": {"application/json"}},
		{"Content-Type": {"application/json"}, "Idempotency-Key": {""}}} {
		res := r.env.Do(t, http.MethodPost, "/v1/runs", r.key, strings.NewReader(string(raw)), h)
		out, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode, string(out))
		var env api.Error
		require.NoError(t, env.UnmarshalJSON(out))
		require.Equal(t, "idempotency_key_required", env.Code)
		require.Contains(t, env.Message, "Idempotency-Key")
		require.NotEmpty(t, env.RequestID)
	}
	require.Zero(t, orgCount(t, r.env, r.org, "runs"))

	// The same key answers the same run; another key is another run.
	first, err := r.c.RunsCreate(ctx, body, api.RunsCreateParams{IdempotencyKey: "run-1"})
	require.NoError(t, err)
	again, err := r.c.RunsCreate(ctx, body, api.RunsCreateParams{IdempotencyKey: "run-1"})
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	other, err := r.c.RunsCreate(ctx, body, api.RunsCreateParams{IdempotencyKey: "run-2"})
	require.NoError(t, err)
	require.NotEqual(t, first.ID, other.ID)
	require.Equal(t, 2, orgCount(t, r.env, r.org, "runs"))
	require.Equal(t, "Spring outreach", first.Input.Name.Value, "the input is the request as accepted")
	require.Equal(t, api.RunSenderSelectionModeExplicit, first.Input.Senders.Mode)
	list, err := r.c.RunsList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	require.Equal(t, other.ID, list.Data[0].ID, "newest first")

	// Every broken rule of the body is a 400 naming its field, before anything is stored.
	broken := []struct {
		code, field string
		edit        func(b *api.CreateOutboundRun)
	}{
		{"invalid_senders", "senders.mailbox_ids", func(b *api.CreateOutboundRun) { b.Senders.MailboxIds = nil }},
		{"invalid_senders", "senders", func(b *api.CreateOutboundRun) { b.Senders.Mode = api.RunSenderSelectionModeAuto }},
		{"invalid_senders", "senders.mailbox_ids[0]", func(b *api.CreateOutboundRun) { b.Senders.MailboxIds = []uuid.UUID{uuid.New()} }},
		{"invalid_leads", "leads[1].custom_fields", func(b *api.CreateOutboundRun) {
			b.Leads[1].CustomFields = api.NewOptRunLeadCustomFields(api.RunLeadCustomFields{"no/slash": "x"})
		}},
		{"invalid_leads", "leads", func(b *api.CreateOutboundRun) {
			b.Leads = make([]api.RunLead, 1001)
			for i := range b.Leads {
				b.Leads[i].Email = fmt.Sprintf("p%d@%s", i, prospects)
			}
		}},
		{"invalid_leads", "leads", func(b *api.CreateOutboundRun) { b.Leads = nil }},
		{"invalid_steps", "steps", func(b *api.CreateOutboundRun) { b.Steps = nil }},
		{"invalid_steps", "steps", func(b *api.CreateOutboundRun) {
			b.Steps = make([]api.RunStep, 51)
			for i := range b.Steps {
				b.Steps[i] = r.runBody(api.CreateOutboundRunIntentDraft).Steps[0]
			}
		}},
		{"invalid_steps", "steps[0].wait", func(b *api.CreateOutboundRun) {
			b.Steps[0] = api.RunStep{Type: api.NewOptRunStepType(api.RunStepTypeWait)}
		}},
		{"invalid_step", "name", func(b *api.CreateOutboundRun) { b.Steps[0].Name = api.NewOptString(strings.Repeat("n", 256)) }},
		{"invalid_daily_limit", "daily_limit", func(b *api.CreateOutboundRun) { b.DailyLimit = 100001 }},
		{"invalid_start_time", "start_time", func(b *api.CreateOutboundRun) { b.Schedule.StartTime = api.NewOptString("9am") }},
		{"invalid_schedule", "start_time", func(b *api.CreateOutboundRun) { b.Schedule.EndTime = api.OptString{} }},
		{"invalid_timezone", "timezone", func(b *api.CreateOutboundRun) { b.Schedule.Timezone = api.NewOptString("Mars/Olympus") }},
		{"invalid_contact_ids", "contact_ids[0]", func(b *api.CreateOutboundRun) { b.ContactIds = []uuid.UUID{uuid.New()} }},
		{"invalid_campaign_id", "campaign_id", func(b *api.CreateOutboundRun) {
			b.CampaignID, b.Steps = api.NewOptUUID(uuid.New()), nil
		}},
	}
	for _, c := range broken {
		b := r.runBody(api.CreateOutboundRunIntentDraft)
		c.edit(b)
		_, err := r.c.RunsCreate(ctx, b, api.RunsCreateParams{IdempotencyKey: uuid.NewString()})
		requireAPIError(t, err, 400, c.code)
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.Contains(t, se.Response.Message, c.field, c.code)
	}
	// A NUL byte anywhere in the body is refused by name before the run is read.
	nul := strings.Replace(string(raw), "Spring outreach", `Spring\u0000outreach`, 1)
	res := r.env.Do(t, http.MethodPost, "/v1/runs", r.key, strings.NewReader(nul),
		http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {"nul"}})
	_ = res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, 2, orgCount(t, r.env, r.org, "runs"), "no refused body stored a run")

	// A launch by a key needs EXECUTE_RUNS besides WRITE_RUNS; a draft does not.
	writer := r.env.Client(t, scopedKey(t, r.env, r.org, auth.WriteRuns|auth.ReadRuns))
	_, err = writer.RunsCreate(ctx, r.runBody(api.CreateOutboundRunIntentLaunch), api.RunsCreateParams{IdempotencyKey: "launch"})
	requireAPIError(t, err, 403, "missing_scope")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "EXECUTE_RUNS")
	_, err = writer.RunsCreate(ctx, r.runBody(api.CreateOutboundRunIntentDraft), api.RunsCreateParams{IdempotencyKey: "draft"})
	require.NoError(t, err)
}

func TestRunDraftAnswersThePlanAndChangesNothing(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	ctx := context.Background()
	r.env.StartWorkers(t)
	_, err := r.c.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries("ada@" + prospects)})
	require.NoError(t, err)
	contacts, campaigns := orgCount(t, r.env, r.org, "contacts"), orgCount(t, r.env, r.org, "campaigns")

	run := createRun(t, r.c, r.runBody(api.CreateOutboundRunIntentDraft))
	done := awaitRun(t, r.c, run.ID, inState(api.RunStateCompleted, api.RunStateFailed))
	require.Equal(t, api.RunStateCompleted, done.State, "%+v", done.ErrorDetails)
	require.Equal(t, []api.RunState{api.RunStateQueued, api.RunStatePreflighting, api.RunStateCompleted}, story(done))
	require.Equal(t, "plan.ready", done.Events[2].Type)

	// The plan: one of the two leads is suppressed, the mailbox sends 50 a day and the first send leaves now.
	require.Equal(t, 1, reportField[int](t, done, "recipients"))
	aud := reportField[map[string]int](t, done, "audience")
	require.Equal(t, 2, aud["leads"])
	require.Equal(t, 1, aud["suppressed"])
	require.Equal(t, 50, reportField[int](t, done, "daily_capacity"))
	boxes := reportField[[]map[string]any](t, done, "mailboxes")
	require.Len(t, boxes, 1)
	require.Equal(t, r.box.ID.String(), boxes[0]["id"])
	first := reportField[time.Time](t, done, "first_send_at")
	require.WithinDuration(t, time.Now(), first, time.Minute)
	require.True(t, reportField[map[string]any](t, done, "preflight")["passed"].(bool))
	require.Equal(t, []uuid.UUID{r.box.ID}, done.FrozenSenderIds)
	require.Equal(t, 1, done.RecipientCount.Value)
	require.False(t, done.CampaignID.Set, "a draft has no campaign")

	// Nothing of it stays: no campaign, no contact, no lead, no policy usage.
	require.Equal(t, campaigns, orgCount(t, r.env, r.org, "campaigns"))
	require.Equal(t, contacts, orgCount(t, r.env, r.org, "contacts"))
	require.Zero(t, orgCount(t, r.env, r.org, "campaign_leads"))
	require.Zero(t, orgCount(t, r.env, r.org, "agent_policy_usage"))
	require.Zero(t, r.smtp.Count())
}

func TestRunDraftOfAnExistingCampaignPlansItWithTheRunsSettingsAndChangesNothing(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	r.env.StartWorkers(t)
	camp := campCreate(t, r.c, api.CampaignCreate{Name: "Existing", Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("Hi {{.FirstName}}"),
		BodyPlain: api.NewOptString("Hi {{.FirstName}}, a short note about compilers. Would a call next week help your team?")}}})
	ada := r.verifiedProspects(t)[0]
	body := r.runBody(api.CreateOutboundRunIntentDraft)
	body.CampaignID, body.Name, body.Steps, body.Leads, body.ContactIds = api.NewOptUUID(camp.ID), api.OptString{}, nil, nil, []uuid.UUID{ada.ID}
	body.DailyLimit, body.OptOutEnabled = 7, false

	done := awaitRun(t, r.c, createRun(t, r.c, body).ID, inState(api.RunStateCompleted, api.RunStateFailed))
	require.Equal(t, api.RunStateCompleted, done.State, "%+v", done.ErrorDetails)
	require.Equal(t, "Existing", reportField[string](t, done, "campaign_name"))
	require.Equal(t, 1, reportField[int](t, done, "recipients"))
	require.Equal(t, 7, reportField[int](t, done, "daily_limit"), "planned with the run's settings")
	require.Equal(t, 7, reportField[int](t, done, "daily_capacity"))

	after := campGet(t, r.c, camp.ID)
	require.Equal(t, camp.DailyLimit, after.DailyLimit)
	require.Equal(t, camp.UnsubscribeHeader, after.UnsubscribeHeader)
	require.Equal(t, camp.SenderStrategy, after.SenderStrategy)
	require.Equal(t, camp.Status, after.Status)
	require.Zero(t, orgCount(t, r.env, r.org, "campaign_leads"))
	require.Zero(t, orgCount(t, r.env, r.org, "campaign_mailboxes"))
}

func TestRunLaunchedByASessionSendsItsCampaignAndTellsTheStory(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	r.env.StartWorkers(t)

	run := createRun(t, r.session, r.launchBody(t))
	active := awaitRun(t, r.session, run.ID, inState(api.RunStateActive, api.RunStateFailed, api.RunStateCompleted))
	require.NotEqual(t, api.RunStateFailed, active.State, "%+v", active.ErrorDetails)
	require.Equal(t, []api.RunState{api.RunStateQueued, api.RunStatePreflighting, api.RunStateLaunching, api.RunStateActive},
		story(active)[:4])
	require.Equal(t, "launch.allowed", active.Events[2].Type)
	require.Contains(t, active.Events[2].Message.Value, "session")
	require.True(t, active.CampaignID.Set)
	require.Equal(t, true, jsonBool(t, active.PolicyDecision["human"]))

	// The campaign is a real one, started through the store: the engine sends it to both leads.
	camp, err := r.c.CampaignsGet(context.Background(), api.CampaignsGetParams{ID: active.CampaignID.Value})
	require.NoError(t, err)
	require.Equal(t, "Spring outreach", camp.Name)
	require.Eventually(t, func() bool { return r.smtp.Count() == 2 }, time.Minute, 100*time.Millisecond)
	var to []string
	for _, m := range r.smtp.Messages() {
		got := parseReceived(t, m)
		to = append(to, got.to)
		require.Contains(t, got.header.Get("Subject"), "Hello ")
	}
	require.ElementsMatch(t, []string{"ada@" + prospects, "grace@" + prospects}, to)
	require.Equal(t, 2, orgCount(t, r.env, r.org, "contacts"), "the inline lead is Grace's contact, enriched")
	var company string
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT company FROM contacts WHERE email = $1", "grace@"+prospects).Scan(&company)
	}))
	require.Equal(t, "Navy", company)

	// Once every lead finished, the campaign completes and the run follows it.
	done := awaitRun(t, r.session, run.ID, inState(api.RunStateCompleted))
	require.Equal(t, []api.RunState{api.RunStateQueued, api.RunStatePreflighting, api.RunStateLaunching, api.RunStateActive,
		api.RunStateCompleted}, story(done))
	for i, e := range done.Events {
		require.NotEmpty(t, e.Message.Value, "event %d says what happened", i)
		if i > 0 {
			require.False(t, e.CreatedAt.Before(done.Events[i-1].CreatedAt), "oldest first")
		}
	}
	_, err = r.session.RunsCancel(context.Background(), api.RunsCancelParams{ID: run.ID})
	requireAPIError(t, err, 409, "run_final")
}

func jsonBool(t *testing.T, raw []byte) bool {
	t.Helper()
	var v bool
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

func TestRunCancelStopsItsCampaignAndAFinalRunRefuses(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	ctx := context.Background()
	// The schedule sends on every day but today, so the campaign stays active with its leads waiting.
	body := r.launchBody(t)
	body.Schedule.Days = api.NewOptInt(notToday())
	r.env.StartWorkers(t)
	run := createRun(t, r.session, body)
	active := awaitRun(t, r.session, run.ID, inState(api.RunStateActive, api.RunStateFailed))
	require.Equal(t, api.RunStateActive, active.State, "%+v", active.ErrorDetails)

	cancelled, err := r.c.RunsCancel(ctx, api.RunsCancelParams{ID: run.ID})
	require.NoError(t, err)
	require.Equal(t, api.RunStateCancelled, cancelled.State)
	camp, err := r.c.CampaignsGet(ctx, api.CampaignsGetParams{ID: active.CampaignID.Value})
	require.NoError(t, err)
	require.Equal(t, "paused", string(camp.Status), "cancelling the run stops its campaign")
	detail, err := r.c.RunsGet(ctx, api.RunsGetParams{ID: run.ID})
	require.NoError(t, err)
	last := detail.Events[len(detail.Events)-1]
	require.Equal(t, "run.cancelled", last.Type)
	require.Equal(t, api.RunStateCancelled, last.State.Value)

	_, err = r.c.RunsCancel(ctx, api.RunsCancelParams{ID: run.ID})
	requireAPIError(t, err, 409, "run_final")
	_, err = r.c.RunsCancel(ctx, api.RunsCancelParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "run_not_found")
	require.Zero(t, r.smtp.Count())
}

func TestRunBlockedByPreflightFailsWithItsProblems(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	r.env.StartWorkers(t)
	body := r.runBody(api.CreateOutboundRunIntentLaunch)
	body.Steps[0].Variants[0].BodyPlain = api.OptString{} // an email with no body
	run := createRun(t, r.session, body)
	failed := awaitRun(t, r.session, run.ID, inState(api.RunStateFailed, api.RunStateActive))
	require.Equal(t, api.RunStateFailed, failed.State)
	require.Equal(t, []api.RunState{api.RunStateQueued, api.RunStatePreflighting, api.RunStateFailed}, story(failed))
	require.True(t, failed.ErrorDetails.Set)
	var code string
	require.NoError(t, json.Unmarshal(failed.ErrorDetails.Value["code"], &code))
	require.Equal(t, "preflight_failed", code)
	require.Contains(t, string(failed.ErrorDetails.Value["problems"]), "content")
	require.False(t, failed.CampaignID.Set)
	require.Zero(t, orgCount(t, r.env, r.org, "campaigns"), "a refused launch keeps nothing")
	require.Zero(t, orgCount(t, r.env, r.org, "contacts"))
}

func TestRunEventsAreAppendOnlyForTheApplication(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	run := createRun(t, r.c, r.runBody(api.CreateOutboundRunIntentDraft))
	for _, stmt := range []string{"UPDATE run_events SET message = 'rewritten' WHERE run_id = $1", "DELETE FROM run_events WHERE run_id = $1"} {
		err := db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, stmt, run.ID)
			return err
		})
		require.ErrorContains(t, err, "permission denied", stmt)
	}
	detail, err := r.c.RunsGet(context.Background(), api.RunsGetParams{ID: run.ID})
	require.NoError(t, err)
	require.Len(t, detail.Events, 1)
	require.Equal(t, "run.created", detail.Events[0].Type)
	require.NotEqual(t, "rewritten", detail.Events[0].Message.Value)
}
