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
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

func estimate(t *testing.T, c *api.Client, req api.CampaignEstimateRequest) *api.CampaignEstimate {
	t.Helper()
	out, err := c.CampaignsEstimate(context.Background(), &req)
	require.NoError(t, err)
	return out
}

// estimateRaw posts a body the SDK would refuse to build (it validates before sending) and returns the status
// and the envelope's code.
func estimateRaw(t *testing.T, env *apitest.Env, token, body string) (int, string) {
	t.Helper()
	resp := env.Do(t, http.MethodPost, "/v1/campaigns-estimate", token, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	var envelope struct {
		Code string `json:"code"`
	}
	require.NoError(t, json.Unmarshal(raw, &envelope), string(raw))
	return resp.StatusCode, envelope.Code
}

// estimateTimeline is an estimate's sending days and finish, "null" for each that is null.
func estimateTimeline(e *api.CampaignEstimate) [2]string {
	out := [2]string{"null", "null"}
	if !e.SendingDays.Null {
		out[0] = fmt.Sprint(e.SendingDays.Value)
	}
	if !e.EstimatedFinishAt.Null {
		out[1] = e.EstimatedFinishAt.Value.Format(time.RFC3339)
	}
	return out
}

func TestCampaignEstimateRefusesEachBadField(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	seg := segCreate(t, c, api.SegmentCreate{Name: "Leads"})
	tag, err := c.LabelsCreateTag(ctx, &api.CreateLabel{Title: "EU"}, api.LabelsCreateTagParams{})
	require.NoError(t, err)
	folder, err := c.LabelsCreateFolder(ctx, &api.CreateLabel{Title: "Q3"}, api.LabelsCreateFolderParams{})
	require.NoError(t, err)
	other := env.Bootstrap(t, "globex")
	foreign := segCreate(t, env.Client(t, other.APIKey), api.SegmentCreate{Name: "Theirs"})

	ok := estimate(t, c, api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}, EmailTagIds: []uuid.UUID{tag.ID}})
	require.Equal(t, 0, ok.Recipients)

	refused := func(req api.CampaignEstimateRequest, code string) {
		t.Helper()
		_, err := c.CampaignsEstimate(ctx, &req)
		requireAPIError(t, err, http.StatusBadRequest, code)
	}
	// Unknown and foreign ids answer alike, naming the field and position.
	refused(api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID, uuid.New()}}, "segment_not_found")
	refused(api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{foreign.ID}}, "segment_not_found")
	_, err = c.CampaignsEstimate(ctx, &api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID, foreign.ID}})
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "segment_ids[1]")
	refused(api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}, EmailTagIds: []uuid.UUID{uuid.New()}}, "tag_not_found")
	refused(api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}, EmailTagIds: []uuid.UUID{tag.ID, folder.ID}}, "tag_not_found")
	for _, tz := range []string{"Mars/Olympus_Mons", "Local", ""} {
		refused(api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}, Timezone: api.NewOptString(tz)}, "invalid_timezone")
	}

	// What the contract refuses before the handler runs.
	one := fmt.Sprintf(`"segment_ids": [%q]`, seg.ID)
	uuids := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%q", uuid.New())
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	for body, code := range map[string]string{
		`{}`:                                                           "invalid_body",
		`{"segment_ids": []}`:                                          "invalid_request",
		`{"segment_ids": ` + uuids(21) + `}`:                           "invalid_request",
		`{"segment_ids": ["not-a-uuid"]}`:                              "invalid_body",
		`{` + one + `, "days": 128}`:                                   "invalid_request",
		`{` + one + `, "days": -1}`:                                    "invalid_request",
		`{` + one + `, "daily_limit": -1}`:                             "invalid_request",
		`{` + one + `, "email_tag_ids": ["x"]}`:                        "invalid_body",
		`{` + one + `, "email_tag_ids": ` + uuids(51) + `}`:            "invalid_request",
		`{` + one + `, "timezone": "` + strings.Repeat("A", 65) + `"}`: "text_too_long",
	} {
		status, got := estimateRaw(t, env, boot.APIKey, body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, code, got, body)
	}

	// Reading campaigns is the requirement; a key without it is refused, one with only it is enough.
	_, err = env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts|auth.ReadEmails)).CampaignsEstimate(ctx,
		&api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	estimate(t, env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadCampaigns)), api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}})
}

