package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/config"
)

func TestCampaignUpdateValidatesTheWholeCampaignAndClearsDates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	tomorrow := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	camp := campCreate(t, c, api.CampaignCreate{Name: "Launch", StartDate: api.NewOptNilDateTime(tomorrow),
		EndDate: api.NewOptNilDateTime(tomorrow.Add(48 * time.Hour)), TrackingDomain: api.NewOptString("track.example.com")})
	orgExec(t, env, boot.OrganizationID, "UPDATE campaigns SET tracking_domain_verified_at = now() WHERE id = $1", camp.ID)
	require.True(t, campGet(t, c, camp.ID).TrackingDomainVerified.Value)

	res, err := c.CampaignsUpdate(ctx, &api.CampaignUpdate{StartDate: api.OptNilDateTime{Set: true, Null: true},
		Description: api.NewOptString("Q4 push"), TrackingDomain: api.NewOptString("Click.Example.com."),
		ScheduleWindows: api.ScheduleWindows{{}, {{Start: api.NewOptInt(540), End: api.NewOptInt(720)}}, {}, {}, {}, {}, {}}}, api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	up := campaignUpdatedOK(t, res)
	require.True(t, up.StartDate.Null, "null clears start_date")
	require.True(t, up.EndDate.Value.Equal(tomorrow.Add(48*time.Hour)), "fields not sent keep their value")
	require.Equal(t, "Q4 push", up.Description.Value)
	require.Equal(t, "click.example.com", up.TrackingDomain.Value)
	require.False(t, up.TrackingDomainVerified.Value, "a new tracking domain must be verified again")
	require.Len(t, up.ScheduleWindows, 7)
	require.Equal(t, 540, up.ScheduleWindows[1][0].Start.Value)

	// The result is validated whole: an end before the stored start is refused, as is a window overlap.
	_, err = c.CampaignsUpdate(ctx, &api.CampaignUpdate{StartDate: api.NewOptNilDateTime(tomorrow.Add(72 * time.Hour))}, api.CampaignsUpdateParams{ID: camp.ID})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_end_date")
	_, err = c.CampaignsUpdate(ctx, &api.CampaignUpdate{ScheduleWindows: api.ScheduleWindows{{
		{Start: api.NewOptInt(60), End: api.NewOptInt(120)}, {Start: api.NewOptInt(100), End: api.NewOptInt(200)}}, {}, {}, {}, {}, {}, {}}}, api.CampaignsUpdateParams{ID: camp.ID})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_schedule_windows")
	_, err = c.CampaignsUpdate(ctx, &api.CampaignUpdate{Name: api.NewOptString("x")}, api.CampaignsUpdateParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")

	// A status sent is applied, stops queued sends and raises its lifecycle event.
	queued := uuid.New()
	orgExec(t, env, boot.OrganizationID, `INSERT INTO send_tasks (organization_id, id, kind, status, to_email, campaign_id)
		VALUES ($1, $2, 'campaign', 'queued', 'lead@example.com', $3)`, boot.OrganizationID, queued, camp.ID)
	_, err = c.CampaignsUpdate(ctx, &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusPaused)}, api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"campaign.created", "campaign.updated", "campaign.updated", "campaign.paused"},
		outboxTypes(t, env, boot.OrganizationID, "campaign."))
	require.EqualValues(t, 1, orgInt(t, env, boot.OrganizationID, "SELECT count(*) FROM campaign_logs WHERE campaign_id = $1 AND event_type = 'status_changed'", camp.ID))
	require.EqualValues(t, 1, orgInt(t, env, boot.OrganizationID, "SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'canceled' AND error_code = 'campaign_paused'", queued))
	require.EqualValues(t, 3, orgInt(t, env, boot.OrganizationID, "SELECT count(*) FROM audit_log WHERE target_type = 'campaign' AND target_id = $1", camp.ID.String()))
}

