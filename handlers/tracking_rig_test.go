package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Source addresses a tracking test fetches from (loopback, so the test can bind them) and the network lists
// that name them: a recognised scanner network, a probable scanner network and a privacy proxy network.
const (
	fromReader     = "127.0.0.1"
	fromNeighbour  = "127.0.0.2" // another address of the reader's network: the same source
	fromOffice     = "127.0.1.7" // another network than the reader's: another source
	fromScanner    = "127.0.2.9"
	fromProbable   = "127.0.3.9"
	fromProxy      = "127.0.4.9"
	browserUA      = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"
	imageProxyUA   = "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via TestImageProxy)"
	trackedPricing = "https://shop.example.com/pricing?utm_source=outflow&q=a%20b#plans"
	trackedDemo    = "https://shop.example.com/demo"
)

// trackRig is one organization with a one-step campaign, a lead in it and a mailbox, whose sends (stored by
// send) the tracking endpoints are fetched for, from the addresses above.
type trackRig struct {
	env              *apitest.Env
	org              uuid.UUID
	c                *api.Client
	signer           *tracking.Signer
	camp, step, lead uuid.UUID
	box              uuid.UUID
}

func newTrackRig(t *testing.T, opts ...apitest.Option) *trackRig {
	t.Helper()
	networks, err := tracking.ParseNetworks("127.0.2.0/24 Test Mail Gateway\n", "127.0.3.0/24 Test Cloud\n",
		"127.0.4.0/24 Test Privacy Proxy\nua:TestImageProxy Test Image Proxy\n")
	require.NoError(t, err)
	env := apitest.NewWith(t, apitest.Parts{Networks: networks}, opts...)
	boot := env.Bootstrap(t, "acme")
	r := &trackRig{env: env, org: boot.OrganizationID, c: env.Client(t, boot.APIKey)}
	r.signer, err = tracking.NewSigner(env.Config.SecretKey)
	require.NoError(t, err)
	camp := campCreate(t, r.c, api.CampaignCreate{Name: "Spring launch", Steps: []api.CampaignStepCreate{{
		Subject: api.NewOptString("Spring prices"), BodyHTML: api.NewOptString("<p>Hi</p>")}}})
	r.camp = camp.ID
	steps, err := r.c.CampaignsListSteps(context.Background(), api.CampaignsListStepsParams{ID: r.camp})
	require.NoError(t, err)
	r.step = steps[0].ID
	created, err := r.c.ContactsCreate(context.Background(), []api.ContactCreate{{Email: "ada@example.net",
		Campaigns: []uuid.UUID{r.camp}}}, api.ContactsCreateParams{})
	require.NoError(t, err)
	r.lead = createdOK(t, created)[0].ID
	r.box = campMailbox(t, env, r.org, "sales@acme.example", 50)
	return r
}

