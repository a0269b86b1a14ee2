package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// leads adds contacts with the given addresses to campaign as pending leads and answers their ids in order.
func (r advRig) leads(t *testing.T, camp uuid.UUID, emails ...string) []uuid.UUID {
	t.Helper()
	in := make([]api.ContactCreate, len(emails))
	for i, e := range emails {
		in[i] = api.ContactCreate{Email: e}
		if camp != uuid.Nil {
			in[i].Campaigns = []uuid.UUID{camp}
		}
	}
	res, err := r.c.ContactsCreate(context.Background(), in, api.ContactsCreateParams{})
	require.NoError(t, err)
	out := createdOK(t, res)
	ids := make([]uuid.UUID, len(out))
	for i, c := range out {
		ids[i] = c.ID
	}
	return ids
}

// leadTiming reads a lead's state, due time and wait reason as the engine sees them.
func (r advRig) leadTiming(t *testing.T, camp, contact uuid.UUID) (state string, due *time.Time, why string) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT state, due_at, wait_reason FROM campaign_leads WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`,
			r.org, camp, contact).Scan(&state, &due, &why)
	}))
	return state, due, why
}

func (r advRig) pause(camp, contact uuid.UUID, req *api.CampaignLeadPauseRequest) (*api.CampaignLeadHoldResult, error) {
	body := api.OptCampaignLeadPauseRequest{}
	if req != nil {
		body = api.NewOptCampaignLeadPauseRequest(*req)
	}
	return r.c.CampaignsPauseLead(context.Background(), body, api.CampaignsPauseLeadParams{ID: camp, ContactId: contact})
}

func (r advRig) hold(t *testing.T, camp, contact uuid.UUID) api.NilCampaignLeadHold {
	t.Helper()
	out, err := r.c.CampaignsGetLeadHold(context.Background(), api.CampaignsGetLeadHoldParams{ID: camp, ContactId: contact})
	require.NoError(t, err)
	require.Equal(t, camp, out.CampaignID)
	require.Equal(t, contact, out.ContactID)
	return out.Hold
}

func TestCampaignLeadPauseHoldsTheLeadAndResumeContinuesIt(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	ctx := context.Background()
	campMailbox(t, r.env, r.org, "sender@example.com", 50)
	camp := r.campaign(t, api.CampaignCreate{Name: "Sequence", Steps: []api.CampaignStepCreate{{Subject: api.NewOptString("Hello"),
		BodyPlain: api.NewOptString("Hi there")}}}).ID
	ids := r.leads(t, camp, "ada@example.com", "bob@example.com", "cy@example.com")
	ada, bob, cy := ids[0], ids[1], ids[2]
	require.True(t, r.hold(t, camp, ada).Null, "not held: hold is null")

	// A hold with an end: the lead reports paused, keeps its state and is due again when the hold ends.
	start := time.Now()
	until := start.Add(48 * time.Hour).UTC().Truncate(time.Second)
	res, err := r.pause(camp, ada, &api.CampaignLeadPauseRequest{Until: api.NewOptNilDateTime(until), Reason: api.NewOptString("  On parental leave ")})
	require.NoError(t, err)
	h := res.Hold.Value
	require.False(t, res.Hold.Null)
	require.WithinRange(t, h.Since, start.Add(-time.Second), time.Now().Add(time.Second))
	require.True(t, until.Equal(h.Until.Value))
	require.Equal(t, "On parental leave", h.Reason.Value)
	require.Equal(t, api.CampaignLeadHoldSourceManual, h.Source)
	require.Equal(t, res.Hold, r.hold(t, camp, ada))
	state, due, why := r.leadTiming(t, camp, ada)
	require.Equal(t, "pending", state, "the lead keeps its state, so a resume continues it")
	require.True(t, until.Equal(*due))
	require.Equal(t, "Held by hand until "+until.Format(time.RFC3339)+".", why)
	paused := searchContacts(t, r.c, api.ContactSearchRequest{CampaignIds: []string{camp.String()}, LeadStatus: api.NewOptString("paused")}, api.ContactsSearchParams{})
	require.Equal(t, []string{"ada@example.com"}, contactEmails(paused.Data), "the status shown on contacts is paused")
	require.Equal(t, api.ContactCampaignProgressStatusPaused, paused.Data[0].CampaignLead.Value.Status)
	require.Equal(t, "On parental leave", paused.Data[0].CampaignLead.Value.Hold.Value.Reason.Value)

	// An open hold (no body) waits with no due time, and starting the campaign does not make it due.
	res, err = r.pause(camp, bob, nil)
	require.NoError(t, err)
	require.True(t, res.Hold.Value.Until.Null, "until resumed")
	_, err = r.env.Owner(t, "acme").CampaignsStart(ctx, api.CampaignsStartParams{ID: camp})
	require.NoError(t, err)
	_, due, why = r.leadTiming(t, camp, bob)
	require.Nil(t, due)
	require.Equal(t, "Held by hand until resumed.", why)
	_, due, _ = r.leadTiming(t, camp, ada)
	require.True(t, until.Equal(*due), "a start reschedules waiting leads, not held ones")
	_, due, _ = r.leadTiming(t, camp, cy)
	require.NotNil(t, due, "the lead that is not held is due")

	// Resume lifts the hold and makes the lead due now; resuming a lead that is not held changes nothing.
	before := time.Now()
	out, err := r.c.CampaignsResumeLead(ctx, api.CampaignsResumeLeadParams{ID: camp, ContactId: bob})
	require.NoError(t, err)
	require.True(t, out.Hold.Null)
	require.True(t, r.hold(t, camp, bob).Null)
	state, due, why = r.leadTiming(t, camp, bob)
	require.Equal(t, "pending", state)
	require.WithinRange(t, *due, before.Add(-time.Second), time.Now().Add(time.Second))
	require.Empty(t, why)
	out, err = r.c.CampaignsResumeLead(ctx, api.CampaignsResumeLeadParams{ID: camp, ContactId: cy})
	require.NoError(t, err)
	require.True(t, out.Hold.Null)

	// The activity log and the audit log name each change, newest first.
	logs, err := r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: camp})
	require.NoError(t, err)
	var types []string
	for _, l := range logs.Data {
		types = append(types, l.EventType)
	}
	require.Equal(t, []string{"lead_resumed", "status_changed", "lead_paused", "lead_paused"}, types)
	require.Equal(t, `"`+bob.String()+`"`, string(logs.Data[0].Metadata.Value["contact_id"]))
	require.Contains(t, logs.Data[3].Message.Value, "On parental leave")
	require.Equal(t, int64(2), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE organization_id = $1 AND event = 'campaign.lead_paused' AND target_id = $2`, r.org, camp.String()))
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE organization_id = $1 AND event = 'campaign.lead_resumed' AND target_id = $2`, r.org, camp.String()))

	// A new pause replaces the hold: ada's dated hold becomes an open one.
	res, err = r.pause(camp, ada, &api.CampaignLeadPauseRequest{Until: api.OptNilDateTime{Set: true, Null: true}})
	require.NoError(t, err)
	require.True(t, res.Hold.Value.Until.Null)
	require.Empty(t, res.Hold.Value.Reason.Value)
	require.False(t, res.Hold.Value.Since.Before(h.Since), "the new hold starts now")
}

func TestCampaignLeadHoldRefusesBadInputAndLeadsItDoesNotKnow(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	ctx := context.Background()
	ids := r.leads(t, r.camp, "ada@example.com")
	ada, stranger := ids[0], r.leads(t, uuid.Nil, "zed@example.com")[0]

	_, err := r.pause(r.camp, ada, &api.CampaignLeadPauseRequest{Until: api.NewOptNilDateTime(time.Now().Add(-time.Minute))})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_until")
	_, err = r.pause(r.camp, ada, &api.CampaignLeadPauseRequest{Reason: api.NewOptString("two\nlines")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_reason")
	res := r.env.Do(t, http.MethodPost, "/v1/campaigns/"+r.camp.String()+"/leads/"+ada.String()+"/pause", r.key,
		strings.NewReader(`{"reason":"`+strings.Repeat("r", 201)+`"}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.NoError(t, res.Body.Close())
	require.True(t, r.hold(t, r.camp, ada).Null, "nothing was held by a refused pause")

	// A contact that is not a lead, an unknown campaign and another organization's lead all answer alike.
	other := r.env.Bootstrap(t, "globex")
	oc := r.env.Client(t, other.APIKey)
	theirCamp, err := oc.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Theirs"}, api.CampaignsCreateParams{})
	require.NoError(t, err)
	created, err := oc.ContactsCreate(ctx, []api.ContactCreate{{Email: "eve@example.com", Campaigns: []uuid.UUID{theirCamp.ID}}}, api.ContactsCreateParams{})
	require.NoError(t, err)
	theirs := createdOK(t, created)
	for _, p := range []struct{ camp, contact uuid.UUID }{{r.camp, stranger}, {uuid.New(), ada}, {theirCamp.ID, theirs[0].ID}, {r.camp, theirs[0].ID}} {
		_, err := r.c.CampaignsGetLeadHold(ctx, api.CampaignsGetLeadHoldParams{ID: p.camp, ContactId: p.contact})
		requireAPIError(t, err, http.StatusNotFound, "lead_not_found")
		_, err = r.pause(p.camp, p.contact, nil)
		requireAPIError(t, err, http.StatusNotFound, "lead_not_found")
		_, err = r.c.CampaignsResumeLead(ctx, api.CampaignsResumeLeadParams{ID: p.camp, ContactId: p.contact})
		requireAPIError(t, err, http.StatusNotFound, "lead_not_found")
	}
	got, err := oc.CampaignsGetLeadHold(ctx, api.CampaignsGetLeadHoldParams{ID: theirCamp.ID, ContactId: theirs[0].ID})
	require.NoError(t, err)
	require.True(t, got.Hold.Null, "the foreign probes changed nothing")

	// Reading needs READ_CAMPAIGNS, pausing and resuming WRITE_CAMPAIGNS.
	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err = reader.CampaignsGetLeadHold(ctx, api.CampaignsGetLeadHoldParams{ID: r.camp, ContactId: ada})
	require.NoError(t, err)
	_, err = reader.CampaignsPauseLead(ctx, api.OptCampaignLeadPauseRequest{}, api.CampaignsPauseLeadParams{ID: r.camp, ContactId: ada})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	_, err = reader.CampaignsResumeLead(ctx, api.CampaignsResumeLeadParams{ID: r.camp, ContactId: ada})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
}

