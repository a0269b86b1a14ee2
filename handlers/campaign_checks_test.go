package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// checksBody is 28 plain words in normal case: a body the content score takes nothing from.
const checksBody = "Hi there, I noticed your team is hiring engineers and wanted to ask how you handle onboarding today. " +
	"Would a short call next week be useful for you?"

func emailStepIn(subject, body string) api.CampaignStepCreate {
	return api.CampaignStepCreate{Subject: api.NewOptString(subject), BodyPlain: api.NewOptString(body)}
}

func actionStepIn(fields map[string]string) api.CampaignStepCreate {
	action := api.CampaignStepCreateAction{}
	for k, v := range fields {
		action[k] = jx.Raw(v)
	}
	return api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction),
		Action: api.NewOptCampaignStepCreateAction(action)}
}

func validate(t *testing.T, c *api.Client, id uuid.UUID) *api.CampaignValidation {
	t.Helper()
	out, err := c.CampaignsValidate(context.Background(), api.CampaignsValidateParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, id, out.CampaignID)
	return out
}

// problemCodes lists a validation's codes in order, checking every problem has a message and a fix.
func problemCodes(t *testing.T, v *api.CampaignValidation) []string {
	t.Helper()
	out := []string{}
	for _, p := range v.Problems {
		require.NotEmpty(t, p.Message, p.Code)
		require.NotEmpty(t, p.Fix.Value, p.Code)
		out = append(out, p.Code)
	}
	return out
}

// stepIDs are the campaign's step ids in position order.
func stepIDs(t testing.TB, env *apitest.Env, org, campaign uuid.UUID) []uuid.UUID {
	t.Helper()
	var out []uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT id FROM campaign_steps WHERE organization_id = $1 AND campaign_id = $2 ORDER BY position", org, campaign)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	}))
	return out
}

