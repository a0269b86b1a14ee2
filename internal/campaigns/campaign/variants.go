package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Limits of A/B variants: a campaign holds at most MaxVariants (the create body's limit too), a name is 1 to
// MaxVariantName characters, metadata an object of at most MaxVariantMetadata bytes, and weights run 0 to
// MaxVariantWeight. Subjects and bodies have the limits of a step.
const (
	MaxVariants          = 100
	MaxVariantName       = 100
	MaxVariantMetadata   = 16384
	MaxVariantWeight     = 100
	DefaultVariantWeight = 50
)

// VariantInput is an A/B variant as a create or an update sends it. A create names its step by StepID or
// StepPosition (neither: campaign-level); an update cannot move a variant to another step.
type VariantInput struct {
	Name, Subject, BodyPlain, BodyHTML Field[string]
	StepID                             uuid.NullUUID
	StepPosition                       Field[int32]
	Weight                             Field[int32]
	IsControl, IsActive                Field[bool]
	// Metadata is a JSON object as sent.
	Metadata Field[json.RawMessage]
}

// Variants reads a campaign's variants, oldest first (404 for an unknown campaign).
func Variants(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) ([]dbq.CampaignVariant, error) {
	if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: id}); err != nil {
		return nil, classify(err)
	}
	return queries.CampaignVariantsOf(ctx, tx, dbq.CampaignVariantsOfParams{OrganizationID: org, CampaignID: id})
}

// AddVariant adds one variant to a campaign and raises campaign.updated.
func (s *Store) AddVariant(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, in VariantInput) (dbq.CampaignVariant, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	steps, err := Steps(ctx, tx, org, id)
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	v, err := insertVariant(ctx, tx, org, id, steps, in)
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	return v, s.changed(ctx, tx, row, map[string]any{"fields": []string{"variants"}, "change": "variant_created", "variant_id": v.ID})
}

// AddVariants writes the variants of a POST /campaigns body to the new campaign in order, each naming a step
// of steps (the same body's sequence) by id or position. It is meant for CreateInput.Then: campaign.created
// covers them.
func AddVariants(ctx context.Context, tx pgx.Tx, c Campaign, steps []Step, ins []VariantInput) error {
	for i, in := range ins {
		if _, err := insertVariant(ctx, tx, c.OrganizationID, c.ID, steps, in); err != nil {
			var e *apierror.Error
			if errors.As(err, &e) && e.Status < 500 {
				return apierror.New(e.Status, e.Code, fmt.Sprintf("variants %d: %s", i+1, e.Message))
			}
			return err
		}
	}
	return nil
}

// UpdateVariant changes the fields in sends of one variant (its step stays) and raises campaign.updated.
func (s *Store) UpdateVariant(ctx context.Context, tx pgx.Tx, org, id, variantID uuid.UUID, in VariantInput) (dbq.CampaignVariant, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	cur, err := queries.CampaignVariantGet(ctx, tx, dbq.CampaignVariantGetParams{OrganizationID: org, CampaignID: id, ID: variantID})
	if err != nil {
		return dbq.CampaignVariant{}, variantClassify(err)
	}
	v, err := buildVariant(cur, in)
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	if err := checkControl(ctx, tx, v); err != nil {
		return dbq.CampaignVariant{}, err
	}
	out, err := queries.CampaignVariantUpdate(ctx, tx, dbq.CampaignVariantUpdateParams{OrganizationID: org, CampaignID: id, ID: variantID,
		Name: v.Name, Weight: v.Weight, Subject: v.Subject, BodyPlain: v.BodyPlain, BodyHtml: v.BodyHtml, IsControl: v.IsControl,
		IsActive: v.IsActive, Metadata: v.Metadata})
	if err != nil {
		return dbq.CampaignVariant{}, variantClassify(err)
	}
	return out, s.changed(ctx, tx, row, map[string]any{"fields": []string{"variants"}, "change": "variant_updated", "variant_id": variantID})
}

// DeleteVariant removes one variant and raises campaign.updated.
func (s *Store) DeleteVariant(ctx context.Context, tx pgx.Tx, org, id, variantID uuid.UUID) error {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return err
	}
	n, err := queries.CampaignVariantDelete(ctx, tx, dbq.CampaignVariantDeleteParams{OrganizationID: org, CampaignID: id, ID: variantID})
	if err != nil {
		return err
	}
	if n == 0 {
		return variantNotFound()
	}
	return s.changed(ctx, tx, row, map[string]any{"fields": []string{"variants"}, "change": "variant_deleted", "variant_id": variantID})
}

func variantNotFound() error {
	return apierror.NotFound("variant_not_found", "A/B variant not found in this campaign.")
}

func variantClassify(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return variantNotFound()
	}
	return classify(err)
}