func TestCampaignDuplicateCopiesTheSettingsAndLeavesOutProgress(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	folder, err := c.LabelsCreateFolder(ctx, &api.CreateLabel{Title: "Q4"}, api.LabelsCreateFolderParams{})
	require.NoError(t, err)
	box := campMailbox(t, env, org, "sender@example.com", 50)
	src := campCreate(t, c, api.CampaignCreate{Name: "Launch", FolderIds: []uuid.UUID{folder.ID}, DailyLimit: api.NewOptInt(80),
		SenderStrategy: api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit),
		Senders:        []api.CampaignSenderInput{{EmailAccountID: box, Weight: api.NewOptInt(3)}},
		Steps:          []api.CampaignStepCreate{{Subject: api.NewOptString("Hi")}, {BodyPlain: api.NewOptString("Again")}}})
	contact := createContacts(t, c, api.ContactCreate{Email: "lead@example.com", Campaigns: []uuid.UUID{src.ID}})[0]
	require.NotEmpty(t, contact.ID)
	// Progress the copy must not take: a ramp level, an auto-pause reason, a start date already past, a log entry.
	orgExec(t, env, org, `UPDATE campaigns SET ramp_level = 4, paused_reason = 'bounce spike', start_date = now() - interval '3 days',
		status = 'active' WHERE id = $1`, src.ID)
	orgExec(t, env, org, "INSERT INTO campaign_logs (organization_id, campaign_id, id, event_type) VALUES ($1, $2, $3, 'sent')", org, src.ID, uuid.New())

	// A variant and a file of the second step, and a file of the whole campaign.
	srcSteps := stepIDs(t, env, org, src.ID)
	_, err = c.CampaignsCreateAbVariant(ctx, &api.CampaignABVariantCreate{Name: "B", StepID: api.NewOptUUID(srcSteps[1]),
		BodyPlain: api.NewOptString("Again, shorter")}, api.CampaignsCreateAbVariantParams{ID: src.ID})
	require.NoError(t, err)
	for _, step := range []any{nil, srcSteps[1]} {
		orgExec(t, env, org, `INSERT INTO campaign_attachments (organization_id, campaign_id, id, step_id, filename, mime_type, size, sha256, content)
			VALUES ($1, $2, $3, $4, 'a.pdf', 'application/pdf', 3, sha256('pdf'), 'pdf')`, org, src.ID, uuid.New(), step)
	}

	cp, err := c.CampaignsDuplicate(ctx, api.OptCampaignDuplicateRequest{}, api.CampaignsDuplicateParams{ID: src.ID})
	require.NoError(t, err)
	cpSteps := stepIDs(t, env, org, cp.ID)
	require.Len(t, cpSteps, 2)
	require.NotEqual(t, srcSteps[1], cpSteps[1], "the copy's steps are its own")
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM campaign_variants WHERE campaign_id = $1 AND step_id = $2", cp.ID, cpSteps[1]),
		"a step's variant follows its step into the copy")
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM campaign_attachments WHERE campaign_id = $1 AND step_id = $2", cp.ID, cpSteps[1]))
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM campaign_attachments WHERE campaign_id = $1 AND step_id IS NULL", cp.ID))
	require.Equal(t, "Launch (copy)", cp.Name)
	require.Equal(t, api.CampaignStatusDraft, cp.Status)
	require.Equal(t, 80, cp.DailyLimit.Value)
	require.Equal(t, []string{folder.ID.String()}, cp.Folders)
	require.Equal(t, 0, cp.RampLevel.Value)
	require.True(t, cp.StartDate.Null, "a past start date is not copied")
	require.EqualValues(t, 2, orgInt(t, env, org, "SELECT count(*) FROM campaign_steps WHERE campaign_id = $1", cp.ID))
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM campaign_mailboxes WHERE campaign_id = $1 AND weight = 3", cp.ID))
	require.EqualValues(t, 0, orgInt(t, env, org, "SELECT count(*) FROM campaign_leads WHERE campaign_id = $1", cp.ID))
	require.EqualValues(t, 0, orgInt(t, env, org, "SELECT count(*) FROM campaign_logs WHERE campaign_id = $1", cp.ID))
	require.EqualValues(t, 0, orgInt(t, env, org, "SELECT count(*) FROM campaigns WHERE id = $1 AND paused_reason <> ''", cp.ID))

	named, err := c.CampaignsDuplicate(ctx, api.NewOptCampaignDuplicateRequest(api.CampaignDuplicateRequest{Name: api.NewOptString("Launch B")}),
		api.CampaignsDuplicateParams{ID: src.ID})
	require.NoError(t, err)
	require.Equal(t, "Launch B", named.Name)
	res := env.Do(t, http.MethodPost, "/v1/campaigns/"+src.ID.String()+"/duplicate", boot.APIKey, strings.NewReader(`{"name":"ab"}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "a copy's name is 3 to 50 characters")
	_, err = c.CampaignsDuplicate(ctx, api.OptCampaignDuplicateRequest{}, api.CampaignsDuplicateParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}

func TestCampaignCreationIsThrottledPerDayIncludingDuplicates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.DailyCampaigns = 2 })
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	first := campCreate(t, c, api.CampaignCreate{Name: "One"})
	_, err := c.CampaignsDuplicate(ctx, api.OptCampaignDuplicateRequest{}, api.CampaignsDuplicateParams{ID: first.ID})
	require.NoError(t, err)
	_, err = c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Three"}, api.CampaignsCreateParams{})
	requireAPIError(t, err, http.StatusTooManyRequests, "campaign_daily_limit")
	_, err = c.CampaignsDuplicate(ctx, api.OptCampaignDuplicateRequest{}, api.CampaignsDuplicateParams{ID: first.ID})
	requireAPIError(t, err, http.StatusTooManyRequests, "campaign_daily_limit")
	// Deleting does not give a slot back; another organization has its own count.
	require.NoError(t, c.CampaignsDelete(ctx, api.CampaignsDeleteParams{ID: first.ID}))
	_, err = c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Four"}, api.CampaignsCreateParams{})
	requireAPIError(t, err, http.StatusTooManyRequests, "campaign_daily_limit")
	other := env.Client(t, env.Bootstrap(t, "other").APIKey)
	campCreate(t, other, api.CampaignCreate{Name: "Theirs"})
}

func TestCampaignDeleteCancelsQueuedSendsAndKeepsWhatWasSent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	camp := campCreate(t, c, api.CampaignCreate{Name: "Doomed", Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("Hi")}}})
	contact := createContacts(t, c, api.ContactCreate{Email: "lead@example.com", Campaigns: []uuid.UUID{camp.ID}})[0]
	queued, sent, deal := uuid.New(), uuid.New(), uuid.New()
	for id, status := range map[uuid.UUID]string{queued: "queued", sent: "sent"} {
		orgExec(t, env, org, `INSERT INTO send_tasks (organization_id, id, kind, status, to_email, campaign_id, contact_id)
			VALUES ($1, $2, 'campaign', $3, 'lead@example.com', $4, $5)`, org, id, status, camp.ID, contact.ID)
	}
	orgExec(t, env, org, `INSERT INTO deals (organization_id, id, pipeline_id, stage_id, name, campaign_id) VALUES ($1, $2, $3, $3, 'Deal', $4)`,
		org, deal, uuid.New(), camp.ID)
	// Its statistics: a day of the campaign and of the organization.
	orgExec(t, env, org, `INSERT INTO analytics_campaign_days (organization_id, campaign_id, day, sent) VALUES ($1, $2, current_date, 1)`, org, camp.ID)
	orgExec(t, env, org, `INSERT INTO analytics_org_days (organization_id, day, kind, sent) VALUES ($1, current_date, 'campaign', 1)`, org)

	require.NoError(t, c.CampaignsDelete(ctx, api.CampaignsDeleteParams{ID: camp.ID}))
	_, err := c.CampaignsGet(ctx, api.CampaignsGetParams{ID: camp.ID})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'canceled' AND error_code = 'campaign_deleted'", queued))
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'sent'", sent))
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM deals WHERE id = $1 AND campaign_id IS NULL", deal))
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM contacts WHERE id = $1 AND campaign_count = 0", contact.ID))
	require.EqualValues(t, 0, orgInt(t, env, org, "SELECT count(*) FROM campaign_steps WHERE campaign_id = $1", camp.ID))
	require.EqualValues(t, 0, orgInt(t, env, org, "SELECT count(*) FROM analytics_campaign_days WHERE campaign_id = $1", camp.ID),
		"its statistics go with it")
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM analytics_org_days"), "the organization's days keep its sends")
	require.Equal(t, "campaign.deleted", outboxTypes(t, env, org, "campaign.")[1])
	require.Error(t, c.CampaignsDelete(ctx, api.CampaignsDeleteParams{ID: camp.ID}), "a second delete is a 404")
}

func TestCampaignStartNeedsLeadsUnlessContinuousAndStopPauses(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Owner(t, "acme")
	step := []api.CampaignStepCreate{{Subject: api.NewOptString("Hi"), BodyPlain: api.NewOptString("Hello")}}
	// No mailbox yet: a campaign with leads cannot start, whatever else is right.
	blocked := campCreate(t, c, api.CampaignCreate{Name: "Nobody sends", Continuous: api.NewOptBool(true), Steps: step})
	_, err := c.CampaignsStart(ctx, api.CampaignsStartParams{ID: blocked.ID})
	requireAPIError(t, err, http.StatusBadRequest, "campaign_invalid")
	require.Equal(t, api.CampaignStatusDraft, campGet(t, c, blocked.ID).Status, "a refused start changes nothing")
	campMailbox(t, env, org, "sender@example.com", 50)
	for name, steps := range map[string][]api.CampaignStepCreate{
		"an unresolvable variable": {{Subject: api.NewOptString("Hi {{.Frist_name}}"), BodyPlain: api.NewOptString("Hello")}},
	} {
		bad := campCreate(t, c, api.CampaignCreate{Name: "Bad", Continuous: api.NewOptBool(true), Steps: steps})
		_, err := c.CampaignsStart(ctx, api.CampaignsStartParams{ID: bad.ID})
		requireAPIError(t, err, http.StatusBadRequest, "campaign_invalid")
		require.NotEmpty(t, name)
	}
	empty := campCreate(t, c, api.CampaignCreate{Name: "Empty", Steps: step})
	_, err = c.CampaignsStart(ctx, api.CampaignsStartParams{ID: empty.ID})
	requireAPIError(t, err, http.StatusBadRequest, "no_leads")
	require.Equal(t, api.CampaignStatusDraft, campGet(t, c, empty.ID).Status)

	always := campCreate(t, c, api.CampaignCreate{Name: "Inbound", Continuous: api.NewOptBool(true), Steps: step})
	res, err := c.CampaignsStart(ctx, api.CampaignsStartParams{ID: always.ID})
	require.NoError(t, err)
	require.Equal(t, "started", res.Status.Value)
	require.Equal(t, api.CampaignStatusActive, campGet(t, c, always.ID).Status)

	noSteps := campCreate(t, c, api.CampaignCreate{Name: "Blank", Continuous: api.NewOptBool(true)})
	_, err = c.CampaignsStart(ctx, api.CampaignsStartParams{ID: noSteps.ID})
	requireAPIError(t, err, http.StatusBadRequest, "no_steps")

	withLead := campCreate(t, c, api.CampaignCreate{Name: "Leads", Steps: step})
	createContacts(t, c, api.ContactCreate{Email: "lead@example.com", Campaigns: []uuid.UUID{withLead.ID}})
	_, err = c.CampaignsStart(ctx, api.CampaignsStartParams{ID: withLead.ID})
	require.NoError(t, err)
	require.EqualValues(t, 1, orgInt(t, env, org, "SELECT count(*) FROM campaign_leads WHERE campaign_id = $1 AND due_at IS NOT NULL", withLead.ID),
		"starting makes waiting leads due")

	stopped, err := c.CampaignsStop(ctx, api.CampaignsStopParams{ID: withLead.ID})
	require.NoError(t, err)
	require.Equal(t, "stopped", stopped.Status.Value)
	require.Equal(t, api.CampaignStatusPaused, campGet(t, c, withLead.ID).Status)
	_, err = c.CampaignsStop(ctx, api.CampaignsStopParams{ID: withLead.ID})
	requireAPIError(t, err, http.StatusBadRequest, "campaign_not_active")

	// A campaign whose leads all finished turns continuous when started again, and waits.
	orgExec(t, env, org, "UPDATE campaign_leads SET state = 'completed' WHERE campaign_id = $1", withLead.ID)
	_, err = c.CampaignsStart(ctx, api.CampaignsStartParams{ID: withLead.ID})
	require.NoError(t, err)
	again := campGet(t, c, withLead.ID)
	require.True(t, again.Continuous.Value)
	require.False(t, again.IdleSince.Null)
	require.Contains(t, outboxTypes(t, env, org, "campaign.started"), "campaign.started")
}
