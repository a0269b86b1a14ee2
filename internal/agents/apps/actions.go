package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
)

// Actions makes app_action step runs' calls: it reads what the call is made from, calls the app outside any
// transaction, and records the outcome through the engine (engine.FinishAppAction).
type Actions struct {
	pool    *pgxpool.Pool
	keyring *seal.Keyring
	client  *Client
	now     func() time.Time
}

// NewActions builds the app_action runner; now is the clock outcomes are recorded at (the engine's: a lead
// made due by an answer is due on the engine's time; nil is time.Now).
func NewActions(pool *pgxpool.Pool, keyring *seal.Keyring, client *Client, now func() time.Time) *Actions {
	if now == nil {
		now = time.Now
	}
	return &Actions{pool: pool, keyring: keyring, client: client, now: now}
}

// call is one app_action call, ready to send, or the reason it cannot be made.
type call struct {
	req     Request
	step    campaign.AppAction
	failure string
}

// Run makes the call of step run a.StepRunID and records its outcome; a run that is not running (finished,
// or gone with its campaign) is left alone. complete, when set, completes the job in the recording
// transaction, so a blocked run is never visible while its job still counts as running (which would keep a
// retry's job from being inserted).
func (a *Actions) Run(ctx context.Context, jobs events.Inserter, args engine.AppActionArgs, complete func(ctx context.Context, tx pgx.Tx) error) error {
	c, ok, err := a.prepare(ctx, args)
	if err != nil || !ok {
		return err
	}
	out := engine.AppOutcome{Step: c.step, Failure: c.failure}
	if c.failure == "" {
		out.Output, out.Failure = a.client.Answer(a.client.Do(ctx, c.req))
		if ctx.Err() != nil {
			return ctx.Err() // the job was stopped (shutdown): it runs again under the same id
		}
	}
	return db.WithOrgTx(ctx, a.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		if _, _, err := engine.FinishAppAction(ctx, tx, events.NewOutbox(jobs), args.OrganizationID, args.StepRunID, out, a.now()); err != nil {
			return err
		}
		if complete != nil {
			return complete(ctx, tx)
		}
		return nil
	})
}

// prepare reads what the call is made from: the run (ok false when it is not running), the step's config, the
// connection and its secret, and builds the signed request's body.
func (a *Actions) prepare(ctx context.Context, args engine.AppActionArgs) (call, bool, error) {
	var c call
	var run dbq.AppActionContextRow
	var conn dbq.AppConnection
	found := false
	err := db.WithOrgTx(ctx, a.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		run, err = queries.AppActionContext(ctx, tx, dbq.AppActionContextParams{OrganizationID: args.OrganizationID, ID: args.StepRunID})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil || run.Status != engine.RunRunning {
			return err
		}
		c.step = campaign.Step{Kind: campaign.StepAction, Action: run.Action}.AppAction()
		if !run.LeadOpen { // it replied, unsubscribed or was removed meanwhile: the app is not called for it
			c.failure = "the lead left the sequence before the call was made"
			found = true
			return nil
		}
		conn, err = queries.AppConnectionGet(ctx, tx, dbq.AppConnectionGetParams{OrganizationID: args.OrganizationID, ID: c.step.ConnectionID})
		if errors.Is(err, pgx.ErrNoRows) {
			c.failure = fmt.Sprintf("app connection %s no longer exists", c.step.ConnectionID)
			err = nil
		}
		found = err == nil
		return err
	})
	if err != nil || !found || c.failure != "" {
		return c, found, err
	}
	secret, err := OpenSecret(a.keyring, conn)
	if err != nil {
		return c, false, err
	}
	body, err := actionBody(run, c.step, a.now())
	if err != nil {
		return c, false, err
	}
	c.req = Request{BaseURL: conn.BaseUrl, Path: c.step.Path, Secret: secret, Event: EventAction, ID: run.ID, Body: body, At: a.now()}
	return c, true, nil
}

// actionBody is an app.action request's body: {id "<campaign>:<contact>:<step>", run_id, run_mode live,
// campaign {id, name}, step {id, name}, contact (standard and custom fields), app (captured so far), inputs
// (the step's, each string rendered as a template for the contact), requested_at}.
func actionBody(run dbq.AppActionContextRow, step campaign.AppAction, at time.Time) ([]byte, error) {
	contact, err := compose.ContactOf(dbq.ComposeContactRow{ID: run.ContactID, Email: run.Email, FirstName: run.FirstName,
		LastName: run.LastName, Company: run.Company, Phone: run.Phone, CustomFields: run.CustomFields})
	if err != nil {
		return nil, err
	}
	var app, custom map[string]any
	if err := json.Unmarshal(run.App, &app); err != nil {
		return nil, fmt.Errorf("apps: the lead's app values: %w", err)
	}
	if err := json.Unmarshal(run.CustomFields, &custom); err != nil {
		return nil, fmt.Errorf("apps: the contact's custom fields: %w", err)
	}
	var inputs any = map[string]any{}
	if len(step.Inputs) > 0 && string(step.Inputs) != "null" {
		if err := json.Unmarshal(step.Inputs, &inputs); err != nil {
			return nil, fmt.Errorf("apps: the step's inputs: %w", err)
		}
	}
	data := template.Data{Contact: contact.Contact, App: app, Campaign: template.Campaign{Name: run.CampaignName}}
	return json.Marshal(map[string]any{
		"id":       fmt.Sprintf("%s:%s:%s", run.CampaignID, run.ContactID, run.StepID),
		"run_id":   run.ID,
		"run_mode": "live",
		"campaign": map[string]any{"id": run.CampaignID, "name": run.CampaignName},
		"step":     map[string]any{"id": run.StepID, "name": run.StepName},
		"contact": map[string]any{"id": run.ContactID, "email": run.Email, "first_name": run.FirstName,
			"last_name": run.LastName, "company": run.Company, "phone": run.Phone, "custom_fields": custom},
		"app":          app,
		"inputs":       render(inputs, &data, run.ContactID, run.StepID),
		"requested_at": at.UTC().Format(time.RFC3339Nano),
	})
}

// render fills in every string of v as a template for data; a string that does not parse is sent as written,
// and a variable with no value renders empty.
func render(v any, data *template.Data, contact, step uuid.UUID) any {
	switch x := v.(type) {
	case string:
		m, err := template.ParseMessage("", x, "")
		if err != nil || m.Plain == nil {
			return x
		}
		return m.Render(data, template.Options{Seed: template.Seed(contact, step)}).Plain
	case map[string]any:
		for k, e := range x {
			x[k] = render(e, data, contact, step)
		}
	case []any:
		for i, e := range x {
			x[i] = render(e, data, contact, step)
		}
	}
	return v
}

// Worker works engine.AppActionArgs.
type Worker struct {
	river.WorkerDefaults[engine.AppActionArgs]
	Actions *Actions
}

// Timeout bounds one job: the call's own timeout, and the reads and the record around it.
func (w *Worker) Timeout(*river.Job[engine.AppActionArgs]) time.Duration {
	if w.Actions == nil {
		return Timeout + 30*time.Second
	}
	return w.Actions.client.timeout + 30*time.Second
}

// Work makes the call and records its outcome, completing the job in the same transaction.
func (w *Worker) Work(ctx context.Context, job *river.Job[engine.AppActionArgs]) error {
	return w.Actions.Run(ctx, river.ClientFromContext[pgx.Tx](ctx), job.Args, func(ctx context.Context, tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}
