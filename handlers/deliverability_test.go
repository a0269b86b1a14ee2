package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
)

// ingest posts one deliverability event through the SDK.
func (r *trackRig) ingest(t *testing.T, req api.IngestDeliverabilityEventRequest, key string) error {
	t.Helper()
	params := api.DeliverabilityOpsIngestEventParams{}
	if key != "" {
		params.IdempotencyKey = api.NewOptString(key)
	}
	return r.c.DeliverabilityOpsIngestEvent(context.Background(), &req, params)
}

// ingested lists the organization's ingested events as "type bounce_type status smtp provider task".
func (r *trackRig) ingested(t *testing.T) []string {
	t.Helper()
	var out []string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT concat_ws(' ', event_type, coalesce(bounce_type, '-'), coalesce(nullif(status_code, ''), '-'),
			coalesce(smtp_code::text, '-'), provider, coalesce(task_id::text, '-'))
			FROM deliverability_events WHERE organization_id = $1 AND source = 'ingest' ORDER BY at, id`, r.org)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return out
}

func (r *trackRig) scalar(t *testing.T, sql string, args ...any) string {
	t.Helper()
	var s string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, append([]any{r.org}, args...)...).Scan(&s)
	})
	return s
}

func TestAnIngestedBounceOfASendIsRecordedWithItsCodesStopsTheLeadSuppressesTheAddressAndCountsOnce(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	task := r.send(t, time.Now().Add(-time.Hour))
	bounce := api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeBounce,
		RecipientEmail: "Ada@Example.net", TaskID: api.NewOptUUID(task), Provider: api.NewOptString("ses"),
		Reason: api.NewOptString("smtp; 550 5.1.1 <ada@example.net>: Recipient address rejected: User unknown")}
	require.NoError(t, r.ingest(t, bounce, "bounce-1"))
	want := []string{"bounce hard 5.1.1 550 ses " + task.String()}
	require.Equal(t, want, r.ingested(t))
	require.Equal(t, "bounce", r.scalar(t, `SELECT source FROM suppressions WHERE organization_id = $1 AND value = 'ada@example.net'`))
	require.Equal(t, "true", r.scalar(t, `SELECT (bounced_at IS NOT NULL)::text FROM send_tasks WHERE organization_id = $1 AND id = $2`, task))
	require.Len(t, r.eventData(t, "deliverability.bounce"), 1)
	require.Len(t, r.eventData(t, "campaign.email_bounced"), 1)
	require.Equal(t, "1", r.scalar(t, `SELECT count(*)::text FROM audit_log WHERE organization_id = $1 AND event = 'deliverability.event_ingested' AND actor_type = 'api_key'`))

	// The same report again, under its header key or its body key, changes nothing and is accepted.
	require.NoError(t, r.ingest(t, bounce, "bounce-1"))
	bounce.IdempotencyKey = api.NewOptString("provider-event-9")
	require.NoError(t, r.ingest(t, bounce, ""))
	require.NoError(t, r.ingest(t, bounce, ""))
	require.Len(t, r.ingested(t), 2, "the body key recorded the report once more, as evidence only")
	require.Len(t, r.eventData(t, "deliverability.bounce"), 1, "the send's effects applied once")

	// A soft bounce the provider types as such is kept soft.
	soft := api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeBounce,
		RecipientEmail: "ada@example.net", TaskID: api.NewOptUUID(task), Reason: api.NewOptString("mailbox full"),
		Metadata: api.NewOptIngestDeliverabilityEventRequestMetadata(api.IngestDeliverabilityEventRequestMetadata{"bounce_type": jx.Raw(`"soft"`)})}
	require.NoError(t, r.ingest(t, soft, ""))
	require.Contains(t, r.ingested(t), "bounce soft - -  "+task.String())
}

func TestIngestedOpensAndClicksOfASendAreJudgedByTheTrackingRules(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	task := r.send(t, time.Now().Add(-time.Hour))
	open := api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeOpen,
		RecipientEmail: "ada@example.net", TaskID: api.NewOptUUID(task), Provider: api.NewOptString("postmark")}
	require.NoError(t, r.ingest(t, open, ""))
	opened, _ := r.stamps(t, task)
	require.Nil(t, opened, "an open reported without the reader's user agent is a machine's")

	open.Metadata = api.NewOptIngestDeliverabilityEventRequestMetadata(api.IngestDeliverabilityEventRequestMetadata{
		"user_agent": jx.Raw(`"` + browserUA + `"`), "ip": jx.Raw(`"192.0.2.10"`)})
	require.NoError(t, r.ingest(t, open, ""))
	click := api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeClick,
		RecipientEmail: "ada@example.net", TaskID: api.NewOptUUID(task),
		Metadata: api.NewOptIngestDeliverabilityEventRequestMetadata(api.IngestDeliverabilityEventRequestMetadata{
			"user_agent": jx.Raw(`"` + browserUA + `"`), "url": jx.Raw(`"` + trackedDemo + `"`)})}
	require.NoError(t, r.ingest(t, click, ""))
	require.Equal(t, []judged{
		{Kind: "open", Verdict: "machine", Rule: "missing_user_agent", Link: -1},
		{Kind: "open", Verdict: "human", Rule: "human", Link: -1},
		{Kind: "click", Verdict: "human", Rule: "human", Link: 0},
	}, r.judgements(t, task))
	opened, _ = r.stamps(t, task)
	require.NotNil(t, opened, "the reader's open counts")
	require.Len(t, r.eventData(t, "campaign.email_opened"), 1)
	require.Len(t, r.ingested(t), 3)

	// An open about no known send is its record alone.
	require.NoError(t, r.ingest(t, api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeOpen,
		RecipientEmail: "someone@example.org"}, ""))
	require.Len(t, r.ingested(t), 4)
}

func TestAnIngestedUnsubscribeUnsubscribesTheContactAndAReplyMarksTheSendReplied(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	task := r.send(t, time.Now().Add(-time.Hour))
	require.NoError(t, r.ingest(t, api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeReply,
		RecipientEmail: "ada@example.net", TaskID: api.NewOptUUID(task), Provider: api.NewOptString("crm")}, ""))
	require.Equal(t, "true", r.scalar(t, `SELECT (replied_at IS NOT NULL)::text FROM send_tasks WHERE organization_id = $1 AND id = $2`, task))

	unsub := api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeUnsubscribe,
		RecipientEmail: "ada@example.net", CampaignID: api.NewOptUUID(r.camp), Provider: api.NewOptString("crm")}
	require.NoError(t, r.ingest(t, unsub, "unsub-1"))
	require.Equal(t, "false", r.scalar(t, `SELECT subscribed::text FROM contacts WHERE organization_id = $1 AND id = $2`, r.lead))
	require.Equal(t, "unsubscribe", r.scalar(t, `SELECT source FROM suppressions WHERE organization_id = $1 AND value = 'ada@example.net'`))
	unsubscribed := r.eventData(t, "campaign.unsubscribed")
	require.Len(t, unsubscribed, 1)
	require.Equal(t, "action", unsubscribed[0]["source"])
	require.Equal(t, r.camp.String(), unsubscribed[0]["campaign_id"])
	require.NoError(t, r.ingest(t, unsub, "unsub-1"))
	unsub.IdempotencyKey = api.NewOptString("crm-unsub-1")
	require.NoError(t, r.ingest(t, unsub, ""))
	require.NoError(t, r.ingest(t, unsub, "another-header-key"))
	require.Len(t, r.eventData(t, "campaign.unsubscribed"), 2, "a repeat of a key changes nothing")
}

func TestIngestRefusesEventsItCannotApplyNamingTheField(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t)
	task := r.send(t, time.Now().Add(-time.Hour))
	key := r.env.Bootstrap(t, "globex").APIKey
	own := r.env.Bootstrap(t, "initech")
	post := func(token, body string) (int, string) {
		return feedRawError(t, r.env, http.MethodPost, "/v1/deliverability/events", token, body)
	}
	status, _ := post(own.APIKey, `{"event_type":"delivered","recipient_email":"ada@example.net"}`)
	require.Equal(t, http.StatusBadRequest, status)
	status, _ = post(own.APIKey, `{"recipient_email":"ada@example.net"}`)
	require.Equal(t, http.StatusBadRequest, status)
	status, _ = post(own.APIKey, `{"event_type":"bounce","recipient_email":"not an address"}`)
	require.Equal(t, http.StatusBadRequest, status)
	status, code := post(own.APIKey, `{"event_type":"bounce","recipient_email":"ada@example.net","task_id":"`+task.String()+`"}`)
	require.Equal(t, http.StatusNotFound, status, "another organization's send is not found")
	require.Equal(t, "task_not_found", code)
	status, code = post(key, `{"event_type":"bounce","recipient_email":"ada@example.net","reason":"`+strings.Repeat("x", 1001)+`"}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_reason", code)

	ctx := context.Background()
	err := r.c.DeliverabilityOpsIngestEvent(ctx, &api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeBounce,
		RecipientEmail: "bob@example.net", TaskID: api.NewOptUUID(task)}, api.DeliverabilityOpsIngestEventParams{})
	requireAPIError(t, err, 400, "task_recipient_mismatch")
	err = r.c.DeliverabilityOpsIngestEvent(ctx, &api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeBounce,
		RecipientEmail: "ada@example.net", TaskID: api.NewOptUUID(task),
		Metadata: api.NewOptIngestDeliverabilityEventRequestMetadata(api.IngestDeliverabilityEventRequestMetadata{"bounce_type": jx.Raw(`"maybe"`)})},
		api.DeliverabilityOpsIngestEventParams{})
	requireAPIError(t, err, 400, "invalid_bounce_type")
	err = r.c.DeliverabilityOpsIngestEvent(ctx, &api.IngestDeliverabilityEventRequest{EventType: api.IngestDeliverabilityEventRequestEventTypeComplaint,
		RecipientEmail: "ada@example.net", ContactID: api.NewOptUUID(uuid.New())}, api.DeliverabilityOpsIngestEventParams{})
	requireAPIError(t, err, 404, "contact_not_found")
	require.Empty(t, r.ingested(t), "nothing refused was recorded")
}