func TestCampaignLogsPageNewestFirstByEntryID(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	ctx := context.Background()
	other := r.campaign(t, api.CampaignCreate{Name: "Other"}).ID
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		for i := range 5 {
			if err := campaign.Log(ctx, tx, r.org, r.camp, uuid.NullUUID{}, "note", "entry "+string(rune('a'+i)), []byte(`{"n":`+string(rune('0'+i))+`}`)); err != nil {
				return err
			}
		}
		return campaign.Log(ctx, tx, r.org, other, uuid.NullUUID{}, "note", "elsewhere", nil)
	}))

	var messages []string
	var cursor api.OptString
	for page := 0; ; page++ {
		list, err := r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: r.camp, Limit: api.NewOptInt(2), Cursor: cursor})
		require.NoError(t, err)
		require.Equal(t, int64(5), list.Pagination.Total.Value)
		for _, l := range list.Data {
			require.Equal(t, r.camp, l.CampaignID)
			messages = append(messages, l.Message.Value)
		}
		if !list.Pagination.HasMore {
			require.Equal(t, 2, page)
			require.Len(t, list.Data, 1)
			require.False(t, list.Pagination.NextCursor.Set)
			break
		}
		require.Len(t, list.Data, 2)
		require.Equal(t, list.Data[1].ID.String(), list.Pagination.NextCursor.Value, "the cursor is the last entry's id")
		cursor = api.NewOptString(list.Pagination.NextCursor.Value)
	}
	require.Equal(t, []string{"entry e", "entry d", "entry c", "entry b", "entry a"}, messages)
	first, err := r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: r.camp, Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.Equal(t, "4", string(first.Data[0].Metadata.Value["n"]))

	_, err = r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: r.camp, Cursor: api.NewOptString("page-2")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
	for _, q := range []string{"limit=0", "limit=101"} {
		res := r.env.Do(t, http.MethodGet, "/v1/campaigns/"+r.camp.String()+"/logs?"+q, r.key, nil, nil)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, q)
		require.NoError(t, res.Body.Close())
	}
	_, err = r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}
