package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/testrun"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

const (
	defaultTestRunPage = 20
	maxTestRunPage     = 100
)

// CampaignsTest starts a test run of the campaign's sequence against one prospect (202).
func (h *CampaignTests) CampaignsTest(ctx context.Context, req *api.StartCampaignTest, params api.CampaignsTestParams) (*api.CampaignTestRun, error) {
	in := testrun.StartInput{ProspectEmail: req.ProspectEmail.Value, ContactID: nullUUID(req.ContactID),
		MailboxID: nullUUID(req.MailboxID), Only: onlyMailboxes(ctx)}
	return h.oneRun(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (testrun.Run, error) {
		c, err := h.store.Get(ctx, tx, org, params.ID)
		if err != nil {
			return testrun.Run{}, err
		}
		return h.runs.Start(ctx, tx, h.jobs, org, c, in)
	})
}

// CampaignsGetTestRun returns one test run of the campaign.
func (h *CampaignTests) CampaignsGetTestRun(ctx context.Context, params api.CampaignsGetTestRunParams) (*api.CampaignTestRun, error) {
	return h.oneRun(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (testrun.Run, error) {
		if _, err := h.store.Get(ctx, tx, org, params.ID); err != nil {
			return testrun.Run{}, err
		}
		return testrun.Get(ctx, tx, org, params.ID, params.RunId)
	})
}

// CampaignsCancelTestRun cancels a running test run of the campaign.
func (h *CampaignTests) CampaignsCancelTestRun(ctx context.Context, params api.CampaignsCancelTestRunParams) (*api.CampaignTestRun, error) {
	return h.oneRun(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (testrun.Run, error) {
		if _, err := h.store.Get(ctx, tx, org, params.ID); err != nil {
			return testrun.Run{}, err
		}
		return h.runs.Cancel(ctx, tx, org, params.ID, params.RunId)
	})
}

// oneRun runs a test-run operation in the caller's organization and maps its result.
func (h *CampaignTests) oneRun(ctx context.Context, op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (testrun.Run, error)) (*api.CampaignTestRun, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var run testrun.Run
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		run, err = op(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := testRunAPI(run)
	return &out, nil
}

// CampaignsListTestRuns lists the campaign's test runs newest first; the cursor is the last run id of the
// previous page.
func (h *CampaignTests) CampaignsListTestRuns(ctx context.Context, params api.CampaignsListTestRunsParams) (*api.CampaignsListTestRunsOK, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultTestRunPage, maxTestRunPage, true)
	if err != nil {
		return nil, err
	}
	rows, hasMore, err := keysetRows(ctx, h.pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]testrun.Run, error) {
			if _, err := h.store.Get(ctx, tx, org, params.ID); err != nil {
				return nil, err
			}
			return testrun.List(ctx, tx, org, params.ID, nullUUID(params.Cursor), rowLimit)
		}, nil)
	if err != nil {
		return nil, err
	}
	out := &api.CampaignsListTestRunsOK{Data: make([]api.CampaignTestRun, 0, len(rows))}
	for _, r := range rows {
		out.Data = append(out.Data, testRunAPI(r))
	}
	page := api.CampaignsListTestRunsOKPagination{HasMore: api.NewOptBool(hasMore)}
	if hasMore {
		page.NextCursor = api.NewOptString(rows[len(rows)-1].ID.String())
	}
	out.Pagination = api.NewOptCampaignsListTestRunsOKPagination(page)
	return out, nil
}

// testRunAPI maps a run; a run personalised from the address alone answers the zero UUID as its contact.
func testRunAPI(r testrun.Run) api.CampaignTestRun {
	out := api.CampaignTestRun{ID: r.ID, OrganizationID: api.NewOptUUID(r.OrganizationID), CampaignID: r.CampaignID,
		ContactID: r.ContactID.UUID, ProspectEmail: r.ProspectEmail, State: api.CampaignTestRunState(r.State),
		Steps: make([]api.CampaignTestStep, 0, len(r.Progress)), AppVariables: api.CampaignTestRunAppVariables{},
		StepCount: api.NewOptInt(len(r.Progress)), CreatedAt: api.NewOptDateTime(r.CreatedAt), UpdatedAt: api.NewOptDateTime(r.UpdatedAt)}
	if r.MailboxID.Valid {
		out.EmailAccountID = api.NewOptUUID(r.MailboxID.UUID)
	}
	if r.CurrentStepID.Valid {
		out.CurrentStepID = api.NewOptUUID(r.CurrentStepID.UUID)
	}
	if r.CompletedAt != nil {
		out.CompletedAt = api.NewOptDateTime(*r.CompletedAt)
	}
	if issue := r.Issue(); issue != nil {
		out.Error = api.NewOptIssue(issueAPI(*issue))
	}
	for _, s := range r.Progress {
		step := api.CampaignTestStep{StepID: s.StepID, Name: api.NewOptString(s.Name), Kind: s.Kind,
			State: api.CampaignTestStepState(s.State)}
		if s.Outcome != "" {
			step.Outcome = api.NewOptString(s.Outcome)
		}
		if s.Detail != "" {
			step.Detail = api.NewOptString(s.Detail)
		}
		if s.TaskID.Valid {
			step.TaskID = api.NewOptUUID(s.TaskID.UUID)
		}
		if s.MessageID != "" {
			step.MessageID = api.NewOptString(s.MessageID)
		}
		if s.StartedAt != nil {
			step.StartedAt = api.NewOptDateTime(*s.StartedAt)
		}
		if s.CompletedAt != nil {
			step.CompletedAt = api.NewOptDateTime(*s.CompletedAt)
		}
		if s.Error != nil {
			step.Error = api.NewOptIssue(issueAPI(*s.Error))
		}
		out.Steps = append(out.Steps, step)
	}
	return out
}

func issueAPI(i testrun.Issue) api.Issue {
	out := api.Issue{Code: i.Code, Message: i.Message}
	if i.Fix != "" {
		out.Fix = api.NewOptString(i.Fix)
	}
	return out
}