func TestCampaignValidateFindsEachKindOfProblemWithItsFix(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	reader := env.Client(t, scopedKey(t, env, org, auth.ReadCampaigns))

	// Nothing to send and no mailbox to send it from; a READ_CAMPAIGNS key may ask.
	empty := campCreate(t, c, api.CampaignCreate{Name: "Empty"})
	v := validate(t, reader, empty.ID)
	require.False(t, v.Valid)
	require.Equal(t, []string{"no_steps", "no_senders"}, problemCodes(t, v))
	for _, p := range v.Problems {
		require.False(t, p.StepID.Set, "%s concerns the campaign, not a step", p.Code)
	}

	box := campMailbox(t, env, org, "ada@example.com", 50)
	createContacts(t, c, api.ContactCreate{Email: "grace@example.com",
		CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"industry": "navy"})})

	// A sequence broken in every way a step and a setting can be.
	broken := campCreate(t, c, api.CampaignCreate{Name: "Broken", Days: api.NewOptInt(0), DailyLimit: api.NewOptInt(500),
		TrackingDomain: api.NewOptString("track.example.com"), OpenTracking: api.NewOptBool(true),
		UnsubscribeHeader: api.NewOptBool(false),
		Steps: []api.CampaignStepCreate{
			{BodyPlain: api.NewOptString(checksBody + " {{.industry}} {{.team_size}} {{.App.crm.owner}}"), ThreadReply: api.NewOptBool(true)},
			emailStepIn("Next", "{{.FirstName"),
			actionStepIn(map[string]string{"type": `"app_action"`, "app_connection_id": `"` + uuid.NewString() + `"`, "path": `"/lookup"`, "output_key": `"crm"`}),
			emailStepIn("URGENT: act now!!!", "Click here for a FREE gift!!! {{.App.crm.owner}}"),
			actionStepIn(map[string]string{"type": `"wait_for_event"`, "wait_event_name": `"signed_up"`, "timeout_minutes": "60"}),
			emailStepIn("Empty", ""),
		}})
	steps := stepIDs(t, env, org, broken.ID)
	orgExec(t, env, org, "UPDATE campaigns SET end_date = now() - interval '1 day' WHERE organization_id = $1 AND id = $2", org, broken.ID)
	orgExec(t, env, org, `INSERT INTO campaign_variants (organization_id, campaign_id, id, step_id, name, weight, subject)
		VALUES ($1, $2, $3, $4, 'B', 0, 'Other'), ($1, $2, $5, $4, 'C', 0, 'Another')`, org, broken.ID, uuid.New(), steps[3], uuid.New())
	v = validate(t, reader, broken.ID)
	require.False(t, v.Valid)
	type found struct {
		code, severity string
		step           int
	}
	var got []found
	for _, p := range v.Problems {
		f := found{code: p.Code, severity: string(p.Severity), step: -1}
		if p.StepID.Set {
			f.step = slices.Index(steps, p.StepID.Value)
		}
		got = append(got, f)
	}
	problemCodes(t, v)
	require.Equal(t, []found{
		{"step_kind_unsupported", "error", 2},
		{"thread_reply_first_step", "warning", 0},
		{"step_empty_subject", "error", 0},
		{"step_empty_body", "error", 5},
		{"unresolved_variable", "error", 0}, // team_size: no contact carries it (industry does)
		{"unresolved_variable", "error", 0}, // App.crm is captured by step 3, after step 1
		{"template_error", "error", 1},
		{"schedule_no_window", "error", -1},
		{"end_before_now", "error", -1},
		{"daily_limit_above_capacity", "warning", -1},
		{"tracking_domain_unverified", "error", -1},
		{"unsubscribe_header_off", "warning", -1},
		{"ab_variants_weights", "error", 3},
		{"content_score_low", "error", 3},
	}, got)
	require.Contains(t, v.Problems[4].Message, "{{.team_size}}")
	require.Contains(t, v.Problems[5].Message, "{{.App.crm.owner}}")
	require.Contains(t, v.Problems[6].Message, "body_plain does not parse: unclosed")

	// A one_time campaign holding two emails (written past the API's own refusal), an explicit pool whose only
	// sender is disabled, and campaign-wide variants none of which is active.
	once := campCreate(t, c, api.CampaignCreate{Name: "Once", Kind: api.NewOptCampaignCreateKind(api.CampaignCreateKindOneTime),
		SenderStrategy: api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit),
		Senders:        []api.CampaignSenderInput{{EmailAccountID: box, Enabled: api.NewOptBool(false)}},
		Steps:          []api.CampaignStepCreate{emailStepIn("Hello", checksBody)}})
	orgExec(t, env, org, `INSERT INTO campaign_steps (organization_id, campaign_id, id, position, subject, body_plain)
		VALUES ($1, $2, $3, 1, 'Again', $4)`, org, once.ID, uuid.New(), checksBody)
	orgExec(t, env, org, `INSERT INTO campaign_variants (organization_id, campaign_id, id, name, is_active)
		VALUES ($1, $2, $3, 'Wide', false)`, org, once.ID, uuid.New())
	v = validate(t, c, once.ID)
	require.Equal(t, []string{"one_time_multiple_emails", "no_senders", "ab_variants_weights"}, problemCodes(t, v))
	require.Contains(t, v.Problems[1].Message, "ada@example.com is disabled in the pool")

	// A healthy campaign is valid; validation stored nothing anywhere.
	healthy := campCreate(t, c, api.CampaignCreate{Name: "Healthy", Steps: []api.CampaignStepCreate{emailStepIn("Quick question about {{.industry}}", checksBody)}})
	v = validate(t, reader, healthy.ID)
	require.True(t, v.Valid)
	require.Empty(t, v.Problems)
	require.Zero(t, orgInt(t, env, org, "SELECT count(*) FROM campaign_preflight_reports WHERE organization_id = $1", org))
	require.Zero(t, orgInt(t, env, org, "SELECT count(*) FROM campaign_logs WHERE organization_id = $1 AND event_type = 'preflight'", org))

	// Another organization's campaign is unknown.
	other := env.Client(t, env.Bootstrap(t, "other").APIKey)
	_, err := other.CampaignsValidate(ctx, api.CampaignsValidateParams{ID: healthy.ID})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}

func preflight(t *testing.T, c *api.Client, id uuid.UUID) *api.PreflightReport {
	t.Helper()
	out, err := c.CampaignsRunPreflight(context.Background(), api.CampaignsRunPreflightParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, id, out.CampaignID)
	return out
}

