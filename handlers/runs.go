package handlers

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/runs"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Runs serves agent runs: create (202, carried on by the runs package's jobs), list, get with the event
// stream, cancel. The route table checks READ_RUNS / WRITE_RUNS; a launch intent's EXECUTE_RUNS depends on
// the body, so it is checked here.
type Runs struct {
	pool   *pgxpool.Pool
	runner *runs.Runner
}

// NewRuns builds the group over the runner the workers share.
func NewRuns(pool *pgxpool.Pool, runner *runs.Runner) *Runs {
	return &Runs{pool: pool, runner: runner}
}

// RunsCreate validates the whole body, checks EXECUTE_RUNS for a launch by a key or OAuth token, and stores
// the run queued with its first event and its job; the same credential and key answer the same run.
func (h *Runs) RunsCreate(ctx context.Context, req *api.CreateOutboundRun, params api.RunsCreateParams) (*api.OutboundRun, error) {
	if _, err := tenantCaller(ctx); err != nil {
		return nil, err
	}
	p := auth.PrincipalFrom(ctx)
	key := strings.TrimSpace(params.IdempotencyKey)
	if key == "" {
		return nil, errIdempotencyKeyRequired
	}
	in, err := runInput(req)
	if err != nil {
		return nil, err
	}
	if in.Intent == runs.IntentLaunch && !p.IsSession() && !p.Permissions.Has(auth.ExecuteRuns) {
		return nil, missingScope(auth.ExecuteRuns)
	}
	var out runs.Run
	err = db.WithOrgTx(ctx, h.pool, p.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.runner.Create(ctx, tx, p, key, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return outboundRun(out)
}

// runInput reads the body as the runs package's input: the contract's CreateOutboundRun is what a run
// stores as its input, so the two share one JSON shape.
func runInput(req *api.CreateOutboundRun) (runs.Input, error) {
	raw, err := req.MarshalJSON()
	if err != nil {
		return runs.Input{}, err
	}
	var in runs.Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return runs.Input{}, apierror.BadRequest(codeInvalidBody, "The body cannot be read as a run: "+err.Error())
	}
	return in, nil
}

// RunsList answers the organization's newest runs (at most runs.MaxListed), newest first.
func (h *Runs) RunsList(ctx context.Context) (*api.RunsListOK, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var list []runs.Run
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		list, err = h.runner.List(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.RunsListOK{Data: make([]api.OutboundRun, 0, len(list))}
	for _, r := range list {
		v, err := outboundRun(r)
		if err != nil {
			return nil, err
		}
		out.Data = append(out.Data, *v)
	}
	return out, nil
}

// RunsGet answers one run with its event stream, oldest first.
func (h *Runs) RunsGet(ctx context.Context, params api.RunsGetParams) (*api.OutboundRunDetail, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var d runs.Detail
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		d, err = h.runner.Get(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v, err := outboundRun(d.Run)
	if err != nil {
		return nil, err
	}
	out := &api.OutboundRunDetail{ID: v.ID, State: v.State, Input: v.Input, CampaignID: v.CampaignID, FrozenSenderIds: v.FrozenSenderIds,
		RecipientCount: v.RecipientCount, ActionCount: v.ActionCount, PolicyDecision: api.OutboundRunDetailPolicyDecision(v.PolicyDecision),
		ApprovalURL: v.ApprovalURL, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, Events: make([]api.RunEvent, 0, len(d.Events))}
	if v.PreflightReport.Set {
		out.PreflightReport = api.NewOptOutboundRunDetailPreflightReport(api.OutboundRunDetailPreflightReport(v.PreflightReport.Value))
	}
	if v.ErrorDetails.Set {
		out.ErrorDetails = api.NewOptOutboundRunDetailErrorDetails(api.OutboundRunDetailErrorDetails(v.ErrorDetails.Value))
	}
	for _, e := range d.Events {
		ev, err := runEvent(e)
		if err != nil {
			return nil, err
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

// RunsCancel cancels a run that has not ended (409 run_final otherwise).
func (h *Runs) RunsCancel(ctx context.Context, params api.RunsCancelParams) (*api.OutboundRun, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out runs.Run
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.runner.Cancel(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return outboundRun(out)
}

// outboundRun maps a run to the API's OutboundRun; its JSON columns are the contract's objects as stored.
func outboundRun(r runs.Run) (*api.OutboundRun, error) {
	out := &api.OutboundRun{ID: r.ID, State: api.RunState(r.State), FrozenSenderIds: r.FrozenSenderIds,
		RecipientCount: api.NewOptInt(int(r.RecipientCount)), ActionCount: api.NewOptInt(int(r.ActionCount)),
		CreatedAt: api.NewOptDateTime(r.CreatedAt), UpdatedAt: api.NewOptDateTime(r.UpdatedAt)}
	if err := out.Input.UnmarshalJSON(r.Run.Input); err != nil {
		return nil, err
	}
	out.PolicyDecision = api.OutboundRunPolicyDecision{}
	if err := out.PolicyDecision.UnmarshalJSON(r.PolicyDecision); err != nil {
		return nil, err
	}
	if r.CampaignID.Valid {
		out.CampaignID = api.NewOptUUID(r.CampaignID.UUID)
	}
	if len(r.PreflightReport) > 0 {
		var v api.OutboundRunPreflightReport
		if err := v.UnmarshalJSON(r.PreflightReport); err != nil {
			return nil, err
		}
		out.PreflightReport = api.NewOptOutboundRunPreflightReport(v)
	}
	if len(r.ErrorDetails) > 0 {
		var v api.OutboundRunErrorDetails
		if err := v.UnmarshalJSON(r.ErrorDetails); err != nil {
			return nil, err
		}
		out.ErrorDetails = api.NewOptOutboundRunErrorDetails(v)
	}
	if r.ApprovalURL != "" {
		u, err := url.Parse(r.ApprovalURL)
		if err != nil {
			return nil, err
		}
		out.ApprovalURL = api.NewOptURI(*u)
	}
	return out, nil
}

// runEvent maps one entry of a run's stream.
func runEvent(e dbq.RunEvent) (api.RunEvent, error) {
	out := api.RunEvent{ID: api.NewOptUUID(e.ID), Type: e.Type, State: api.NewOptRunState(api.RunState(e.State)),
		Message: api.NewOptString(e.Message), CreatedAt: e.CreatedAt}
	data := api.RunEventData{}
	if err := data.UnmarshalJSON(e.Data); err != nil {
		return out, err
	}
	out.Data = api.NewOptRunEventData(data)
	return out, nil
}
