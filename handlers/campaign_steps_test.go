package handlers_test

import (
	"context"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// campaignRig is one organization with a full-access client, for the campaign part tests.
type campaignRig struct {
	env *apitest.Env
	org uuid.UUID
	c   *api.Client
}

func newCampaignRig(t *testing.T) campaignRig {
	t.Helper()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	return campaignRig{env: env, org: boot.OrganizationID, c: env.Client(t, boot.APIKey)}
}

// campaign creates a draft campaign with steps.
func (r campaignRig) campaign(t *testing.T, req api.CampaignCreate) *api.Campaign {
	t.Helper()
	out, err := r.c.CampaignsCreate(context.Background(), &req, api.CampaignsCreateParams{})
	require.NoError(t, err)
	return out
}

func (r campaignRig) steps(t *testing.T, id uuid.UUID) []api.CampaignStep {
	t.Helper()
	out, err := r.c.CampaignsListSteps(context.Background(), api.CampaignsListStepsParams{ID: id})
	require.NoError(t, err)
	for i, s := range out {
		require.Equal(t, i, s.Position, "positions are dense from 0 in list order")
	}
	return out
}

func (r campaignRig) addStep(t *testing.T, id uuid.UUID, s api.CampaignStepCreate) (*api.CampaignStep, error) {
	t.Helper()
	return r.c.CampaignsCreateStep(context.Background(), api.NewOptCampaignStepCreate(s), api.CampaignsCreateStepParams{ID: id})
}

func (r campaignRig) updateStep(t *testing.T, id, sid uuid.UUID, s api.CampaignStepUpdate) (*api.CampaignStep, error) {
	t.Helper()
	return r.c.CampaignsUpdateStep(context.Background(), &s, api.CampaignsUpdateStepParams{ID: id, Sid: sid})
}

// stepNames lists the steps' names in order.
func stepNames(steps []api.CampaignStep) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Name.Value
	}
	return out
}

func named(names ...string) []api.CampaignStepCreate {
	out := make([]api.CampaignStepCreate, len(names))
	for i, n := range names {
		out[i] = api.CampaignStepCreate{Name: api.NewOptString(n), Subject: api.NewOptString("About " + n)}
	}
	return out
}

// campaignEvents counts org's outbox events of type whose data has key = value.
func campaignEvents(t *testing.T, r campaignRig, typ, key, value string) int64 {
	t.Helper()
	return orgInt(t, r.env, r.org, `SELECT count(*) FROM event_outbox WHERE organization_id = $1 AND event_type = $2
		AND data->>$3 = $4`, r.org, typ, key, value)
}