// lines lists a report's lines as key:passed:severity.
func lines(r *api.PreflightReport) []string {
	out := []string{}
	for _, c := range r.Checks {
		state := "failed"
		if c.Passed.Value {
			state = "passed"
		}
		out = append(out, c.Key.Value+":"+state+":"+c.Severity.Value)
	}
	return out
}

func TestCampaignPreflightStoresAReportWithItsTrail(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	campMailbox(t, env, org, "ada@example.com", 50)
	camp := campCreate(t, c, api.CampaignCreate{Name: "Launch", Steps: []api.CampaignStepCreate{emailStepIn("Quick question", checksBody)}})

	// Preflight sends nothing but needs SEND_CAMPAIGNS; reading campaigns is not enough.
	_, err := env.Client(t, scopedKey(t, env, org, auth.ReadCampaigns)).CampaignsRunPreflight(ctx, api.CampaignsRunPreflightParams{ID: camp.ID})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")

	r := preflight(t, env.Client(t, scopedKey(t, env, org, auth.SendCampaigns)), camp.ID)
	require.True(t, r.Passed)
	require.Equal(t, 100, r.Score)
	require.Equal(t, []string{"steps:passed:error", "content:passed:error", "senders:passed:error", "schedule_window:passed:error",
		"daily_limit:passed:warning", "tracking_domain:passed:warning", "unsubscribe_header:passed:warning",
		"ab_variant_configured:passed:error", "content_score:passed:error"}, lines(r))
	require.Equal(t, "1 mailbox can send for this campaign, 50 campaign emails a day together.", r.Checks[2].Message.Value)
	require.Empty(t, r.Recommendations)
	require.Equal(t, org, r.OrganizationID.Value)

	// The report is stored as answered, with its audit entry and its activity-log line.
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT passed::int FROM campaign_preflight_reports WHERE organization_id = $1 AND id = $2", org, r.ID.Value))
	require.EqualValues(t, 100, orgInt(t, env, org, "SELECT score FROM campaign_preflight_reports WHERE organization_id = $1 AND id = $2", org, r.ID.Value))
	require.EqualValues(t, 9, orgInt(t, env, org, "SELECT jsonb_array_length(checks) FROM campaign_preflight_reports WHERE organization_id = $1 AND id = $2", org, r.ID.Value))
	require.EqualValues(t, 1, orgInt(t, env, org, `SELECT count(*) FROM campaign_preflight_reports WHERE organization_id = $1 AND id = $2
		AND checks->2 = '{"key": "senders", "passed": true, "severity": "error", "message": "1 mailbox can send for this campaign, 50 campaign emails a day together.", "remediation": ""}'::jsonb`, org, r.ID.Value))
	require.EqualValues(t, 1, orgInt(t, env, org, `SELECT count(*) FROM audit_log WHERE organization_id = $1 AND action = 'verify'
		AND event = 'campaign.preflight' AND target_type = 'campaign' AND target_id = $2 AND metadata->>'report_id' = $3`, org, camp.ID.String(), r.ID.Value.String()))
	require.EqualValues(t, 1, orgInt(t, env, org, `SELECT count(*) FROM campaign_logs WHERE organization_id = $1 AND campaign_id = $2
		AND event_type = 'preflight' AND message = 'Preflight passed; content score 100.'`, org, camp.ID))

	// Each run stores its own report; a foreign campaign is unknown.
	again := preflight(t, c, camp.ID)
	require.NotEqual(t, r.ID.Value, again.ID.Value)
	require.EqualValues(t, 2, orgInt(t, env, org, "SELECT count(*) FROM campaign_preflight_reports WHERE organization_id = $1 AND campaign_id = $2", org, camp.ID))
	other := env.Client(t, env.Bootstrap(t, "other").APIKey)
	_, err = other.CampaignsRunPreflight(ctx, api.CampaignsRunPreflightParams{ID: camp.ID})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}