// send stores a delivered send of the campaign's step to the lead, dispatched at sent, as the send pipeline
// leaves it: its HTML body carries link 0 (trackedPricing, "See our pricing") and link 1 (trackedDemo, an image
// "Book a demo") as tracked links.
func (r *trackRig) send(t *testing.T, sent time.Time) uuid.UUID {
	t.Helper()
	task, err := uuid.NewV7()
	require.NoError(t, err)
	html := fmt.Sprintf(`<p>Hi Ada, <a href="https://t.outflow.test/t/c/%s">See our <b>pricing</b></a> or
		<a href="https://t.outflow.test/t/c/%s"><img src="demo.png" alt="Book a demo"></a></p>`,
		r.token(t, task, 0), r.token(t, task, 1))
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, from_email, from_name,
			contact_id, to_email, campaign_id, step_id, step_name, subject, message_id, sent_at, body_html)
			VALUES ($1, $2, 'campaign', 'sent', $3, 'sales@acme.example', 'Acme Sales', $4, 'ada@example.net', $5, $6,
			'Step 1', 'Spring prices', $7, $8, $9)`,
			r.org, task, r.box, r.lead, r.camp, r.step, "<"+task.String()+"@acme.example>", sent, html)
		return err
	}))
	return task
}

// token signs the click token of link index (0 trackedPricing, 1 trackedDemo) of task.
func (r *trackRig) token(t *testing.T, task uuid.UUID, index int) string {
	t.Helper()
	tok, err := r.signer.Sign(tracking.Token{Kind: tracking.KindClick, OrganizationID: r.org, TaskID: task, LinkIndex: index,
		URL: []string{trackedPricing, trackedDemo}[index]})
	require.NoError(t, err)
	return tok
}

// open fetches task's pixel from the address from with userAgent at the tracking clock's time (at; zero: now).
func (r *trackRig) open(t *testing.T, at time.Time, task uuid.UUID, from, userAgent string) {
	t.Helper()
	tok, err := r.signer.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: r.org, TaskID: task})
	require.NoError(t, err)
	resp := r.fetch(t, at, "/t/o/"+tok, from, userAgent)
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// click follows link index of task like open, and answers where the redirect points.
func (r *trackRig) click(t *testing.T, at time.Time, task uuid.UUID, index int, from, userAgent string) string {
	t.Helper()
	resp := r.fetch(t, at, "/t/c/"+r.token(t, task, index), from, userAgent)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	return resp.Header.Get("Location")
}

func (r *trackRig) fetch(t *testing.T, at time.Time, path, from, userAgent string) *http.Response {
	t.Helper()
	r.env.Clock.Set(at)
	defer r.env.Clock.Set(time.Time{})
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	client := &http.Client{
		Transport:     &http.Transport{DialContext: dialer.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequest(http.MethodGet, r.env.Server.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("User-Agent", userAgent)
	if userAgent == "" {
		req.Header["User-Agent"] = []string{""} // Go's client would otherwise send its own
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	client.CloseIdleConnections()
	return resp
}

// judged is a stored event as its kind, link, verdict, rule and whether the redirect carried the ticket.
type judged struct {
	Kind, Verdict, Rule string
	Link                int
	Ticket              bool
}

// judgements flushes the writer and lists task's stored events in time order.
func (r *trackRig) judgements(t *testing.T, task uuid.UUID) []judged {
	t.Helper()
	require.NoError(t, r.env.Tracking.Flush(context.Background()))
	var out []judged
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT kind, coalesce(link_index, -1), verdict, rule, ticket_issued FROM tracking_events
			WHERE organization_id = $1 AND task_id = $2 ORDER BY at, id`, r.org, task)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (judged, error) {
			var j judged
			return j, row.Scan(&j.Kind, &j.Link, &j.Verdict, &j.Rule, &j.Ticket)
		})
		return err
	})
	return out
}

// stamps flushes the writer and reads task's opened_at and clicked_at.
func (r *trackRig) stamps(t *testing.T, task uuid.UUID) (opened, clicked *time.Time) {
	t.Helper()
	require.NoError(t, r.env.Tracking.Flush(context.Background()))
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT opened_at, clicked_at FROM send_tasks WHERE organization_id = $1 AND id = $2`,
			r.org, task).Scan(&opened, &clicked)
	})
	return opened, clicked
}

// progress flushes the writer and answers the lead's engagement in the campaign as the contact search does.
func (r *trackRig) progress(t *testing.T) api.ContactCampaignProgress {
	t.Helper()
	require.NoError(t, r.env.Tracking.Flush(context.Background()))
	res, err := r.c.ContactsSearch(context.Background(), api.NewOptContactSearchRequest(api.ContactSearchRequest{
		CampaignIds: []string{r.camp.String()}}), api.ContactsSearchParams{})
	require.NoError(t, err)
	require.Len(t, res.Data, 1)
	p, ok := res.Data[0].CampaignLead.Get()
	require.True(t, ok)
	return p
}

// eventData lists the data of the organization's events of type, oldest first.
func (r *trackRig) eventData(t *testing.T, eventType string) []map[string]any {
	t.Helper()
	var out []map[string]any
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT data FROM event_outbox WHERE organization_id = $1 AND event_type = $2
			ORDER BY created_at, id`, r.org, eventType)
		if err != nil {
			return err
		}
		raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		for _, raw := range raws {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return err
	})
	return out
}

// emailActivities lists the lead's email activities as the contact's activity log answers them, oldest
// first: the type and, for a click, the link's url and label.
func (r *trackRig) emailActivities(t *testing.T) []string {
	t.Helper()
	res, err := r.c.ContactsActivitiesList(context.Background(), api.ContactsActivitiesListParams{ID: r.lead})
	require.NoError(t, err)
	var out []string
	for i := len(res.Data) - 1; i >= 0; i-- {
		a := res.Data[i]
		if typ := string(a.ActivityType); strings.HasPrefix(typ, "email_") {
			out = append(out, strings.TrimSpace(typ+" "+string(a.Metadata["url"])+" "+string(a.Metadata["link_label"])))
		}
	}
	return out
}

func (r *trackRig) query(t *testing.T, fn func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, fn))
}