// insertVariant validates one new variant of a campaign whose sequence is steps and writes it.
func insertVariant(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, steps []Step, in VariantInput) (dbq.CampaignVariant, error) {
	n, err := queries.CampaignVariantCount(ctx, tx, dbq.CampaignVariantCountParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	if n >= MaxVariants {
		return dbq.CampaignVariant{}, apierror.BadRequest("too_many_variants",
			fmt.Sprintf("A campaign holds at most %d A/B variants; delete one before adding another.", MaxVariants))
	}
	base := dbq.CampaignVariant{OrganizationID: org, CampaignID: id, Weight: DefaultVariantWeight, IsActive: true}
	if base.StepID, err = variantStep(steps, in); err != nil {
		return dbq.CampaignVariant{}, err
	}
	if base.ID, err = uuid.NewV7(); err != nil {
		return dbq.CampaignVariant{}, err
	}
	if !in.Name.Set {
		return dbq.CampaignVariant{}, invalid("name", fmt.Sprintf("is required (1 to %d characters).", MaxVariantName))
	}
	v, err := buildVariant(base, in)
	if err != nil {
		return dbq.CampaignVariant{}, err
	}
	if err := checkControl(ctx, tx, v); err != nil {
		return dbq.CampaignVariant{}, err
	}
	out, err := queries.CampaignVariantInsert(ctx, tx, dbq.CampaignVariantInsertParams{OrganizationID: org, CampaignID: id, ID: v.ID,
		StepID: v.StepID, Name: v.Name, Weight: v.Weight, Subject: v.Subject, BodyPlain: v.BodyPlain, BodyHtml: v.BodyHtml,
		IsControl: v.IsControl, IsActive: v.IsActive, Metadata: v.Metadata})
	return out, classify(err)
}

// variantStep resolves the step a new variant names: by id or by position among steps, or none.
func variantStep(steps []Step, in VariantInput) (uuid.NullUUID, error) {
	switch {
	case in.StepID.Valid && in.StepPosition.Set:
		return uuid.NullUUID{}, invalid("step_id", "and step_position both name a step: send one of them.")
	case in.StepID.Valid:
		if !slices.ContainsFunc(steps, func(s Step) bool { return s.ID == in.StepID.UUID }) {
			return uuid.NullUUID{}, apierror.BadRequest("step_not_found", fmt.Sprintf("step_id: %s is not a step of this campaign.", in.StepID.UUID))
		}
		return in.StepID, nil
	case in.StepPosition.Set:
		p := int(in.StepPosition.Value)
		if p < 0 || p >= len(steps) {
			return uuid.NullUUID{}, apierror.BadRequest("step_not_found",
				fmt.Sprintf("step_position: the campaign has no step at position %d (it has %d steps, from 0).", p, len(steps)))
		}
		return uuid.NullUUID{UUID: steps[p].ID, Valid: true}, nil
	}
	return uuid.NullUUID{}, nil
}

// buildVariant applies in to v and checks the result field by field. A control variant stands for its step's
// own content, so its subject and bodies are stored empty.
func buildVariant(v dbq.CampaignVariant, in VariantInput) (dbq.CampaignVariant, error) {
	in.Name.apply(&v.Name)
	in.Subject.apply(&v.Subject)
	in.BodyPlain.apply(&v.BodyPlain)
	in.BodyHTML.apply(&v.BodyHtml)
	in.Weight.apply(&v.Weight)
	in.IsControl.apply(&v.IsControl)
	in.IsActive.apply(&v.IsActive)
	if in.Metadata.Set {
		v.Metadata = nullIfEmpty(in.Metadata.Value)
	}
	if v.Metadata == nil {
		v.Metadata = json.RawMessage("{}")
	}
	v.Name = strings.TrimSpace(v.Name)
	if n := utf8.RuneCountInString(v.Name); n == 0 || n > MaxVariantName || strings.ContainsFunc(v.Name, unicode.IsControl) {
		return v, invalid("name", fmt.Sprintf("must be 1 to %d characters on one line.", MaxVariantName))
	}
	if v.Weight < 0 || v.Weight > MaxVariantWeight {
		return v, invalid("weight", fmt.Sprintf("must be 0 to %d.", MaxVariantWeight))
	}
	if strings.ContainsAny(v.Subject, "\r\n") || utf8.RuneCountInString(v.Subject) > MaxSubject {
		return v, invalid("subject", fmt.Sprintf("must be one line of at most %d characters.", MaxSubject))
	}
	if utf8.RuneCountInString(v.BodyPlain) > MaxBodyPlain {
		return v, invalid("body_plain", fmt.Sprintf("must be at most %d characters.", MaxBodyPlain))
	}
	if utf8.RuneCountInString(v.BodyHtml) > MaxBodyHTML {
		return v, invalid("body_html", fmt.Sprintf("must be at most %d characters.", MaxBodyHTML))
	}
	if len(v.Metadata) > MaxVariantMetadata {
		return v, invalid("metadata", fmt.Sprintf("must be a JSON object of at most %d bytes.", MaxVariantMetadata))
	}
	if v.IsControl {
		if !v.StepID.Valid {
			return v, invalid("is_control", "is only for a variant of a step: a campaign-level variant cannot be a control.")
		}
		v.Subject, v.BodyPlain, v.BodyHtml = "", "", ""
	}
	return v, nil
}

// checkControl refuses a second control variant of a step, naming the one it has.
func checkControl(ctx context.Context, tx pgx.Tx, v dbq.CampaignVariant) error {
	if !v.IsControl {
		return nil
	}
	other, err := queries.CampaignVariantControlOf(ctx, tx, dbq.CampaignVariantControlOfParams{OrganizationID: v.OrganizationID,
		StepID: v.StepID, ID: v.ID})
	if err != nil || len(other) == 0 {
		return err
	}
	return apierror.BadRequest("control_exists", fmt.Sprintf(
		"is_control: this step already has a control variant (%q, %s); a step has one. Unset is_control there first.",
		other[0].Name, other[0].ID))
}
