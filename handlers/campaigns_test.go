package handlers_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func campCreate(t testing.TB, c *api.Client, req api.CampaignCreate) *api.Campaign {
	t.Helper()
	out, err := c.CampaignsCreate(context.Background(), &req, api.CampaignsCreateParams{})
	require.NoError(t, err)
	return out
}

func campGet(t testing.TB, c *api.Client, id uuid.UUID) *api.Campaign {
	t.Helper()
	out, err := c.CampaignsGet(context.Background(), api.CampaignsGetParams{ID: id})
	require.NoError(t, err)
	return out
}

// campMailbox stores a mailbox row directly (connecting one through the API needs live SMTP and IMAP peers,
// which the mailbox tests cover) with the given daily cap and tags.
func campMailbox(t testing.TB, env *apitest.Env, org uuid.UUID, email string, limit int32, tags ...uuid.UUID) uuid.UUID {
	t.Helper()
	id := uuid.New()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := dbq.New().MailboxInsert(ctx, tx, dbq.MailboxInsertParams{OrganizationID: org, ID: id, Email: email,
			Provider: "smtp_imap", CampaignLimit: limit, SmtpHost: "smtp.example.com", SmtpPort: 587, SmtpUsername: email,
			SmtpSecurity: "starttls", SmtpPassword: []byte("sealed"), ImapHost: "imap.example.com", ImapPort: 993,
			ImapUsername: email, ImapSecurity: "tls", ImapPassword: []byte("sealed")})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE mailboxes SET tags = $3 WHERE organization_id = $1 AND id = $2", org, id, append([]uuid.UUID{}, tags...))
		return err
	}))
	return id
}

func readBody(t testing.TB, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(raw)
}

// outboxTypes lists the event types the organization's outbox holds, oldest first.
func outboxTypes(t testing.TB, env *apitest.Env, org uuid.UUID, prefix string) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT event_type FROM event_outbox WHERE organization_id = $1 AND event_type LIKE $2 || '%' ORDER BY created_at, id", org, prefix)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

func TestCampaignCreateAppliesTheSeedDefaultsAndStepRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)

	camp := campCreate(t, c, api.CampaignCreate{Name: "  Launch  "})
	require.Equal(t, "Launch", camp.Name)
	require.Equal(t, api.CampaignStatusDraft, camp.Status)
	require.Equal(t, api.CampaignKindSequence, camp.Kind.Value)
	require.Equal(t, api.CampaignSenderStrategyTags, camp.SenderStrategy.Value)
	require.Equal(t, api.CampaignRotationModeRoundRobin, camp.RotationMode.Value)
	require.Equal(t, "UTC", camp.Timezone.Value)
	require.Equal(t, 31, camp.Days.Value, "weekdays")
	require.Equal(t, 0, camp.EntryDelayMinutes.Value)
	require.False(t, camp.UtmTracking.Value, "link tagging is off by default")
	require.False(t, camp.Continuous.Value)
	require.True(t, camp.StartDate.Null)
	require.Equal(t, boot.OrganizationID, camp.OrganizationID.Value)
	require.Equal(t, []string{"campaign.created"}, outboxTypes(t, env, boot.OrganizationID, "campaign."))

	// text_only turns open and click tracking off whatever was asked; steps chain with the seed's defaults.
	tomorrow := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	camp = campCreate(t, c, api.CampaignCreate{Name: "Plain", TextOnly: api.NewOptBool(true), OpenTracking: api.NewOptBool(true),
		LinkTracking: api.NewOptBool(true), StartDate: api.NewOptNilDateTime(tomorrow), Cc: []string{"Boss <BOSS@Example.com>"},
		Steps: []api.CampaignStepCreate{
			{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("Hi")},
			{BodyPlain: api.NewOptString("Following up")},
			{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString("Same thread")},
			{Subject: api.NewOptString("A new topic"), BodyPlain: api.NewOptString("New"), WaitAfter: api.NewOptInt(7)},
			{Subject: api.NewOptString("Forced"), ThreadReply: api.NewOptBool(true)},
		}})
	require.False(t, camp.OpenTracking.Value)
	require.False(t, camp.LinkTracking.Value)
	require.Equal(t, []string{"boss@example.com"}, camp.Cc)
	require.True(t, camp.StartDate.Value.Equal(tomorrow))
	type shape struct {
		pos, wait int32
		thread    bool
	}
	var got []shape
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, boot.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		steps, err := dbq.New().CampaignStepsOf(ctx, tx, dbq.CampaignStepsOfParams{OrganizationID: boot.OrganizationID, CampaignID: camp.ID})
		for _, s := range steps {
			got = append(got, shape{s.Position, s.WaitAfter, s.ThreadReply})
		}
		return err
	}))
	require.Equal(t, []shape{{0, 0, false}, {1, 3, true}, {2, 3, true}, {3, 7, false}, {4, 3, true}}, got)
}

