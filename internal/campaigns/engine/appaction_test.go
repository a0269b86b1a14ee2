package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/apps"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/webhook"
)

// appCall is one request the test app received.
type appCall struct {
	Path   string
	Header http.Header
	Body   []byte
}

// appServer is the customer's app: an HTTPS server on loopback that records every call and answers by path
// (answer, unless the path has its own).
type appServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []appCall
	answer func(path string, n int) (int, string)
}

func newAppServer(t testing.TB, answer func(path string, n int) (int, string)) *appServer {
	t.Helper()
	a := &appServer{answer: answer}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.calls = append(a.calls, appCall{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		n := 0
		for _, c := range a.calls {
			if c.Path == r.URL.Path {
				n++
			}
		}
		a.mu.Unlock()
		if r.URL.Path == "/slow" {
			<-r.Context().Done() // never answers in time
			return
		}
		status, out := a.answer(r.URL.Path, n)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *appServer) recorded() []appCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]appCall(nil), a.calls...)
}

// appRig is the engine rig with an app: its connection (made with a loopback base URL, as a self-hosted rig's
// OUTFLOW_WEBHOOKS_ALLOW_PRIVATE allows) and the app_action runner on the rig's clock, with a short call timeout.
type appRig struct {
	*rig
	app     *appServer
	store   *apps.Store
	actions *apps.Actions
	conn    uuid.UUID
	secret  string
}

func newAppRig(t testing.TB, answer func(path string, n int) (int, string)) *appRig {
	t.Helper()
	r := &appRig{rig: newRig(t), app: newAppServer(t, answer)}
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	opts := egress.Options{AllowPrivate: true}
	client := apps.NewClient(apps.Options{Egress: opts, Timeout: 300 * time.Millisecond,
		TLS: r.app.srv.Client().Transport.(*http.Transport).TLSClientConfig})
	r.store = apps.NewStore(r.env.DB.Pool, keyring, opts, client)
	r.actions = apps.NewActions(r.env.DB.Pool, keyring, client, r.now)
	name, base := "CRM", r.app.srv.URL
	c, secret, err := r.store.Create(context.Background(), r.org, apps.Fields{Name: &name, BaseURL: &base})
	require.NoError(t, err)
	r.conn, r.secret = c.ID, secret
	return r
}

// appSteps is [app_action at path (output_key crm, on_error), an email right after it with body].
func (r *appRig) appSteps(path, onError, body string) []api.CampaignStepCreate {
	action := api.CampaignStepCreateAction{"type": jx.Raw(`"app_action"`), "app_connection_id": jx.Raw(`"` + r.conn.String() + `"`),
		"path": jx.Raw(`"` + path + `"`), "output_key": jx.Raw(`"crm"`), "inputs": jx.Raw(`{"who": "{{.Email}}", "tags": ["{{.FirstName}}"]}`)}
	if onError != "" {
		action["on_error"] = jx.Raw(`"` + onError + `"`)
	}
	return []api.CampaignStepCreate{
		{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction), Name: api.NewOptString("Look up"),
			Action: api.NewOptCampaignStepCreateAction(action)},
		{Subject: api.NewOptString("Hello {{.FirstName}}"), BodyPlain: api.NewOptString(body), WaitAfter: api.NewOptInt(0)},
	}
}

