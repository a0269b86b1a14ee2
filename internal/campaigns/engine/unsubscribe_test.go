package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

// unsubRig is a rig whose engine signs with the test server's secret, so the unsubscribe links it sends
// are honoured by the server's /u endpoints, on the shared tracking host t.outflow.test.
type unsubRig struct {
	*rig
	signer *tracking.Signer
}

func newUnsubRig(t *testing.T) *unsubRig {
	t.Helper()
	r := newRig(t)
	signer, err := tracking.NewSigner(r.env.Config.SecretKey)
	require.NoError(t, err)
	r.eng = engine.New(r.env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: r.now,
		Tracking: engine.Tracking{Signer: signer, Host: "t.outflow.test", PublicURL: "http://api.outflow.test"}})
	r.pipe.OnSettle(r.eng.Settle)
	return &unsubRig{rig: r, signer: signer}
}

// sentTo is the raw message the SMTP server received for address (the newest one).
func (r *unsubRig) sentTo(t *testing.T, address string) []byte {
	t.Helper()
	var raw []byte
	for _, m := range r.smtp.Messages() {
		if m.To[0] == address {
			raw = m.Data
		}
	}
	require.NotNil(t, raw, "nothing was sent to %s", address)
	return raw
}

// taskOf is the id of the newest send task to address.
func (r *unsubRig) taskOf(t *testing.T, address string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM send_tasks WHERE to_email = $1 ORDER BY id DESC LIMIT 1`, address).Scan(&id)
	})
	return id
}

var listUnsubscribeRE = regexp.MustCompile(`^<https://t\.outflow\.test/u/([A-Za-z0-9_-]+)>, <mailto:ada@example\.com\?subject=unsubscribe>$`)

func TestACampaignMessageCarriesOneClickListUnsubscribeHeadersUnlessTheCampaignTurnsThemOff(t *testing.T) {
	r := newUnsubRig(t)
	r.campaign(t, twoSteps(), "on@example.net")
	off := r.create(t, twoSteps())
	r.exec(t, `UPDATE campaigns SET unsubscribe_header = false WHERE id = $1`, off)
	r.addLeads(t, off, "off@example.net")
	r.start(t, off)
	require.Equal(t, 2, r.run(t).Sends)
	require.Equal(t, 2, r.work(t))

	raw := r.sentTo(t, "on@example.net")
	m := listUnsubscribeRE.FindStringSubmatch(header(t, raw, "List-Unsubscribe"))
	require.NotNil(t, m, "List-Unsubscribe names the https page on the tracking host and a mailto of the sending address: %q",
		header(t, raw, "List-Unsubscribe"))
	tok, err := r.signer.Parse(m[1], tracking.KindUnsubscribe)
	require.NoError(t, err)
	require.Equal(t, tracking.Token{Kind: tracking.KindUnsubscribe, OrganizationID: r.org, TaskID: r.taskOf(t, "on@example.net")}, tok,
		"the token names the send task the message went out as")
	require.Equal(t, "List-Unsubscribe=One-Click", header(t, raw, "List-Unsubscribe-Post"))

	raw = r.sentTo(t, "off@example.net")
	require.Empty(t, header(t, raw, "List-Unsubscribe"), "unsubscribe_header false sends no List-Unsubscribe")
	require.Empty(t, header(t, raw, "List-Unsubscribe-Post"))
	plain, html := bodies(t, raw)
	require.NotContains(t, plain+html, "/u/", "the default unsubscribe line (mode off) adds nothing to the bodies")
}

func TestTheUnsubscribeLineInLinkModePointsAtTheSamePageAsTheHeader(t *testing.T) {
	r := newUnsubRig(t)
	id := r.create(t, twoSteps())
	require.NoError(t, r.c.CampaignsUpdateAdvanced(context.Background(), &api.CampaignAdvancedUpdate{Settings: api.AdvancedOutreachSettings{
		Unsubscribe: api.NewOptAdvancedOutreachSettingsUnsubscribe(api.AdvancedOutreachSettingsUnsubscribe{
			Mode:     api.NewOptAdvancedOutreachSettingsUnsubscribeMode(api.AdvancedOutreachSettingsUnsubscribeModeLink),
			LinkText: api.NewOptString("Stop these emails")})}}, api.CampaignsUpdateAdvancedParams{ID: id}))
	r.addLeads(t, id, "line@example.net")
	r.start(t, id)
	require.Equal(t, 1, r.run(t).Sends)
	require.Equal(t, 1, r.work(t))

	raw := r.sentTo(t, "line@example.net")
	m := listUnsubscribeRE.FindStringSubmatch(header(t, raw, "List-Unsubscribe"))
	require.NotNil(t, m, header(t, raw, "List-Unsubscribe"))
	page := "https://t.outflow.test/u/" + m[1]
	plain, _ := bodies(t, raw)
	require.Contains(t, plain, "Stop these emails: "+page, "the plain line spells out the header's page")
}

// token is the unsubscribe token in the List-Unsubscribe header of the newest message to address.
func (r *unsubRig) token(t *testing.T, address string) string {
	t.Helper()
	m := listUnsubscribeRE.FindStringSubmatch(header(t, r.sentTo(t, address), "List-Unsubscribe"))
	require.NotNil(t, m, "no List-Unsubscribe in the message to %s", address)
	return m[1]
}

// answer is an HTTP answer of the /u endpoints, read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

// call sends method to /u/{token} on the test server with the body (nil: none) of the content type.
func (r *unsubRig) call(t *testing.T, method, token, contentType string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(method, r.env.Server.URL+"/u/"+token, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// oneClick is a provider's RFC 8058 request, url-encoded.
func (r *unsubRig) oneClick(t *testing.T, token string) answer {
	t.Helper()
	return r.call(t, http.MethodPost, token, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
}

// multipart is a form body with the fields, multipart/form-data encoded, and its content type.
func multipartBody(t *testing.T, fields map[string]string) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		require.NoError(t, w.WriteField(k, v))
	}
	require.NoError(t, w.Close())
	return &b, w.FormDataContentType()
}

// unsubState is what an unsubscribe changes, as the tests read it for one address.
type unsubState struct {
	Subscribed                      bool
	Suppressions, Records, Events   int
	SuppressionSource, RecordSource string
	SuppressionCampaign             *uuid.UUID
}

func (r *unsubRig) state(t *testing.T, address string) unsubState {
	t.Helper()
	var s unsubState
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT subscribed FROM contacts WHERE email = $1`, address).Scan(&s.Subscribed); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(min(source), ''), (array_agg(campaign_id))[1] FROM suppressions
			WHERE kind = 'email' AND value = $1`, address).Scan(&s.Suppressions, &s.SuppressionSource, &s.SuppressionCampaign); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(min(source), '') FROM deliverability_events
			WHERE event_type = 'unsubscribe' AND recipient_email = $1 AND matched_by = 'token'`, address).Scan(&s.Records, &s.RecordSource); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM event_outbox WHERE event_type = 'campaign.unsubscribed'
			AND data->>'contact_email' = $1`, address).Scan(&s.Events)
	})
	return s
}