func TestCampaignCreateRefusesEachBrokenFieldRuleByName(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	small := campMailbox(t, env, boot.OrganizationID, "small@example.com", 30)
	yesterday := time.Now().Add(-48 * time.Hour)
	cases := map[string]struct {
		req  api.CampaignCreate
		code string
	}{
		"blank name":           {api.CampaignCreate{Name: "   "}, "invalid_name"},
		"daily limit zero":     {api.CampaignCreate{Name: "x", DailyLimit: api.NewOptInt(0)}, "invalid_daily_limit"},
		"cc not an address":    {api.CampaignCreate{Name: "x", Cc: []string{"nobody"}}, "invalid_cc"},
		"start in the past":    {api.CampaignCreate{Name: "x", StartDate: api.NewOptNilDateTime(yesterday)}, "invalid_start_date"},
		"end in the past":      {api.CampaignCreate{Name: "x", EndDate: api.NewOptNilDateTime(yesterday)}, "invalid_end_date"},
		"unknown timezone":     {api.CampaignCreate{Name: "x", Timezone: api.NewOptString("Mars/Base")}, "invalid_timezone"},
		"bad start time":       {api.CampaignCreate{Name: "x", StartTime: api.NewOptString("25:00")}, "invalid_start_time"},
		"end before start":     {api.CampaignCreate{Name: "x", StartTime: api.NewOptString("17:00"), EndTime: api.NewOptString("09:00")}, "invalid_end_time"},
		"six weekdays":         {api.CampaignCreate{Name: "x", ScheduleWindows: api.ScheduleWindows{{}, {}, {}, {}, {}, {}}}, "invalid_schedule_windows"},
		"tracking domain":      {api.CampaignCreate{Name: "x", TrackingDomain: api.NewOptString("not a host")}, "invalid_tracking_domain"},
		"order by custom only": {api.CampaignCreate{Name: "x", ContactOrderBy: api.NewOptString("custom_field")}, "invalid_contact_order_field"},
		"order by unknown":     {api.CampaignCreate{Name: "x", ContactOrderBy: api.NewOptString("mood")}, "invalid_contact_order_by"},
		"ramp above the cap": {api.CampaignCreate{Name: "x", RampEnabled: api.NewOptBool(true), RampCeiling: api.NewOptInt(60),
			SenderStrategy: api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit),
			Senders:        []api.CampaignSenderInput{{EmailAccountID: small}}}, "invalid_ramp_ceiling"},
		"ramp start above ceiling": {api.CampaignCreate{Name: "x", RampStart: api.NewOptInt(40), RampCeiling: api.NewOptInt(20)}, "invalid_ramp_start"},
		"one_time two emails": {api.CampaignCreate{Name: "x", Kind: api.NewOptCampaignCreateKind(api.CampaignCreateKindOneTime),
			Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("a")}, {Subject: api.NewOptString("b")}}}, "invalid_steps"},
		"unknown tag":     {api.CampaignCreate{Name: "x", EmailTagIds: []uuid.UUID{uuid.New()}}, "invalid_email_tag_ids"},
		"unknown folder":  {api.CampaignCreate{Name: "x", FolderIds: []uuid.UUID{uuid.New()}}, "invalid_folder_ids"},
		"unknown mailbox": {api.CampaignCreate{Name: "x", Senders: []api.CampaignSenderInput{{EmailAccountID: uuid.New()}}}, "invalid_senders"},
		"wait step without minutes": {api.CampaignCreate{Name: "x", Steps: []api.CampaignStepCreate{{
			Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindWait)}}}, "invalid_step"},
	}
	for name, tc := range cases {
		_, err := c.CampaignsCreate(ctx, &tc.req, api.CampaignsCreateParams{})
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
		require.NotEmpty(t, name)
	}
	// What the SDK would refuse to send is refused by the server with the field named.
	for body, field := range map[string]string{
		`{"name":"x","entry_delay_minutes":129601}`:                    "entry_delay_minutes",
		`{"name":"x","utm_source":"` + strings.Repeat("s", 129) + `"}`: "utm_source",
		`{"name":"x","rotation_mode":"random"}`:                        "rotation_mode",
		`{"name":"x","kind":"forever"}`:                                "kind",
	} {
		res := env.Do(t, http.MethodPost, "/v1/campaigns", boot.APIKey, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		require.Contains(t, readBody(t, res), field, body)
	}
	// Nothing was half-written: only valid campaigns exist.
	ov, err := c.CampaignsGetOverview(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, ov.Total)

	// A key without WRITE_CAMPAIGNS reads but cannot create.
	reader := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadCampaigns))
	_, err = reader.CampaignsCreate(ctx, &api.CampaignCreate{Name: "x"}, api.CampaignsCreateParams{})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
}