func TestCampaignEstimateCountsAContactInSeveralSegmentsOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	cs := segContacts(t, c, "a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com")
	setIndustry := func(ct api.Contact, v string) {
		_, err := c.ContactsUpdate(ctx, &api.ContactUpdate{CustomFields: api.NewOptContactUpdateCustomFields(api.ContactUpdateCustomFields{"industry": v})},
			api.ContactsUpdateParams{ID: ct.ID})
		require.NoError(t, err)
	}
	setIndustry(cs[2], "mathematics")
	setIndustry(cs[3], "mathematics")
	setIndustry(cs[4], "mathematics")

	static := segCreate(t, c, api.SegmentCreate{Name: "Static"})
	segAdd(t, c, static.ID, api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID, cs[1].ID, cs[2].ID}})
	// Dynamic: c, d and e match; e is excluded by a pin, so c and d are members.
	dynamic := segCreate(t, c, api.SegmentCreate{Name: "Mathematicians", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(mathematicians())})
	segRemove(t, c, dynamic.ID, cs[4].ID)
	empty := segCreate(t, c, api.SegmentCreate{Name: "Empty"})

	recipients := func(ids ...uuid.UUID) int {
		return estimate(t, c, api.CampaignEstimateRequest{SegmentIds: ids}).Recipients
	}
	require.Equal(t, 3, recipients(static.ID))
	require.Equal(t, 2, recipients(dynamic.ID))
	require.Equal(t, 4, recipients(static.ID, dynamic.ID), "a, b, c and d: c is in both and counts once")
	require.Equal(t, 3, recipients(static.ID, static.ID), "a repeated id counts once")
	require.Equal(t, 4, recipients(empty.ID, dynamic.ID, static.ID))
	require.Equal(t, 0, recipients(empty.ID))

	// With no mailbox there is no capacity: the timeline is null.
	e := estimate(t, c, api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{static.ID}})
	require.Equal(t, [4]int{3, 0, 0, 0}, [4]int{e.Recipients, e.Mailboxes, e.DailyCapacity, e.RemainingToday})
	require.Equal(t, [2]string{"null", "null"}, estimateTimeline(e))
}

