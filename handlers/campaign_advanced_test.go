package handlers_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// advRig is one organization with an API key client and a draft campaign.
type advRig struct {
	env  *apitest.Env
	org  uuid.UUID
	key  string
	c    *api.Client
	camp uuid.UUID
}

func newAdvRig(t *testing.T, opts ...apitest.Option) advRig {
	t.Helper()
	env := apitest.New(t, opts...)
	boot := env.Bootstrap(t, "acme")
	r := advRig{env: env, org: boot.OrganizationID, key: boot.APIKey, c: env.Client(t, boot.APIKey)}
	r.camp = r.campaign(t, api.CampaignCreate{Name: "Launch"}).ID
	return r
}

func (r advRig) campaign(t *testing.T, req api.CampaignCreate) *api.Campaign {
	t.Helper()
	out, err := r.c.CampaignsCreate(context.Background(), &req, api.CampaignsCreateParams{})
	require.NoError(t, err)
	return out
}

func (r advRig) advanced(t *testing.T, id uuid.UUID) *api.CampaignAdvancedSettings {
	t.Helper()
	out, err := r.c.CampaignsGetAdvanced(context.Background(), api.CampaignsGetAdvancedParams{ID: id})
	require.NoError(t, err)
	return out
}

func (r advRig) patchAdvanced(id uuid.UUID, s api.AdvancedOutreachSettings) error {
	return r.c.CampaignsUpdateAdvanced(context.Background(), &api.CampaignAdvancedUpdate{Settings: s}, api.CampaignsUpdateAdvancedParams{ID: id})
}

// rawPatchAdvanced sends a body the SDK would refuse to build and answers the status and the body.
func (r advRig) rawPatchAdvanced(t *testing.T, id uuid.UUID, body string) (int, string) {
	t.Helper()
	res := r.env.Do(t, http.MethodPatch, "/v1/campaigns/"+id.String()+"/advanced", r.key, strings.NewReader(body),
		http.Header{"Content-Type": {"application/json"}})
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(raw)
}

