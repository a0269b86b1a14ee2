package handlers

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// CampaignStepRuns implements the step-run operation of the Campaigns group: a blocked app_action step run
// retried under the same id.
type CampaignStepRuns struct {
	pool *pgxpool.Pool
	jobs events.Inserter
	now  func() time.Time
}

// NewCampaignStepRuns builds the group; jobs (a River client, insert-only is enough) enqueues the retried call.
func NewCampaignStepRuns(pool *pgxpool.Pool, jobs events.Inserter) *CampaignStepRuns {
	return &CampaignStepRuns{pool: pool, jobs: jobs, now: time.Now}
}

// CampaignsRetryStepRun runs a blocked step run again: the same id (the app sees the same X-Service-Event-Id
// and Idempotency-Key), running, its job queued; the answer comes back at once.
func (h *CampaignStepRuns) CampaignsRetryStepRun(ctx context.Context, params api.CampaignsRetryStepRunParams) (*api.CampaignStepRunRetryResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var r dbq.CampaignStepRun
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if r, err = engine.RetryStepRun(ctx, tx, h.jobs, org, params.ID, params.RunId, h.now()); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "campaign.step_run_retried",
			EntityType: audit.EntityCampaign, EntityID: r.CampaignID.String(),
			Metadata: map[string]any{"step_run_id": r.ID, "step_id": r.StepID, "contact_id": r.ContactID}})
	})
	if err != nil {
		return nil, err
	}
	return &api.CampaignStepRunRetryResult{ID: r.ID, CampaignID: r.CampaignID, StepID: api.NewOptUUID(r.StepID),
		ContactID: api.NewOptUUID(r.ContactID), Status: api.CampaignStepRunRetryResultStatusQueued}, nil
}