func TestCampaignEstimateResolvesSendersByTagAndProjectsTheTimeline(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	eu, err := r.c.LabelsCreateTag(ctx, &api.CreateLabel{Title: "EU"}, api.LabelsCreateTagParams{})
	require.NoError(t, err)
	us, err := r.c.LabelsCreateTag(ctx, &api.CreateLabel{Title: "US"}, api.LabelsCreateTagParams{})
	require.NoError(t, err)
	mailbox := func(email string, limit int, tags ...api.Label) *api.Mailbox {
		m := r.connect(t, email)
		req := api.MailboxUpdate{CampaignLimit: api.NewOptInt(limit), Tags: []string{}}
		for _, tg := range tags {
			req.Tags = append(req.Tags, tg.ID.String())
		}
		_, err := r.c.MailboxesUpdate(ctx, &req, api.MailboxesUpdateParams{ID: m.ID})
		require.NoError(t, err)
		return m
	}
	berlin := mailbox("berlin@example.com", 50, *eu)
	paris := mailbox("paris@example.com", 30, *eu, *us)
	held := mailbox("held@example.com", 50, *us)
	_, err = r.c.MailboxesHold(ctx, api.MailboxesHoldParams{ID: held.ID})
	require.NoError(t, err)
	off := mailbox("off@example.com", 50, *eu)
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{Status: api.NewOptMailboxStatus(api.MailboxStatusInactive)}, api.MailboxesUpdateParams{ID: off.ID})
	require.NoError(t, err)
	untagged := mailbox("plain@example.com", 20)

	cs := segContacts(t, r.c, "a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com")
	seg := segCreate(t, r.c, api.SegmentCreate{Name: "All five"})
	segAdd(t, r.c, seg.ID, api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID, cs[1].ID, cs[2].ID, cs[3].ID, cs[4].ID}})
	req := func(tags ...uuid.UUID) api.CampaignEstimateRequest {
		return api.CampaignEstimateRequest{SegmentIds: []uuid.UUID{seg.ID}, EmailTagIds: tags}
	}

	// Held and inactive mailboxes do not send; a mailbox with any of the tags does, once.
	mailboxes := func(req api.CampaignEstimateRequest) int { return estimate(t, r.c, req).Mailboxes }
	require.Equal(t, 2, mailboxes(req(eu.ID)), "berlin and paris (off is inactive)")
	require.Equal(t, 1, mailboxes(req(us.ID)), "paris (held is held)")
	require.Equal(t, 2, mailboxes(req(eu.ID, us.ID)), "berlin and paris, paris once")
	require.Equal(t, 3, mailboxes(req()), "every sendable mailbox: berlin, paris and plain")
	// A key limited to some mailboxes counts only those.
	scoped := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns, paris.ID, untagged.ID))
	require.Equal(t, 1, estimate(t, scoped, req(eu.ID)).Mailboxes, "paris")

	// Today (every day a sending day, in UTC, so whatever today is): berlin has sent 35 toward its cap on its
	// local day (UTC: it has no zone; the row is written for tomorrow too, so a test running over midnight
	// reads the same). Daily limit 40: berlin min(40, 50) = 40 with 5 left, paris min(40, 30) = 30 untouched;
	// capacity 70, 35 left today, which covers the 5 recipients: 1 sending day, ending today.
	now := time.Now().UTC()
	for _, day := range []time.Time{now, now.AddDate(0, 0, 1)} {
		orgExec(t, r.env, r.org, `INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total) VALUES ($1, $2, $3::date, 35, 35)`,
			r.org, berlin.ID, day.Format(time.DateOnly))
	}
	today := req(eu.ID)
	today.DailyLimit, today.Days = api.NewOptInt(40), api.NewOptInt(127)
	e := estimate(t, r.c, today)
	require.Equal(t, [4]int{5, 2, 70, 35}, [4]int{e.Recipients, e.Mailboxes, e.DailyCapacity, e.RemainingToday})
	require.False(t, e.SendingDays.Null)
	require.Equal(t, 1, e.SendingDays.Value)

	// Starting Monday 2030-01-07 (a later day, so nothing goes out today), Berlin time, Monday to Friday, 2
	// per mailbox per day: capacity 2 + 2 = 4; 5 recipients need ceil(5/4) = 2 days, Mon 7 and Tue 8, ending
	// Tue 23:59:59 CET (UTC+1).
	later := req(eu.ID)
	later.DailyLimit, later.Timezone = api.NewOptInt(2), api.NewOptString("Europe/Berlin")
	later.StartDate = api.NewOptNilDateTime(time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC))
	e = estimate(t, r.c, later)
	require.Equal(t, [4]int{5, 2, 4, 0}, [4]int{e.Recipients, e.Mailboxes, e.DailyCapacity, e.RemainingToday})
	require.Equal(t, [2]string{"2", "2030-01-08T23:59:59+01:00"}, estimateTimeline(e))

	// No sending day, or a daily limit of 0: no capacity, no timeline.
	none := later
	none.Days = api.NewOptInt(0)
	require.Equal(t, [2]string{"null", "null"}, estimateTimeline(estimate(t, r.c, none)))
	none = later
	none.DailyLimit = api.NewOptInt(0)
	e = estimate(t, r.c, none)
	require.Equal(t, 0, e.DailyCapacity)
	require.Equal(t, [2]string{"null", "null"}, estimateTimeline(e))
}