func TestCampaignAdvancedReadsEveryBlockWithItsDefaults(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	got := r.advanced(t, r.camp)
	require.Equal(t, r.camp, got.CampaignID)
	require.False(t, got.UpdatedAt.Set, "never set: no updated_at")
	o := got.Overrides
	bp := o.BouncePipeline.Value
	require.True(t, bp.Enabled.Value && bp.AutoSuppressOnBounce.Value && bp.AutoSuppressOnComplaint.Value &&
		bp.AutoSuppressOnUnsubscribe.Value && bp.AutoPauseCampaignOnSpike.Value)
	require.Equal(t, 0.05, bp.PauseBounceRateThreshold.Value)
	require.Equal(t, 0.003, bp.PauseComplaintRateThreshold.Value)
	require.Equal(t, api.AdvancedOutreachSettingsTaskReliability{Enabled: api.NewOptBool(true), DlqEnabled: api.NewOptBool(true),
		MaxAttempts: api.NewOptInt(5), ExecutionWindowSeconds: api.NewOptInt(3600)}, o.TaskReliability.Value)
	require.Equal(t, api.AdvancedOutreachSettingsAbTestingDefaultWinningRuleReplyRate, o.AbTesting.Value.DefaultWinningRule.Value)
	require.Equal(t, 100, o.AbTesting.Value.MinSampleSize.Value)
	ri := o.ReplyIntent.Value
	require.Equal(t, []string{}, ri.PositiveKeywords)
	require.Equal(t, []api.AdvancedOutreachSettingsReplyIntentCrmTaskIntentsItem{"positive", "question"}, ri.CrmTaskIntents.Value)
	require.True(t, ri.HoldOnOutOfOffice.Value)
	require.Equal(t, 7, ri.OutOfOfficeHoldDays.Value)
	st := o.SendTimeOptimization.Value
	require.False(t, st.Enabled.Value)
	require.Equal(t, "", st.DefaultContactTimezone.Value)
	require.Equal(t, []int{}, st.PreferredHours)
	require.Equal(t, 1.0, st.WeekendWeightMultiplier.Value)
	require.True(t, o.Preflight.Value.CheckContentScore.Value)
	require.Equal(t, 60, o.Preflight.Value.MinContentScore.Value)
	require.True(t, o.Dashboard.Value.ShowDlqStats.Value)
	require.Equal(t, api.AdvancedOutreachSettingsUnsubscribeModeOff, o.Unsubscribe.Value.Mode.Value)
	require.Equal(t, "Unsubscribe", o.Unsubscribe.Value.LinkText.Value)

	_, err := r.c.CampaignsGetAdvanced(context.Background(), api.CampaignsGetAdvancedParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}

func TestCampaignAdvancedPatchReplacesEachSentBlockWholeAndKeepsTheOthers(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	require.NoError(t, r.patchAdvanced(r.camp, api.AdvancedOutreachSettings{
		TaskReliability: api.NewOptAdvancedOutreachSettingsTaskReliability(api.AdvancedOutreachSettingsTaskReliability{
			DlqEnabled: api.NewOptBool(false), MaxAttempts: api.NewOptInt(3), ExecutionWindowSeconds: api.NewOptInt(600)}),
		ReplyIntent: api.NewOptAdvancedOutreachSettingsReplyIntent(api.AdvancedOutreachSettingsReplyIntent{
			PositiveKeywords:    []string{" Interested ", "INTERESTED", "book a call"},
			CrmTaskIntents:      api.OptNilAdvancedOutreachSettingsReplyIntentCrmTaskIntentsItemArray{Set: true, Null: true},
			OutOfOfficeHoldDays: api.NewOptInt(14)}),
		SendTimeOptimization: api.NewOptAdvancedOutreachSettingsSendTimeOptimization(api.AdvancedOutreachSettingsSendTimeOptimization{
			Enabled: api.NewOptBool(true), DefaultContactTimezone: api.NewOptString("Europe/Berlin"), PreferredHours: []int{15, 9, 10}}),
	}))
	got := r.advanced(t, r.camp)
	require.True(t, got.UpdatedAt.Set)
	tr := got.Overrides.TaskReliability.Value
	require.Equal(t, 3, tr.MaxAttempts.Value)
	require.False(t, tr.DlqEnabled.Value)
	require.True(t, tr.Enabled.Value, "a field not sent in a sent block takes its default")
	ri := got.Overrides.ReplyIntent.Value
	require.Equal(t, []string{"Interested", "book a call"}, ri.PositiveKeywords, "keywords are trimmed, repeats dropped ignoring case")
	require.Equal(t, []api.AdvancedOutreachSettingsReplyIntentCrmTaskIntentsItem{}, ri.CrmTaskIntents.Value, "null intents are none")
	require.Equal(t, 14, ri.OutOfOfficeHoldDays.Value)
	require.Equal(t, []int{9, 10, 15}, got.Overrides.SendTimeOptimization.Value.PreferredHours)
	require.Equal(t, "Europe/Berlin", got.Overrides.SendTimeOptimization.Value.DefaultContactTimezone.Value)

	// A second PATCH of task_reliability replaces the block: max_attempts goes back to its default, and the
	// blocks it does not send keep what the first one stored.
	require.NoError(t, r.patchAdvanced(r.camp, api.AdvancedOutreachSettings{
		TaskReliability: api.NewOptAdvancedOutreachSettingsTaskReliability(api.AdvancedOutreachSettingsTaskReliability{
			ExecutionWindowSeconds: api.NewOptInt(120)}),
		Unsubscribe: api.NewOptAdvancedOutreachSettingsUnsubscribe(api.AdvancedOutreachSettingsUnsubscribe{
			Mode:     api.NewOptAdvancedOutreachSettingsUnsubscribeMode(api.AdvancedOutreachSettingsUnsubscribeModeLink),
			LinkText: api.NewOptString("Opt out")}),
	}))
	again := r.advanced(t, r.camp)
	require.Equal(t, api.AdvancedOutreachSettingsTaskReliability{Enabled: api.NewOptBool(true), DlqEnabled: api.NewOptBool(true),
		MaxAttempts: api.NewOptInt(5), ExecutionWindowSeconds: api.NewOptInt(120)}, again.Overrides.TaskReliability.Value)
	require.Equal(t, got.Overrides.ReplyIntent, again.Overrides.ReplyIntent)
	require.Equal(t, got.Overrides.SendTimeOptimization, again.Overrides.SendTimeOptimization)
	require.Equal(t, "Not interested?", again.Overrides.Unsubscribe.Value.LinkIntro.Value)
	require.Equal(t, "Opt out", again.Overrides.Unsubscribe.Value.LinkText.Value)

	// Each change raised campaign.updated and left an audit entry; an empty settings object changes nothing.
	require.NoError(t, r.patchAdvanced(r.camp, api.AdvancedOutreachSettings{}))
	require.Equal(t, again.UpdatedAt, r.advanced(t, r.camp).UpdatedAt)
	require.Equal(t, int64(2), orgInt(t, r.env, r.org, `SELECT count(*) FROM event_outbox WHERE organization_id = $1 AND event_type = 'campaign.updated'`, r.org))
	require.Equal(t, int64(2), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE organization_id = $1 AND event = 'campaign.updated'
		AND target_id = $2 AND metadata->'fields' = '["advanced"]'`, r.org, r.camp.String()))

	requireAPIError(t, r.patchAdvanced(uuid.New(), api.AdvancedOutreachSettings{}), http.StatusNotFound, "campaign_not_found")
}

func TestCampaignAdvancedRefusesEachBrokenRuleByName(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	before := r.advanced(t, r.camp)
	// Rules the schema cannot state: the server names the field in the code.
	for code, s := range map[string]api.AdvancedOutreachSettings{
		"invalid_positive_keywords": {ReplyIntent: api.NewOptAdvancedOutreachSettingsReplyIntent(api.AdvancedOutreachSettingsReplyIntent{
			PositiveKeywords: []string{"yes", "   "}})},
		"invalid_question_keywords": {ReplyIntent: api.NewOptAdvancedOutreachSettingsReplyIntent(api.AdvancedOutreachSettingsReplyIntent{
			QuestionKeywords: []string{"how\nmuch"}})},
		"invalid_default_contact_timezone": {SendTimeOptimization: api.NewOptAdvancedOutreachSettingsSendTimeOptimization(
			api.AdvancedOutreachSettingsSendTimeOptimization{DefaultContactTimezone: api.NewOptString("Mars/Base")})},
		"invalid_unsubscribe_text": {Unsubscribe: api.NewOptAdvancedOutreachSettingsUnsubscribe(api.AdvancedOutreachSettingsUnsubscribe{
			Mode: api.NewOptAdvancedOutreachSettingsUnsubscribeMode(api.AdvancedOutreachSettingsUnsubscribeModeText), Text: api.NewOptString(" ")})},
		"invalid_unsubscribe_link_text": {Unsubscribe: api.NewOptAdvancedOutreachSettingsUnsubscribe(api.AdvancedOutreachSettingsUnsubscribe{
			Mode: api.NewOptAdvancedOutreachSettingsUnsubscribeMode(api.AdvancedOutreachSettingsUnsubscribeModeLink), LinkText: api.NewOptString("")})},
	} {
		requireAPIError(t, r.patchAdvanced(r.camp, s), http.StatusBadRequest, code)
	}
	// Rules the schema states: what the SDK would refuse to send, the server refuses with the field named.
	for body, want := range map[string]string{
		`{"settings":{"bounce_pipeline":{"pause_bounce_rate_threshold":5}}}`:                                "settings.bounce_pipeline.pause_bounce_rate_threshold",
		`{"settings":{"bounce_pipeline":{"pause_complaint_rate_threshold":-0.5}}}`:                          "settings.bounce_pipeline.pause_complaint_rate_threshold",
		`{"settings":{"task_reliability":{"max_attempts":11}}}`:                                             "settings.task_reliability.max_attempts",
		`{"settings":{"task_reliability":{"max_attempts":0}}}`:                                              "settings.task_reliability.max_attempts",
		`{"settings":{"task_reliability":{"execution_window_seconds":59}}}`:                                 "settings.task_reliability.execution_window_seconds",
		`{"settings":{"task_reliability":{"execution_window_seconds":86401}}}`:                              "settings.task_reliability.execution_window_seconds",
		`{"settings":{"ab_testing":{"default_winning_rule":"ctr"}}}`:                                        "default_winning_rule",
		`{"settings":{"ab_testing":{"min_sample_size":9}}}`:                                                 "settings.ab_testing.min_sample_size",
		`{"settings":{"ab_testing":{"min_sample_size":100001}}}`:                                            "settings.ab_testing.min_sample_size",
		`{"settings":{"reply_intent":{"negative_keywords":["` + strings.Repeat("n", 101) + `"]}}}`:          "settings.reply_intent.negative_keywords",
		`{"settings":{"reply_intent":{"out_of_office_keywords":[` + strings.Repeat(`"x",`, 100) + `"y"]}}}`: "settings.reply_intent.out_of_office_keywords",
		`{"settings":{"reply_intent":{"crm_task_intents":["angry"]}}}`:                                      "crm_task_intents",
		`{"settings":{"reply_intent":{"crm_task_intents":["positive","positive"]}}}`:                        "settings.reply_intent.crm_task_intents",
		`{"settings":{"reply_intent":{"out_of_office_hold_days":0}}}`:                                       "settings.reply_intent.out_of_office_hold_days",
		`{"settings":{"reply_intent":{"out_of_office_hold_days":91}}}`:                                      "settings.reply_intent.out_of_office_hold_days",
		`{"settings":{"send_time_optimization":{"preferred_hours":[24]}}}`:                                  "settings.send_time_optimization.preferred_hours",
		`{"settings":{"send_time_optimization":{"preferred_hours":[9,9]}}}`:                                 "settings.send_time_optimization.preferred_hours",
		`{"settings":{"send_time_optimization":{"weekend_weight_multiplier":10.5}}}`:                        "settings.send_time_optimization.weekend_weight_multiplier",
		`{"settings":{"preflight":{"min_content_score":101}}}`:                                              "settings.preflight.min_content_score",
		`{"settings":{"unsubscribe":{"mode":"footer"}}}`:                                                    "mode",
		`{"settings":{"unsubscribe":{"text":"` + strings.Repeat("t", 301) + `"}}}`:                          "settings.unsubscribe.text",
	} {
		status, answer := r.rawPatchAdvanced(t, r.camp, body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, answer, want, body)
	}
	// Nothing was stored by any of them.
	require.Equal(t, before, r.advanced(t, r.camp))
}

func TestCampaignAdvancedPatchNeedsManageSettingsOrTheWriteScope(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")
	camp, err := ada.client.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Launch"}, api.CampaignsCreateParams{})
	require.NoError(t, err)
	change := api.AdvancedOutreachSettings{Preflight: api.NewOptAdvancedOutreachSettingsPreflight(api.AdvancedOutreachSettingsPreflight{
		MinContentScore: api.NewOptInt(80)})}
	update := func(c *api.Client) error {
		return c.CampaignsUpdateAdvanced(ctx, &api.CampaignAdvancedUpdate{Settings: change}, api.CampaignsUpdateAdvancedParams{ID: camp.ID})
	}

	// A member manages campaigns but not settings: the campaign is theirs to edit, its advanced blocks are not.
	_, err = bob.client.CampaignsUpdate(ctx, &api.CampaignUpdate{Name: api.NewOptString("Relaunch")}, api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	_, err = bob.client.CampaignsGetAdvanced(ctx, api.CampaignsGetAdvancedParams{ID: camp.ID})
	require.NoError(t, err)
	requireAPIError(t, update(bob.client), http.StatusForbidden, "permission_denied")
	require.NoError(t, update(ada.client))

	// Keys need WRITE_CAMPAIGNS (manage_settings is a session permission).
	reader := env.Client(t, scopedKey(t, env, ada.home, auth.ReadCampaigns))
	requireAPIError(t, update(reader), http.StatusForbidden, "missing_scope")
	require.NoError(t, update(env.Client(t, scopedKey(t, env, ada.home, auth.ReadCampaigns|auth.WriteCampaigns))))
	got, err := reader.CampaignsGetAdvanced(ctx, api.CampaignsGetAdvancedParams{ID: camp.ID})
	require.NoError(t, err)
	require.Equal(t, 80, got.Overrides.Preflight.Value.MinContentScore.Value)
}

func TestCampaignCreateStoresAdvancedOverridesUnderTheSameRules(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	ctx := context.Background()
	c := r.campaign(t, api.CampaignCreate{Name: "With blocks", AdvancedOverrides: api.NewOptAdvancedOutreachSettings(api.AdvancedOutreachSettings{
		AbTesting: api.NewOptAdvancedOutreachSettingsAbTesting(api.AdvancedOutreachSettingsAbTesting{
			DefaultWinningRule: api.NewOptAdvancedOutreachSettingsAbTestingDefaultWinningRule(api.AdvancedOutreachSettingsAbTestingDefaultWinningRuleClickRate),
			AutoPromoteWinner:  api.NewOptBool(true), MinSampleSize: api.NewOptInt(250)}),
	})})
	got := r.advanced(t, c.ID)
	require.True(t, got.UpdatedAt.Set)
	require.Equal(t, api.AdvancedOutreachSettingsAbTesting{Enabled: api.NewOptBool(true),
		DefaultWinningRule: api.NewOptAdvancedOutreachSettingsAbTestingDefaultWinningRule(api.AdvancedOutreachSettingsAbTestingDefaultWinningRuleClickRate),
		AutoPromoteWinner:  api.NewOptBool(true), MinSampleSize: api.NewOptInt(250)}, got.Overrides.AbTesting.Value)
	require.Equal(t, r.advanced(t, r.camp).Overrides.TaskReliability, got.Overrides.TaskReliability, "blocks not sent are the defaults")
	require.Equal(t, int64(0), orgInt(t, r.env, r.org, `SELECT count(*) FROM event_outbox WHERE organization_id = $1 AND event_type = 'campaign.updated'`, r.org),
		"creating with blocks raises campaign.created only")

	// A broken block refuses the whole create: no campaign is left behind.
	_, err := r.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Broken", AdvancedOverrides: api.NewOptAdvancedOutreachSettings(api.AdvancedOutreachSettings{
		SendTimeOptimization: api.NewOptAdvancedOutreachSettingsSendTimeOptimization(api.AdvancedOutreachSettingsSendTimeOptimization{
			DefaultContactTimezone: api.NewOptString("Atlantis/Capital")}),
	})}, api.CampaignsCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_default_contact_timezone")
	list, err := r.c.CampaignsList(ctx, api.CampaignsListParams{})
	require.NoError(t, err)
	require.Equal(t, int64(2), list.Pagination.Total.Value)
}