func TestTheUnsubscribePageNamesTheAddressAndChangesNothing(t *testing.T) {
	r := newUnsubRig(t)
	id := r.campaign(t, twoSteps(), "page@example.net")
	r.run(t)
	r.work(t)
	before := r.lead(t, id, "page@example.net")

	a := r.call(t, http.MethodGet, r.token(t, "page@example.net"), "", nil)
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Equal(t, "text/html", strings.Split(a.header.Get("Content-Type"), ";")[0])
	require.Equal(t, "no-store", a.header.Get("Cache-Control"))
	require.Contains(t, a.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Contains(t, a.body, "<strong>page@example.net</strong>", "the page names the address")
	require.Contains(t, a.body, "Ada Lovelace", "and the sender")
	require.Contains(t, a.body, `<form method="post">`, "its button posts back to the link")

	require.Equal(t, unsubState{Subscribed: true}, r.state(t, "page@example.net"), "loading the page unsubscribes no one")
	require.Equal(t, before, r.lead(t, id, "page@example.net"))
}

func TestAOneClickUnsubscribeStopsTheContactEverywhereAndCancelsAQueuedSendOfAnotherCampaign(t *testing.T) {
	r := newUnsubRig(t)
	first := r.campaign(t, twoSteps(), "x@example.net", "y@example.net")
	r.run(t)
	require.Equal(t, 2, r.work(t))
	second := r.create(t, twoSteps())
	r.addLeads(t, second, "x@example.net")
	r.start(t, second)
	require.Equal(t, 1, r.run(t).Sends, "the second campaign's first step is queued for x")
	queued := r.lead(t, second, "x@example.net")
	require.NotNil(t, queued.Task)
	daySends := func() int {
		var n int
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT coalesce(sum(sent), 0) FROM campaign_send_days WHERE campaign_id = $1`, second).Scan(&n)
		})
		return n
	}
	require.Equal(t, 1, daySends())

	a := r.oneClick(t, r.token(t, "x@example.net"))
	require.Equal(t, http.StatusNoContent, a.status, a.body)
	require.Empty(t, a.body)
	// The effects are the request's own: everything below was committed before the answer, nothing is read
	// later (no job or batch stands between the request and its effects, which a wall-clock bound on this
	// machine would not prove).
	require.Equal(t, unsubState{Subscribed: false, Suppressions: 1, SuppressionSource: "unsubscribe", SuppressionCampaign: &first,
		Records: 1, RecordSource: "one_click", Events: 1}, r.state(t, "x@example.net"))

	var status, code string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT status, error_code FROM send_tasks WHERE id = $1`, *queued.Task).Scan(&status, &code)
	})
	require.Equal(t, []string{"canceled", "contact_unsubscribed"}, []string{status, code}, "the other campaign's queued send is cancelled")
	require.Equal(t, 0, daySends(), "its place in the campaign's day is given back")
	for _, c := range []uuid.UUID{first, second} {
		l := r.lead(t, c, "x@example.net")
		require.Equal(t, "completed", l.State)
		require.Equal(t, engine.ReasonUnsubscribed, l.WaitReason)
		require.Nil(t, l.Due)
		require.Nil(t, l.Task)
	}
	require.Zero(t, r.lead(t, second, "x@example.net").Position, "the cancelled step is undone")
	require.Equal(t, "active", r.lead(t, first, "y@example.net").State, "other contacts' leads go on")

	var data map[string]any
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT data FROM event_outbox WHERE event_type = 'campaign.unsubscribed'`).Scan(&data)
	})
	require.Equal(t, first.String(), data["campaign_id"])
	require.Equal(t, "x@example.net", data["contact_email"])
	require.Equal(t, "one_click", data["source"])
	require.NotEmpty(t, data["contact_id"])

	again := r.oneClick(t, r.token(t, "x@example.net"))
	require.Equal(t, http.StatusNoContent, again.status, again.body)
	require.Equal(t, r.state(t, "x@example.net"), unsubState{Subscribed: false, Suppressions: 1, SuppressionSource: "unsubscribe",
		SuppressionCampaign: &first, Records: 1, RecordSource: "one_click", Events: 1}, "a repeat records and raises nothing")

	sent := len(r.smtp.Messages())
	r.advance(2 * 24 * time.Hour)
	r.run(t)
	r.work(t)
	for _, m := range r.smtp.Messages()[sent:] {
		require.NotEqual(t, "x@example.net", m.To[0], "nothing more goes to the unsubscribed contact")
	}
}

func TestTheConfirmFormUnsubscribesWithSourceLinkWhateverItsEncodingAndRepeatsAnswerTheSame(t *testing.T) {
	r := newUnsubRig(t)
	r.campaign(t, twoSteps(), "form@example.net", "multi@example.net", "empty@example.net")
	r.run(t)
	require.Equal(t, 3, r.work(t))

	multi, multiType := multipartBody(t, map[string]string{"confirm": "yes"})
	for address, send := range map[string]func() answer{
		"form@example.net": func() answer {
			return r.call(t, http.MethodPost, r.token(t, "form@example.net"), "application/x-www-form-urlencoded", strings.NewReader("confirm=yes"))
		},
		"multi@example.net": func() answer {
			return r.call(t, http.MethodPost, r.token(t, "multi@example.net"), multiType, multi)
		},
		"empty@example.net": func() answer { return r.call(t, http.MethodPost, r.token(t, "empty@example.net"), "", nil) },
	} {
		a := send()
		require.Equal(t, http.StatusOK, a.status, address+": "+a.body)
		require.Equal(t, "text/html", strings.Split(a.header.Get("Content-Type"), ";")[0], address)
		require.Contains(t, a.body, "You are unsubscribed", address)
		require.Contains(t, a.body, address)
		s := r.state(t, address)
		require.Equal(t, unsubState{Subscribed: false, Suppressions: 1, SuppressionSource: "unsubscribe",
			SuppressionCampaign: s.SuppressionCampaign, Records: 1, RecordSource: "link", Events: 1}, s, address)
	}

	again := r.call(t, http.MethodPost, r.token(t, "form@example.net"), "application/x-www-form-urlencoded", strings.NewReader("confirm=yes"))
	require.Equal(t, http.StatusOK, again.status)
	require.Contains(t, again.body, "You are unsubscribed")
	require.Equal(t, 1, r.state(t, "form@example.net").Records, "a repeat records nothing")
	require.Equal(t, 1, r.state(t, "form@example.net").Events)

	multi, multiType = multipartBody(t, map[string]string{"List-Unsubscribe": "One-Click"})
	oneClick := r.call(t, http.MethodPost, r.token(t, "multi@example.net"), multiType, multi)
	require.Equal(t, http.StatusNoContent, oneClick.status, "a multipart one-click request is answered 204: %s", oneClick.body)
	require.Equal(t, 1, r.state(t, "multi@example.net").Records, "and, as a repeat, records nothing")
}

func TestWithoutAutoSuppressOnUnsubscribeTheContactIsUnsubscribedButTheAddressNotSuppressed(t *testing.T) {
	r := newUnsubRig(t)
	id := r.create(t, twoSteps())
	bp := api.AdvancedOutreachSettingsBouncePipeline{AutoSuppressOnUnsubscribe: api.NewOptBool(false)}
	require.NoError(t, r.c.CampaignsUpdateAdvanced(context.Background(), &api.CampaignAdvancedUpdate{Settings: api.AdvancedOutreachSettings{
		BouncePipeline: api.NewOptAdvancedOutreachSettingsBouncePipeline(bp)}}, api.CampaignsUpdateAdvancedParams{ID: id}))
	r.addLeads(t, id, "keep@example.net")
	r.start(t, id)
	r.run(t)
	require.Equal(t, 1, r.work(t))

	require.Equal(t, http.StatusNoContent, r.oneClick(t, r.token(t, "keep@example.net")).status)
	require.Equal(t, unsubState{Subscribed: false, Records: 1, RecordSource: "one_click", Events: 1}, r.state(t, "keep@example.net"))
}

func TestForgedAndForeignKindUnsubscribeTokensAre404(t *testing.T) {
	r := newUnsubRig(t)
	r.campaign(t, twoSteps(), "z@example.net")
	r.run(t)
	require.Equal(t, 1, r.work(t))
	task := r.taskOf(t, "z@example.net")
	good := r.token(t, "z@example.net")

	open, err := r.signer.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: r.org, TaskID: task})
	require.NoError(t, err)
	other, err := tracking.NewSigner([]byte("another deployment's secret key!"))
	require.NoError(t, err)
	foreign, err := other.Sign(tracking.Token{Kind: tracking.KindUnsubscribe, OrganizationID: r.org, TaskID: task})
	require.NoError(t, err)
	unknown, err := r.signer.Sign(tracking.Token{Kind: tracking.KindUnsubscribe, OrganizationID: r.org, TaskID: uuid.Must(uuid.NewV7())})
	require.NoError(t, err)
	altered := good[:len(good)-2] + map[bool]string{true: "AA", false: "AB"}[good[len(good)-2:] != "AA"]

	for name, token := range map[string]string{"open token of the same send": open, "another deployment's key": foreign,
		"no such send": unknown, "altered": altered, "truncated": good[:20], "garbage": "not-a-token"} {
		for _, a := range []answer{r.call(t, http.MethodGet, token, "", nil), r.oneClick(t, token)} {
			require.Equal(t, http.StatusNotFound, a.status, name)
			var env map[string]any
			require.NoError(t, json.Unmarshal([]byte(a.body), &env), name)
			require.Equal(t, "unsubscribe_link_not_found", env["code"], name)
			require.NotEmpty(t, env["request_id"], name)
		}
	}
	require.Equal(t, unsubState{Subscribed: true}, r.state(t, "z@example.net"))
}

func TestOneClickRequestsSentTogetherUnsubscribeOnce(t *testing.T) {
	r := newUnsubRig(t)
	r.campaign(t, twoSteps(), "twice@example.net")
	r.run(t)
	require.Equal(t, 1, r.work(t))
	token := r.token(t, "twice@example.net")

	answers := make(chan int, 4)
	for range 4 {
		go func() {
			req, err := http.NewRequest(http.MethodPost, r.env.Server.URL+"/u/"+token, strings.NewReader("List-Unsubscribe=One-Click"))
			if err != nil {
				answers <- 0
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- 0
				return
			}
			resp.Body.Close()
			answers <- resp.StatusCode
		}()
	}
	for range 4 {
		require.Equal(t, http.StatusNoContent, <-answers)
	}
	s := r.state(t, "twice@example.net")
	require.Equal(t, 1, s.Records, "requests with one token take turns: one unsubscribe, the rest repeats")
	require.Equal(t, 1, s.Events)
}