func TestCampaignListFiltersPagesAndCounts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	folder, err := c.LabelsCreateFolder(ctx, &api.CreateLabel{Title: "Q4"}, api.LabelsCreateFolderParams{})
	require.NoError(t, err)
	alpha := campCreate(t, c, api.CampaignCreate{Name: "Alpha outreach", FolderIds: []uuid.UUID{folder.ID}})
	beta := campCreate(t, c, api.CampaignCreate{Name: "Beta", Kind: api.NewOptCampaignCreateKind(api.CampaignCreateKindOneTime)})
	gamma := campCreate(t, c, api.CampaignCreate{Name: "Gamma outreach"})
	delta := campCreate(t, c, api.CampaignCreate{Name: "Delta 100%"})
	_, err = c.CampaignsUpdate(ctx, &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusPausedNoAccounts)}, api.CampaignsUpdateParams{ID: gamma.ID})
	require.NoError(t, err)
	_, err = c.CampaignsUpdate(ctx, &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusCompleted)}, api.CampaignsUpdateParams{ID: delta.ID})
	require.NoError(t, err)
	require.Equal(t, []string{folder.ID.String()}, alpha.Folders)

	ids := func(p api.CampaignsListParams) ([]uuid.UUID, int64) {
		page, err := c.CampaignsList(ctx, p)
		require.NoError(t, err)
		var out []uuid.UUID
		for _, x := range page.Data {
			out = append(out, x.ID)
		}
		return out, page.Pagination.Total.Value
	}
	all, total := ids(api.CampaignsListParams{})
	require.Equal(t, []uuid.UUID{delta.ID, gamma.ID, beta.ID, alpha.ID}, all, "newest first")
	require.EqualValues(t, 4, total)
	got, total := ids(api.CampaignsListParams{Q: api.NewOptString("OUTREACH")})
	require.Equal(t, []uuid.UUID{gamma.ID, alpha.ID}, got)
	require.EqualValues(t, 2, total)
	got, _ = ids(api.CampaignsListParams{Q: api.NewOptString("100%")})
	require.Equal(t, []uuid.UUID{delta.ID}, got, "LIKE wildcards in q match themselves")
	got, _ = ids(api.CampaignsListParams{Status: api.NewOptCampaignsListStatus(api.CampaignsListStatusPaused)})
	require.Equal(t, []uuid.UUID{gamma.ID}, got, "paused covers every paused variant")
	got, _ = ids(api.CampaignsListParams{Kind: api.NewOptCampaignsListKind(api.CampaignsListKindOneTime)})
	require.Equal(t, []uuid.UUID{beta.ID}, got)
	got, _ = ids(api.CampaignsListParams{Folder: api.NewOptString(folder.ID.String())})
	require.Equal(t, []uuid.UUID{alpha.ID}, got)

	// Keyset pages of two, the cursor being the last campaign id; total stays the filter's count.
	first, err := c.CampaignsList(ctx, api.CampaignsListParams{Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.True(t, first.Pagination.HasMore)
	require.Equal(t, gamma.ID.String(), first.Pagination.NextCursor.Value)
	cursor, err := uuid.Parse(first.Pagination.NextCursor.Value)
	require.NoError(t, err)
	second, err := c.CampaignsList(ctx, api.CampaignsListParams{Limit: api.NewOptInt(2), Cursor: api.NewOptUUID(cursor)})
	require.NoError(t, err)
	require.False(t, second.Pagination.HasMore)
	require.Equal(t, []uuid.UUID{beta.ID, alpha.ID}, []uuid.UUID{second.Data[0].ID, second.Data[1].ID})
	require.EqualValues(t, 4, second.Pagination.Total.Value)

	for _, q := range []string{"status=stopped", "kind=weekly", "limit=0", "folder=nope"} {
		res := env.Do(t, http.MethodGet, "/v1/campaigns?"+q, boot.APIKey, nil, nil)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, q)
	}

	ov, err := c.CampaignsGetOverview(ctx)
	require.NoError(t, err)
	require.Equal(t, api.CampaignOverview{Total: 4, Active: 0, Paused: 1, Draft: 2, Completed: 1, OneTime: 1,
		Folders: []api.CampaignOverviewFolder{{FolderID: folder.ID.String(), Total: 1}}}, *ov)

	// Another organization sees none of it.
	other := env.Bootstrap(t, "other")
	oc := env.Client(t, other.APIKey)
	_, err = oc.CampaignsGet(ctx, api.CampaignsGetParams{ID: alpha.ID})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
	page, err := oc.CampaignsList(ctx, api.CampaignsListParams{})
	require.NoError(t, err)
	require.Empty(t, page.Data)
}

