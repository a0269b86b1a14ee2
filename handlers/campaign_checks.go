package handlers

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// CampaignChecks serves validate and preflight: what would keep a campaign from sending well, before it
// sends (internal/campaigns/checks). It needs only the pool and the clock, apart from the campaign writes.
// Permissions are checked by the route table.
type CampaignChecks struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewCampaignChecks builds validate and preflight over pool, reading the wall clock.
func NewCampaignChecks(pool *pgxpool.Pool) *CampaignChecks {
	return &CampaignChecks{pool: pool, now: time.Now}
}

// CampaignsValidate lists every problem of the campaign with its fix; it stores nothing.
func (h *CampaignChecks) CampaignsValidate(ctx context.Context, params api.CampaignsValidateParams) (*api.CampaignValidation, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var problems []checks.Problem
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		s, err := checks.Load(ctx, tx, org, params.ID, h.now())
		if err != nil {
			return err
		}
		problems = checks.Problems(s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignValidation{CampaignID: params.ID, Valid: true, Problems: []api.CampaignValidationProblemsItem{}}
	for _, p := range problems {
		item := api.CampaignValidationProblemsItem{Code: p.Code, Severity: api.CampaignValidationProblemsItemSeverity(p.Severity),
			Message: p.Message, Fix: api.NewOptString(p.Fix)}
		if p.StepID.Valid {
			item.StepID = api.NewOptUUID(p.StepID.UUID)
		}
		out.Valid = out.Valid && p.Severity != checks.SeverityError
		out.Problems = append(out.Problems, item)
	}
	return out, nil
}

// CampaignsRunPreflight runs the checks the campaign's preflight block turns on and stores the report.
func (h *CampaignChecks) CampaignsRunPreflight(ctx context.Context, params api.CampaignsRunPreflightParams) (*api.PreflightReport, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var r checks.Stored
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		r, err = checks.RunPreflight(ctx, tx, org, params.ID, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return preflightAPI(r), nil
}

// preflightAPI maps a stored report.
func preflightAPI(r checks.Stored) *api.PreflightReport {
	out := &api.PreflightReport{ID: api.NewOptUUID(r.ID), OrganizationID: api.NewOptUUID(r.OrganizationID),
		CampaignID: r.CampaignID, Passed: r.Passed, Score: r.Score, Checks: []api.PreflightReportChecksItem{},
		Recommendations: r.Recommendations, CreatedAt: api.NewOptDateTime(r.CreatedAt)}
	for _, c := range r.Checks {
		out.Checks = append(out.Checks, api.PreflightReportChecksItem{Key: api.NewOptString(c.Key), Passed: api.NewOptBool(c.Passed),
			Severity: api.NewOptString(string(c.Severity)), Message: api.NewOptString(c.Message), Remediation: api.NewOptString(c.Remediation)})
	}
	return out
}