func TestCampaignStepsTakeTheirDefaultsFromTheirPlace(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	cmp := r.campaign(t, api.CampaignCreate{Name: "Defaults"})

	first, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Name: api.NewOptString("open"), Subject: api.NewOptString("Hello {{.FirstName}}")})
	require.NoError(t, err)
	require.Equal(t, 0, first.Position)
	require.Equal(t, 0, first.WaitAfter.Value, "the first step waits 0 days")
	require.False(t, first.ThreadReply.Value, "a first step starts the thread")
	require.Equal(t, api.CampaignStepKindEmail, first.Kind)

	for _, tc := range []struct {
		name, subject string
		threadReply   api.OptBool
		wantReply     bool
	}{
		{"no subject", "", api.OptBool{}, true},
		{"the thread's subject", "  Hello {{.FirstName}} ", api.OptBool{}, true},
		{"its own subject", "A new topic", api.OptBool{}, false},
		{"no subject, told not to reply", "", api.NewOptBool(false), false},
	} {
		s, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Name: api.NewOptString(tc.name), Subject: api.NewOptString(tc.subject), ThreadReply: tc.threadReply})
		require.NoError(t, err, tc.name)
		require.Equal(t, 3, s.WaitAfter.Value, "%s: a follow-up waits 3 days", tc.name)
		require.Equal(t, tc.wantReply, s.ThreadReply.Value, tc.name)
	}
	// The thread's subject is the last email step's before the new one: after "A new topic" a step with
	// that subject replies, one with the first step's subject does not.
	s, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Name: api.NewOptString("same as last"), Subject: api.NewOptString("A new topic")})
	require.NoError(t, err)
	require.True(t, s.ThreadReply.Value)

	// A step inserted first waits 0 days and starts the thread; the old first step keeps what it stored.
	lead, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Name: api.NewOptString("new first"), Position: api.NewOptInt(0)})
	require.NoError(t, err)
	require.Equal(t, 0, lead.Position)
	require.Equal(t, 0, lead.WaitAfter.Value)
	require.False(t, lead.ThreadReply.Value)
	steps := r.steps(t, cmp.ID)
	require.Equal(t, []string{"new first", "open", "no subject", "the thread's subject", "its own subject",
		"no subject, told not to reply", "same as last"}, stepNames(steps))
	require.Equal(t, 0, steps[1].WaitAfter.Value, "moving down re-evaluates nothing")
	require.Equal(t, first.ID, steps[1].ID)

	// An explicit wait_after wins over the default, within 0 to 365 days.
	s, err = r.addStep(t, cmp.ID, api.CampaignStepCreate{WaitAfter: api.NewOptInt(7)})
	require.NoError(t, err)
	require.Equal(t, 7, s.WaitAfter.Value)
	_, err = r.addStep(t, cmp.ID, api.CampaignStepCreate{WaitAfter: api.NewOptInt(366)})
	requireAPIError(t, err, 400, "invalid_step")

	// Each change raised campaign.updated with an audit entry.
	require.EqualValues(t, 8, campaignEvents(t, r, "campaign.updated", "change", "step_created"))
	require.EqualValues(t, 8, orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE organization_id = $1
		AND event = 'campaign.updated' AND target_id = $2 AND metadata->>'change' = 'step_created'`, r.org, cmp.ID.String()))
}

func TestCampaignStepsStayDenseAcrossInsertMoveAndDelete(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "Order", Steps: named("A", "B", "C")})
	before := r.steps(t, cmp.ID)
	byName := map[string]api.CampaignStep{}
	for _, s := range before {
		byName[s.Name.Value] = s
	}

	d, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Name: api.NewOptString("D"), Subject: api.NewOptString("About D"), Position: api.NewOptInt(1)})
	require.NoError(t, err)
	require.Equal(t, 1, d.Position)
	require.Equal(t, []string{"A", "D", "B", "C"}, stepNames(r.steps(t, cmp.ID)))

	// Moving C first keeps every stored field of every step (C keeps its follow-up wait of 3 days).
	moved, err := r.updateStep(t, cmp.ID, byName["C"].ID, api.CampaignStepUpdate{Position: api.NewOptInt(0)})
	require.NoError(t, err)
	require.Equal(t, 0, moved.Position)
	require.Equal(t, 3, moved.WaitAfter.Value)
	require.Equal(t, "About C", moved.Subject.Value)
	steps := r.steps(t, cmp.ID)
	require.Equal(t, []string{"C", "A", "D", "B"}, stepNames(steps))
	require.Equal(t, 0, steps[1].WaitAfter.Value, "A keeps its wait of 0 days")

	_, err = r.updateStep(t, cmp.ID, byName["A"].ID, api.CampaignStepUpdate{Position: api.NewOptInt(3)})
	require.NoError(t, err)
	require.Equal(t, []string{"C", "D", "B", "A"}, stepNames(r.steps(t, cmp.ID)))

	require.NoError(t, r.c.CampaignsDeleteStep(ctx, api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: d.ID}))
	require.Equal(t, []string{"C", "B", "A"}, stepNames(r.steps(t, cmp.ID)))

	// Places past the end and foreign or deleted steps are refused.
	_, err = r.addStep(t, cmp.ID, api.CampaignStepCreate{Position: api.NewOptInt(4)})
	requireAPIError(t, err, 400, "invalid_position")
	_, err = r.updateStep(t, cmp.ID, byName["A"].ID, api.CampaignStepUpdate{Position: api.NewOptInt(3)})
	requireAPIError(t, err, 400, "invalid_position")
	_, err = r.updateStep(t, cmp.ID, d.ID, api.CampaignStepUpdate{Name: api.NewOptString("gone")})
	requireAPIError(t, err, 404, "step_not_found")
	requireAPIError(t, r.c.CampaignsDeleteStep(ctx, api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: d.ID}), 404, "step_not_found")
	other := r.campaign(t, api.CampaignCreate{Name: "Other", Steps: named("X")})
	_, err = r.updateStep(t, other.ID, byName["A"].ID, api.CampaignStepUpdate{Name: api.NewOptString("stolen")})
	requireAPIError(t, err, 404, "step_not_found")

	// In POST /campaigns a step's position is its place in the list.
	bad := named("P", "Q")
	bad[1].Position = api.NewOptInt(0)
	_, err = r.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Bad", Steps: bad}, api.CampaignsCreateParams{})
	requireAPIError(t, err, 400, "invalid_steps")
	good := named("P", "Q")
	good[1].Position = api.NewOptInt(1)
	_, err = r.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Good", Steps: good}, api.CampaignsCreateParams{})
	require.NoError(t, err)
}

func TestCampaignStepEditsCarryLeadsOnAfterTheirLastStep(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	cmp := r.campaign(t, api.CampaignCreate{Name: "Leads", Steps: named("A", "B", "C")})
	steps := r.steps(t, cmp.ID)
	// Four leads: none sent yet, A sent, A and B sent, all three sent.
	leads := make([]uuid.UUID, 4)
	for i := range leads {
		leads[i] = uuid.New()
		orgExec(t, r.env, r.org, `INSERT INTO contacts (organization_id, id, email) VALUES ($1, $2, $3)`, r.org, leads[i], leads[i].String()+"@example.com")
		orgExec(t, r.env, r.org, `INSERT INTO campaign_leads (organization_id, campaign_id, contact_id, step_position)
			VALUES ($1, $2, $3, $4)`, r.org, cmp.ID, leads[i], i)
	}
	positions := func() []int64 {
		out := make([]int64, len(leads))
		for i, id := range leads {
			out[i] = orgInt(t, r.env, r.org, `SELECT step_position FROM campaign_leads WHERE organization_id = $1
				AND campaign_id = $2 AND contact_id = $3`, r.org, cmp.ID, id)
		}
		return out
	}

	// Deleting B: the lead that had sent A and B now carries on after A (with C, now at 1).
	require.NoError(t, r.c.CampaignsDeleteStep(context.Background(), api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: steps[1].ID}))
	require.Equal(t, []int64{0, 1, 1, 2}, positions())

	// Inserting a step first: only a lead that had sent nothing gets it.
	_, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Name: api.NewOptString("Z"), Position: api.NewOptInt(0)})
	require.NoError(t, err)
	require.Equal(t, []int64{0, 2, 2, 3}, positions())
}

func TestCampaignStepKindsAndTheOneTimeRule(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	cmp := r.campaign(t, api.CampaignCreate{Name: "Kinds"})
	raw := func(s string) jx.Raw { return jx.Raw(s) }
	conn := `"` + appConnectionRow(t, r.env, r.org, "CRM").String() + `"`

	for _, tc := range []struct {
		name   string
		kind   api.CampaignStepCreateKind
		action api.CampaignStepCreateAction
		code   string
	}{
		{"wait without minutes", api.CampaignStepCreateKindWait, api.CampaignStepCreateAction{"type": raw(`"wait"`)}, "invalid_step"},
		{"wait with no config", api.CampaignStepCreateKindWait, nil, "invalid_step"},
		{"wait too long", api.CampaignStepCreateKindWait, api.CampaignStepCreateAction{"wait_minutes": raw(`129601`)}, "invalid_step"},
		{"app action without output key", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{"type": raw(`"app_action"`),
			"app_connection_id": raw(conn), "path": raw(`"/enrich"`)}, "invalid_step"},
		{"app action naming no connection of the organization", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{
			"type": raw(`"app_action"`), "app_connection_id": raw(`"` + uuid.NewString() + `"`), "path": raw(`"/enrich"`),
			"output_key": raw(`"crm"`)}, "invalid_step"},
		{"app action with an unknown on_error", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{"type": raw(`"app_action"`),
			"app_connection_id": raw(conn), "path": raw(`"/enrich"`), "output_key": raw(`"crm"`), "on_error": raw(`"retry"`)}, "invalid_step"},
		{"app action without a connection", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{"type": raw(`"app_action"`),
			"path": raw(`"/enrich"`), "output_key": raw(`"crm"`)}, "invalid_step"},
		{"app action without a path", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{"type": raw(`"app_action"`),
			"app_connection_id": raw(conn), "output_key": raw(`"crm"`)}, "invalid_step"},
		{"event wait without a name", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{"type": raw(`"wait_for_event"`),
			"timeout_minutes": raw(`60`)}, "invalid_step"},
		{"event wait with a negative timeout", api.CampaignStepCreateKindAction, api.CampaignStepCreateAction{"type": raw(`"wait_for_event"`),
			"wait_event_name": raw(`"trial.started"`), "timeout_minutes": raw(`-1`)}, "invalid_step"},
		{"email step with an action", api.CampaignStepCreateKindEmail, api.CampaignStepCreateAction{"wait_minutes": raw(`5`)}, "invalid_step"},
	} {
		s := api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(tc.kind)}
		if tc.action != nil {
			s.Action = api.NewOptCampaignStepCreateAction(tc.action)
		}
		_, err := r.addStep(t, cmp.ID, s)
		requireAPIError(t, err, 400, tc.code)
	}
	require.Empty(t, r.steps(t, cmp.ID), "nothing refused was stored")

	conditions := api.CampaignStepCreateConditions{"if": raw(`{"opened": true, "any": [1, "two"]}`)}
	wait, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindWait),
		Action:     api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"wait_minutes": raw(`90`)}),
		Conditions: api.NewOptCampaignStepCreateConditions(conditions)})
	require.NoError(t, err)
	require.Equal(t, api.CampaignStepKindWait, wait.Kind)
	require.JSONEq(t, `90`, string(wait.Action.Value["wait_minutes"]))
	require.JSONEq(t, `{"opened": true, "any": [1, "two"]}`, string(wait.Conditions.Value["if"]), "conditions are kept verbatim")
	require.False(t, wait.ThreadReply.Value, "only email steps reply")

	app, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"type": raw(`"app_action"`),
			"app_connection_id": raw(conn), "path": raw(`"/enrich"`), "output_key": raw(`"crm"`), "on_error": raw(`"block"`),
			"inputs": raw(`{"email": "{{.Email}}"}`)})})
	require.NoError(t, err)
	require.JSONEq(t, `"crm"`, string(app.Action.Value["output_key"]))
	event, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction),
		OnTimeout: api.NewOptCampaignStepCreateOnTimeout(api.CampaignStepCreateOnTimeoutStop),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"type": raw(`"wait_for_event"`),
			"wait_event_name": raw(`"trial.started"`), "timeout_minutes": raw(`1440`)})})
	require.NoError(t, err)
	require.Equal(t, api.CampaignStepOnTimeoutStop, event.OnTimeout.Value)
	_, err = r.addStep(t, cmp.ID, api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"type": raw(`"wait_for_event"`),
			"wait_event_name": raw(`"trial.started"`)})})
	require.NoError(t, err, "an event wait without a timeout waits the longest")

	// Turning the wait step into an email step drops its action config.
	email, err := r.updateStep(t, cmp.ID, wait.ID, api.CampaignStepUpdate{Kind: api.NewOptCampaignStepUpdateKind(api.CampaignStepUpdateKindEmail),
		Subject: api.NewOptString("Now an email")})
	require.NoError(t, err)
	require.Equal(t, api.CampaignStepKindEmail, email.Kind)
	require.False(t, email.Action.Set)
	// And back needs its config.
	_, err = r.updateStep(t, cmp.ID, wait.ID, api.CampaignStepUpdate{Kind: api.NewOptCampaignStepUpdateKind(api.CampaignStepUpdateKindWait)})
	requireAPIError(t, err, 400, "invalid_step")

	// A one_time campaign takes one email step, by create, add, update or kind change.
	once := r.campaign(t, api.CampaignCreate{Name: "Once", Kind: api.NewOptCampaignCreateKind(api.CampaignCreateKindOneTime), Steps: named("only")})
	_, err = r.addStep(t, once.ID, named("second")[0])
	requireAPIError(t, err, 400, "invalid_steps")
	pause, err := r.addStep(t, once.ID, api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindWait),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"wait_minutes": raw(`5`)})})
	require.NoError(t, err, "non-email steps are not limited")
	_, err = r.updateStep(t, once.ID, pause.ID, api.CampaignStepUpdate{Kind: api.NewOptCampaignStepUpdateKind(api.CampaignStepUpdateKindEmail)})
	requireAPIError(t, err, 400, "invalid_steps")
	_, err = r.c.CampaignsCreate(context.Background(), &api.CampaignCreate{Name: "Twice", Kind: api.NewOptCampaignCreateKind(api.CampaignCreateKindOneTime),
		Steps: named("one", "two")}, api.CampaignsCreateParams{})
	requireAPIError(t, err, 400, "invalid_steps")
	require.Len(t, r.steps(t, once.ID), 2)
}

func TestCampaignStepsStopAtFifty(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	names := make([]string, 50)
	for i := range names {
		names[i] = uuid.NewString()[:8]
	}
	cmp := r.campaign(t, api.CampaignCreate{Name: "Long", Steps: named(names...)})
	_, err := r.addStep(t, cmp.ID, api.CampaignStepCreate{})
	requireAPIError(t, err, 400, "too_many_steps")
	first := r.steps(t, cmp.ID)[0]
	require.NoError(t, r.c.CampaignsDeleteStep(context.Background(), api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: first.ID}))
	_, err = r.addStep(t, cmp.ID, api.CampaignStepCreate{})
	require.NoError(t, err)
}

func TestCampaignStepsAreTheOrganizationsOwnAndNeedTheWriteScope(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "Mine", Steps: named("A")})
	step := r.steps(t, cmp.ID)[0]

	other := r.env.Bootstrap(t, "globex")
	them := r.env.Client(t, other.APIKey)
	_, err := them.CampaignsListSteps(ctx, api.CampaignsListStepsParams{ID: cmp.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = them.CampaignsCreateStep(ctx, api.OptCampaignStepCreate{}, api.CampaignsCreateStepParams{ID: cmp.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = them.CampaignsUpdateStep(ctx, &api.CampaignStepUpdate{Name: api.NewOptString("x")}, api.CampaignsUpdateStepParams{ID: cmp.ID, Sid: step.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	requireAPIError(t, them.CampaignsDeleteStep(ctx, api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: step.ID}), 404, "campaign_not_found")

	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err = reader.CampaignsListSteps(ctx, api.CampaignsListStepsParams{ID: cmp.ID})
	require.NoError(t, err)
	_, err = reader.CampaignsCreateStep(ctx, api.OptCampaignStepCreate{}, api.CampaignsCreateStepParams{ID: cmp.ID})
	requireAPIError(t, err, 403, "missing_scope")
	_, err = reader.CampaignsUpdateStep(ctx, &api.CampaignStepUpdate{Name: api.NewOptString("x")}, api.CampaignsUpdateStepParams{ID: cmp.ID, Sid: step.ID})
	requireAPIError(t, err, 403, "missing_scope")
	requireAPIError(t, reader.CampaignsDeleteStep(ctx, api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: step.ID}), 403, "missing_scope")
	require.Len(t, r.steps(t, cmp.ID), 1)
}