func TestCampaignCreateWritesVariantsAndAdvancedBlocksInOneTransaction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ab := api.NewOptAdvancedOutreachSettings(api.AdvancedOutreachSettings{AbTesting: api.NewOptAdvancedOutreachSettingsAbTesting(
		api.AdvancedOutreachSettingsAbTesting{Enabled: api.NewOptBool(true), MinSampleSize: api.NewOptInt(250)})})
	camp := campCreate(t, c, api.CampaignCreate{Name: "Both", AdvancedOverrides: ab,
		Steps:    []api.CampaignStepCreate{{Subject: api.NewOptString("Hi")}},
		Variants: []api.CampaignABVariantCreate{{Name: "B", StepPosition: api.NewOptInt(0), Subject: api.NewOptString("Hey")}}})
	vs, err := c.CampaignsListAbVariants(ctx, api.CampaignsListAbVariantsParams{ID: camp.ID})
	require.NoError(t, err)
	require.Len(t, vs.Data, 1, "the variants were written")
	adv, err := c.CampaignsGetAdvanced(ctx, api.CampaignsGetAdvancedParams{ID: camp.ID})
	require.NoError(t, err)
	require.Equal(t, 250, adv.Overrides.AbTesting.Value.MinSampleSize.Value, "and so were the advanced blocks")

	// A broken variant refuses the whole create, advanced blocks included.
	_, err = c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Broken", AdvancedOverrides: ab,
		Variants: []api.CampaignABVariantCreate{{Name: "B", StepPosition: api.NewOptInt(3)}}}, api.CampaignsCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "step_not_found")
	ov, err := c.CampaignsGetOverview(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, ov.Total)
}