// work runs the app_action job of every running step run, as the worker would.
func (r *appRig) work(t testing.TB) int {
	t.Helper()
	var runs []uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM campaign_step_runs WHERE kind = 'app_action' AND status = 'running' ORDER BY id`)
		if err != nil {
			return err
		}
		runs, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	for _, id := range runs {
		require.NoError(t, r.actions.Run(context.Background(), r.jobs, engine.AppActionArgs{OrganizationID: r.org, StepRunID: id}, nil))
	}
	return len(runs)
}

// workJob works the step run's queued app_action job through the worker, as a River client would: the job is
// running while it works and completed in the transaction that records the outcome.
func (r *appRig) workJob(t testing.TB, run uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	var id int64
	require.NoError(t, r.env.DB.Pool.QueryRow(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now()
		WHERE kind = 'app_action' AND args ->> 'step_run_id' = $1 AND state = 'available' RETURNING id`, run.String()).Scan(&id))
	client := r.jobs.(*river.Client[pgx.Tx])
	row, err := client.JobGet(ctx, id)
	require.NoError(t, err)
	var args engine.AppActionArgs
	require.NoError(t, json.Unmarshal(row.EncodedArgs, &args))
	w := &apps.Worker{Actions: r.actions}
	require.NoError(t, w.Work(rivertest.WorkContext(ctx, client), &river.Job[engine.AppActionArgs]{JobRow: row, Args: args}))
	row, err = client.JobGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, row.State, "the job completes with the outcome")
}

