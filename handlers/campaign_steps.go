package handlers

import (
	"context"
	"encoding/json"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// inOrg runs op in the caller's organization-scoped transaction.
func (h *Campaigns) inOrg(ctx context.Context, op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) error) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return op(ctx, tx, org)
	})
}

// CampaignsListSteps returns the campaign's sequence in position order.
func (h *Campaigns) CampaignsListSteps(ctx context.Context, params api.CampaignsListStepsParams) ([]api.CampaignStep, error) {
	var steps []campaign.Step
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		steps, err = campaign.SequenceOf(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]api.CampaignStep, len(steps))
	for i, s := range steps {
		out[i] = stepAPI(s)
	}
	return out, nil
}

// CampaignsCreateStep adds a step at the end of the sequence or at the position sent.
func (h *Campaigns) CampaignsCreateStep(ctx context.Context, req api.OptCampaignStepCreate, params api.CampaignsCreateStepParams) (*api.CampaignStep, error) {
	in := stepInputOf(req.Value)
	return h.step(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Step, error) {
		return h.store.AddStep(ctx, tx, org, params.ID, in)
	})
}

// CampaignsUpdateStep changes a step's fields and, with position, moves it.
func (h *Campaigns) CampaignsUpdateStep(ctx context.Context, req *api.CampaignStepUpdate, params api.CampaignsUpdateStepParams) (*api.CampaignStep, error) {
	in := campaign.StepInput{
		Name:        optField(req.Name.Value, req.Name.Set, same[string]),
		Subject:     optField(req.Subject.Value, req.Subject.Set, same[string]),
		BodyPlain:   optField(req.BodyPlain.Value, req.BodyPlain.Set, same[string]),
		BodyHTML:    optField(req.BodyHTML.Value, req.BodyHTML.Set, same[string]),
		BodySync:    optField(req.BodySync.Value, req.BodySync.Set, same[bool]),
		BodyCode:    optField(req.BodyCode.Value, req.BodyCode.Set, same[bool]),
		WaitAfter:   optField(req.WaitAfter.Value, req.WaitAfter.Set, int32Of),
		ThreadReply: optField(req.ThreadReply.Value, req.ThreadReply.Set, same[bool]),
		Kind:        optField(req.Kind.Value, req.Kind.Set, stringOf[api.CampaignStepUpdateKind]),
		Conditions:  rawObject(req.Conditions.Value, req.Conditions.Set),
		Action:      rawObject(req.Action.Value, req.Action.Set),
		OnTimeout:   optField(req.OnTimeout.Value, req.OnTimeout.Set, stringOf[api.CampaignStepUpdateOnTimeout]),
		Position:    optField(req.Position.Value, req.Position.Set, int32Of),
	}
	return h.step(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Step, error) {
		return h.store.UpdateStep(ctx, tx, org, params.ID, params.Sid, in)
	})
}

// CampaignsDeleteStep removes a step with its step-scoped variants and attachments.
func (h *Campaigns) CampaignsDeleteStep(ctx context.Context, params api.CampaignsDeleteStepParams) error {
	return h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
		return h.store.DeleteStep(ctx, tx, org, params.ID, params.Sid)
	})
}

// step runs a step operation in the caller's organization and maps its result.
func (h *Campaigns) step(ctx context.Context, op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Step, error)) (*api.CampaignStep, error) {
	var out campaign.Step
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		out, err = op(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := stepAPI(out)
	return &res, nil
}

// objectAPI spells a stored JSON object as a free-form object of the API (unset when absent).
func objectAPI[M ~map[string]jx.Raw](raw json.RawMessage) (M, bool) {
	var fields map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, false
	}
	out := make(M, len(fields))
	for k, v := range fields {
		out[k] = jx.Raw(v)
	}
	return out, true
}

// stepAPI maps a stored step.
func stepAPI(s campaign.Step) api.CampaignStep {
	out := api.CampaignStep{
		ID: s.ID, Name: api.NewOptString(s.Name), Subject: api.NewOptString(s.Subject),
		BodyPlain: api.NewOptString(s.BodyPlain), BodyHTML: api.NewOptString(s.BodyHTML),
		BodySync: api.NewOptBool(s.BodySync), BodyCode: api.NewOptBool(s.BodyCode),
		WaitAfter: api.NewOptInt(int(s.WaitAfter)), ThreadReply: api.NewOptBool(s.ThreadReply),
		Position: int(s.Position), Kind: api.CampaignStepKind(s.Kind),
		OnTimeout: api.NewOptCampaignStepOnTimeout(api.CampaignStepOnTimeout(s.OnTimeout)),
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	if m, ok := objectAPI[api.CampaignStepConditions](s.Conditions); ok {
		out.Conditions = api.NewOptCampaignStepConditions(m)
	}
	if m, ok := objectAPI[api.CampaignStepAction](s.Action); ok {
		out.Action = api.NewOptCampaignStepAction(m)
	}
	return out
}