func TestCampaignPreflightHonoursThePreflightBlock(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	campMailbox(t, env, org, "ada@example.com", 50)
	// No weekday to send on, no List-Unsubscribe header, and content scoring 49: URGENT, act now, click here,
	// free gift -20; 2 capitals of 9 words -11; 6 marks -10; 6 body words -10.
	camp := campCreate(t, c, api.CampaignCreate{Name: "Loud", Days: api.NewOptInt(0), UnsubscribeHeader: api.NewOptBool(false),
		Steps: []api.CampaignStepCreate{emailStepIn("URGENT: act now!!!", "Click here for a FREE gift!!!")}})
	block := func(preflight string) {
		res := env.Do(t, http.MethodPatch, "/v1/campaigns/"+camp.ID.String()+"/advanced", boot.APIKey,
			strings.NewReader(`{"settings": {"preflight": `+preflight+`}}`), http.Header{"Content-Type": {"application/json"}})
		require.Equal(t, http.StatusNoContent, res.StatusCode)
		require.NoError(t, res.Body.Close())
	}

	// With no block stored every check runs: the schedule and the score fail, the header is a recommendation.
	r := preflight(t, c, camp.ID)
	require.False(t, r.Passed)
	require.Equal(t, 49, r.Score)
	require.Equal(t, []string{"steps:passed:error", "content:passed:error", "senders:passed:error", "schedule_window:failed:error",
		"daily_limit:passed:warning", "tracking_domain:passed:warning", "unsubscribe_header:failed:warning",
		"ab_variant_configured:passed:error", "content_score:failed:error"}, lines(r))
	require.Equal(t, []string{"Set unsubscribe_header to true."}, r.Recommendations)
	require.Contains(t, r.Checks[8].Message.Value, "The content score is 49, below the minimum of 60")
	require.NotEmpty(t, r.Checks[8].Remediation.Value)

	// Switches turn single checks off; min_content_score moves the bar.
	block(`{"enabled": true, "check_schedule_window": false, "check_unsubscribe_header": false, "min_content_score": 45}`)
	r = preflight(t, c, camp.ID)
	require.True(t, r.Passed)
	require.Equal(t, []string{"steps:passed:error", "content:passed:error", "senders:passed:error", "daily_limit:passed:warning",
		"tracking_domain:passed:warning", "ab_variant_configured:passed:error", "content_score:passed:error"}, lines(r))
	require.Empty(t, r.Recommendations)
	block(`{"enabled": true, "check_schedule_window": false, "check_unsubscribe_header": false, "min_content_score": 50}`)
	r = preflight(t, c, camp.ID)
	require.False(t, r.Passed, "49 is below 50")
	block(`{"enabled": true, "check_schedule_window": false, "check_unsubscribe_header": false, "check_content_score": false}`)
	r = preflight(t, c, camp.ID)
	require.True(t, r.Passed, "the score is not checked")
	require.Equal(t, 49, r.Score, "but still reported")

	// A disabled block leaves the checks that always run; they still fail a report.
	block(`{"enabled": false}`)
	r = preflight(t, c, camp.ID)
	require.True(t, r.Passed)
	require.Equal(t, []string{"steps:passed:error", "content:passed:error", "senders:passed:error"}, lines(r))
	orgExec(t, env, org, "UPDATE campaign_steps SET body_plain = '' WHERE organization_id = $1 AND campaign_id = $2", org, camp.ID)
	r = preflight(t, c, camp.ID)
	require.False(t, r.Passed)
	require.Equal(t, []string{"steps:passed:error", "content:failed:error", "senders:passed:error"}, lines(r))
	require.Equal(t, "Step 1 has no body.", r.Checks[1].Message.Value)
	// The subject alone: urgent and act now -10, 1 capital of 3 words -15 (16), 3 marks -4, no words -10.
	require.Equal(t, 61, r.Score)
	require.EqualValues(t, 1, orgInt(t, env, org, `SELECT count(*) FROM campaign_logs WHERE organization_id = $1 AND campaign_id = $2
		AND event_type = 'preflight' AND message = 'Preflight failed with 1 problem; content score 61.'`, org, camp.ID))

	// Validation runs every check, whatever the block says (61 meets the block's default minimum of 60).
	require.Equal(t, []string{"step_empty_body", "schedule_no_window", "unsubscribe_header_off"},
		problemCodes(t, validate(t, c, camp.ID)))
	block(`{"enabled": false, "min_content_score": 70}`)
	require.Equal(t, []string{"step_empty_body", "schedule_no_window", "unsubscribe_header_off", "content_score_low"},
		problemCodes(t, validate(t, c, camp.ID)))
}