// queuedJobs counts the app_action jobs waiting for the step run.
func (r *appRig) queuedJobs(t testing.TB, run uuid.UUID) int {
	t.Helper()
	var n int
	require.NoError(t, r.env.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'app_action'
		AND args ->> 'step_run_id' = $1 AND state = 'available'`, run.String()).Scan(&n))
	return n
}

func TestAnAppActionsAnswerIsCapturedAndALaterEmailRendersIt(t *testing.T) {
	r := newAppRig(t, func(string, int) (int, string) { return 200, `{"owner": {"name": "Lin"}, "score": 12.5}` })
	old := r.secret
	rotated, err := r.store.RotateSecret(context.Background(), r.org, r.conn)
	require.NoError(t, err)
	id := r.campaign(t, r.appSteps("/lookup", "", "Your account owner is {{.App.crm.owner.name}} ({{.App.crm.score}})."), "a@example.net")

	r.run(t)
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, engine.ReasonAppAction, l.WaitReason)
	run, status := r.stepRun(t, id, "a@example.net", 0)
	require.Equal(t, engine.RunRunning, status)
	require.Equal(t, 1, r.queuedJobs(t, run), "the call is a job enqueued with the pass")
	r.run(t)
	require.Equal(t, 1, r.queuedJobs(t, run), "a look again does not double the job")

	require.Equal(t, 1, r.work(t))
	calls := r.app.recorded()
	require.Len(t, calls, 1)
	c := calls[0]
	require.Equal(t, "/lookup", c.Path)
	require.Equal(t, apps.EventAction, c.Header.Get(webhook.EventHeader))
	require.Equal(t, run.String(), c.Header.Get(webhook.EventIDHeader))
	require.Equal(t, run.String(), c.Header.Get("Idempotency-Key"))
	require.Equal(t, "application/json", c.Header.Get("Content-Type"))
	require.NoError(t, webhook.VerifySignature(rotated, c.Header.Get(webhook.SignatureHeader), c.Body, 0))
	require.ErrorIs(t, webhook.VerifySignature(old, c.Header.Get(webhook.SignatureHeader), c.Body, 0), webhook.ErrMismatch,
		"the secret before the rotation signs nothing")
	var body struct {
		ID       string `json:"id"`
		RunID    uuid.UUID
		RunMode  string `json:"run_mode"`
		Campaign struct{ ID, Name string }
		Step     struct{ ID, Name string }
		Contact  struct{ Email, FirstName string } `json:"contact"`
		Inputs   map[string]any
	}
	require.NoError(t, json.Unmarshal(c.Body, &body))
	contact := r.contactID(t, "a@example.net")
	require.True(t, strings.HasPrefix(body.ID, id.String()+":"+contact.String()+":"), body.ID)
	require.Equal(t, "live", body.RunMode)
	require.Equal(t, "Launch", body.Campaign.Name)
	require.Equal(t, "Look up", body.Step.Name)
	require.Equal(t, "a@example.net", body.Contact.Email)
	require.Equal(t, map[string]any{"who": "a@example.net", "tags": []any{"Lead"}}, body.Inputs, "inputs are rendered for the contact")

	_, status = r.stepRun(t, id, "a@example.net", 0)
	require.Equal(t, engine.RunSucceeded, status)
	require.Equal(t, r.clock, *r.lead(t, id, "a@example.net").Due, "the answer makes the lead due")
	require.Equal(t, 1, r.campaignEvents(t, id, events.CampaignAction))
	require.Zero(t, r.work(t), "a finished run is not called again")

	r.run(t) // past the action
	r.run(t) // the email
	require.Equal(t, 1, r.rig.work(t))
	msgs := r.smtp.Messages()
	require.Len(t, msgs, 1)
	require.Contains(t, string(msgs[0].Data), "Your account owner is Lin (12.5).")
	require.Equal(t, "completed", r.lead(t, id, "a@example.net").State)
}

func TestAFailedAppActionIsAppActionFailedAndItsOnErrorRoutesIt(t *testing.T) {
	r := newAppRig(t, func(path string, _ int) (int, string) {
		switch path {
		case "/status":
			return 502, `{"error": "down"}`
		case "/oversize":
			return 200, `{"pad": "` + strings.Repeat("x", apps.MaxAnswer) + `"}`
		case "/array":
			return 200, `[{"owner": "Lin"}]`
		case "/null":
			return 200, `null`
		case "/invalid":
			return 200, `{"owner": `
		case "/expands": // under 64 KiB as sent, over it as Postgres stores it (a space after each : and ,)
			pairs := make([]string, 6500)
			for i := range pairs {
				pairs[i] = fmt.Sprintf(`"k%04d":1`, i)
			}
			return 200, "{" + strings.Join(pairs, ",") + "}"
		}
		return 200, `{"owner": "Lin"}`
	})
	body := "Owner: {{.App.crm.owner | default \"nobody\"}}."
	stopped := map[string]string{
		"/status":   "the app answered HTTP 502",
		"/oversize": "the app's answer is larger than 64 KiB",
		"/array":    "the app's answer is not a JSON object (it is an array)",
		"/null":     "the app's answer is not a JSON object (it is null)",
		"/invalid":  "the app's answer is not a JSON object (the body is not valid JSON)",
		"/slow":     "the app did not answer within 300ms",
		"/expands":  "the app's answer could not be stored",
	}
	ids := map[string]uuid.UUID{}
	for path := range stopped {
		lead := strings.TrimPrefix(path, "/") + "@example.net"
		ids[path] = r.campaign(t, r.appSteps(path, "", body), lead)
	}
	goOn := r.campaign(t, r.appSteps("/status", "continue", body), "continue@example.net")
	left := r.campaign(t, r.appSteps("/left", "", body), "left@example.net")
	r.run(t)
	r.exec(t, `UPDATE campaign_leads SET state = 'completed', due_at = NULL WHERE campaign_id = $1`, left)
	require.Equal(t, len(stopped)+2, r.work(t))
	r.run(t)
	for _, c := range r.app.recorded() {
		require.NotEqual(t, "/left", c.Path, "a lead that left the sequence meanwhile is not sent to the app")
	}
	_, status := r.stepRun(t, left, "left@example.net", 0)
	require.Equal(t, engine.RunFailed, status)

	for path, why := range stopped {
		lead := strings.TrimPrefix(path, "/") + "@example.net"
		l := r.lead(t, ids[path], lead)
		require.Equal(t, "failed", l.State, path)
		require.Contains(t, l.Failure, "Step 1's app action failed (app_action_failed): "+why, path)
		_, status := r.stepRun(t, ids[path], lead, 0)
		require.Equal(t, engine.RunFailed, status, path)
		require.Equal(t, "completed", r.status(t, ids[path]), "the failed lead ends its campaign (%s)", path)
		require.Equal(t, []string{lead + ": " + l.Failure}, r.logLines(t, ids[path], "lead_failed"))
	}
	require.Equal(t, 1, r.campaignEvents(t, goOn, events.CampaignAction))
	r.run(t)
	require.Equal(t, 1, r.rig.work(t))
	require.Equal(t, map[string]int{"continue@example.net": 1}, r.received(), "on_error stop sends nothing; continue goes on")
	require.Contains(t, string(r.smtp.Messages()[0].Data), "Owner: nobody.", "continue captures nothing")
}

func TestABlockedAppActionWaitsForARetryThatCallsWithTheSameIDs(t *testing.T) {
	r := newAppRig(t, func(_ string, n int) (int, string) {
		if n == 1 {
			return 503, `{}`
		}
		return 200, `{"owner": "Lin"}`
	})
	id := r.campaign(t, r.appSteps("/lookup", "block", "Owner: {{.App.crm.owner}}."), "a@example.net")
	r.run(t)
	run, _ := r.stepRun(t, id, "a@example.net", 0)
	r.workJob(t, run)
	require.Zero(t, r.queuedJobs(t, run))
	r.run(t)
	_, status := r.stepRun(t, id, "a@example.net", 0)
	require.Equal(t, engine.RunBlocked, status)
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, engine.ReasonAppBlocked, l.WaitReason)
	require.True(t, l.Due.After(r.clock.Add(time.Hour)), "a blocked lead is not looked at every pass")
	r.advance(48 * time.Hour)
	r.run(t)
	require.Equal(t, "active", r.status(t, id), "a blocked lead keeps its campaign open")
	require.Zero(t, r.work(t), "nothing calls the app again on its own")

	ctx := context.Background()
	_, err := r.c.CampaignsRetryStepRun(ctx, api.CampaignsRetryStepRunParams{ID: id, RunId: uuid.New()})
	apiRefusal(t, err, http.StatusNotFound, "step_run_not_found")
	other := r.campaign(t, oneStep(), "b@example.net")
	_, err = r.c.CampaignsRetryStepRun(ctx, api.CampaignsRetryStepRunParams{ID: other, RunId: run})
	apiRefusal(t, err, http.StatusNotFound, "step_run_not_found")

	res, err := r.c.CampaignsRetryStepRun(ctx, api.CampaignsRetryStepRunParams{ID: id, RunId: run})
	require.NoError(t, err)
	require.Equal(t, api.CampaignStepRunRetryResult{ID: run, CampaignID: id, StepID: res.StepID,
		ContactID: api.NewOptUUID(r.contactID(t, "a@example.net")), Status: api.CampaignStepRunRetryResultStatusQueued}, *res)
	_, status = r.stepRun(t, id, "a@example.net", 0)
	require.Equal(t, engine.RunRunning, status)
	require.Equal(t, 1, r.queuedJobs(t, run), "the retry enqueued a new job (the first one completed)")
	_, err = r.c.CampaignsRetryStepRun(ctx, api.CampaignsRetryStepRunParams{ID: id, RunId: run})
	apiRefusal(t, err, http.StatusConflict, "step_run_not_blocked")

	r.workJob(t, run)
	calls := r.app.recorded()
	require.Len(t, calls, 2)
	for _, h := range []string{webhook.EventIDHeader, "Idempotency-Key"} {
		require.Equal(t, run.String(), calls[1].Header.Get(h))
		require.Equal(t, calls[0].Header.Get(h), calls[1].Header.Get(h), "the retry carries the same %s", h)
	}
	r.run(t)
	r.run(t)
	r.rig.work(t)
	require.Equal(t, map[string]int{"a@example.net": 1, "b@example.net": 1}, r.received())
	for _, m := range r.smtp.Messages() {
		if m.To[0] == "a@example.net" {
			require.Contains(t, string(m.Data), "Owner: Lin.")
		}
	}
	require.Equal(t, 2, r.campaignEvents(t, id, events.CampaignAction), "one campaign.action per outcome")
}
