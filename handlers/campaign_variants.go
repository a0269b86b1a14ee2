package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// CampaignsListAbVariants returns every A/B variant of the campaign, oldest first, without pagination.
func (h *Campaigns) CampaignsListAbVariants(ctx context.Context, params api.CampaignsListAbVariantsParams) (*api.CampaignABVariantList, error) {
	var rows []dbq.CampaignVariant
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		rows, err = campaign.Variants(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignABVariantList{Data: make([]api.CampaignABVariant, len(rows))}
	for i, v := range rows {
		out.Data[i] = variantAPI(v)
	}
	return out, nil
}

// CampaignsCreateAbVariant adds a variant to the campaign or to one of its steps.
func (h *Campaigns) CampaignsCreateAbVariant(ctx context.Context, req *api.CampaignABVariantCreate, params api.CampaignsCreateAbVariantParams) (*api.CampaignABVariant, error) {
	in := variantInputOf(*req)
	return h.variant(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (dbq.CampaignVariant, error) {
		return h.store.AddVariant(ctx, tx, org, params.ID, in)
	})
}

// CampaignsUpdateAbVariant changes a variant's fields; its step stays.
func (h *Campaigns) CampaignsUpdateAbVariant(ctx context.Context, req *api.CampaignABVariantUpdate, params api.CampaignsUpdateAbVariantParams) (*api.CampaignABVariant, error) {
	in := campaign.VariantInput{
		Name:      optField(req.Name.Value, req.Name.Set, same[string]),
		Subject:   optField(req.Subject.Value, req.Subject.Set, same[string]),
		BodyPlain: optField(req.BodyPlain.Value, req.BodyPlain.Set, same[string]),
		BodyHTML:  optField(req.BodyHTML.Value, req.BodyHTML.Set, same[string]),
		Weight:    optField(req.Weight.Value, req.Weight.Set, int32Of),
		IsControl: optField(req.IsControl.Value, req.IsControl.Set, same[bool]),
		IsActive:  optField(req.IsActive.Value, req.IsActive.Set, same[bool]),
		Metadata:  rawObject(req.Metadata.Value, req.Metadata.Set),
	}
	return h.variant(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (dbq.CampaignVariant, error) {
		return h.store.UpdateVariant(ctx, tx, org, params.ID, params.VariantId, in)
	})
}

// CampaignsDeleteAbVariant removes a variant.
func (h *Campaigns) CampaignsDeleteAbVariant(ctx context.Context, params api.CampaignsDeleteAbVariantParams) error {
	return h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
		return h.store.DeleteVariant(ctx, tx, org, params.ID, params.VariantId)
	})
}

// variant runs a variant operation in the caller's organization and maps its result.
func (h *Campaigns) variant(ctx context.Context, op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (dbq.CampaignVariant, error)) (*api.CampaignABVariant, error) {
	var out dbq.CampaignVariant
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		out, err = op(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := variantAPI(out)
	return &res, nil
}

// variantInputOf maps a variant of POST /campaigns/{id}/ab-variants or of POST /campaigns.
func variantInputOf(v api.CampaignABVariantCreate) campaign.VariantInput {
	in := campaign.VariantInput{
		Name:         campaign.Of(v.Name),
		Subject:      optField(v.Subject.Value, v.Subject.Set, same[string]),
		BodyPlain:    optField(v.BodyPlain.Value, v.BodyPlain.Set, same[string]),
		BodyHTML:     optField(v.BodyHTML.Value, v.BodyHTML.Set, same[string]),
		StepPosition: optField(v.StepPosition.Value, v.StepPosition.Set, int32Of),
		Weight:       optField(v.Weight.Value, v.Weight.Set, int32Of),
		IsControl:    optField(v.IsControl.Value, v.IsControl.Set, same[bool]),
		IsActive:     optField(v.IsActive.Value, v.IsActive.Set, same[bool]),
		Metadata:     rawObject(v.Metadata.Value, v.Metadata.Set),
	}
	if id, ok := v.StepID.Get(); ok {
		in.StepID = uuid.NullUUID{UUID: id, Valid: true}
	}
	return in
}

// variantsThen writes the variants of a POST /campaigns body once its campaign and steps exist (nil for none).
func variantsThen(vs []api.CampaignABVariantCreate) func(ctx context.Context, tx pgx.Tx, c campaign.Campaign, steps []campaign.Step) error {
	if len(vs) == 0 {
		return nil
	}
	ins := make([]campaign.VariantInput, len(vs))
	for i, v := range vs {
		ins[i] = variantInputOf(v)
	}
	return func(ctx context.Context, tx pgx.Tx, c campaign.Campaign, steps []campaign.Step) error {
		return campaign.AddVariants(ctx, tx, c, steps, ins)
	}
}

// variantAPI maps a stored variant.
func variantAPI(v dbq.CampaignVariant) api.CampaignABVariant {
	out := api.CampaignABVariant{
		ID: v.ID, CampaignID: v.CampaignID, StepID: api.OptNilUUID{Set: true, Null: true}, Name: v.Name,
		Weight: api.NewOptInt(int(v.Weight)), Subject: api.NewOptString(v.Subject), BodyHTML: api.NewOptString(v.BodyHtml),
		BodyPlain: api.NewOptString(v.BodyPlain), IsControl: api.NewOptBool(v.IsControl), IsActive: api.NewOptBool(v.IsActive),
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
	}
	if v.StepID.Valid {
		out.StepID = api.NewOptNilUUID(v.StepID.UUID)
	}
	if m, ok := objectAPI[api.CampaignABVariantMetadata](v.Metadata); ok {
		out.Metadata = api.NewOptCampaignABVariantMetadata(m)
	}
	return out
}
