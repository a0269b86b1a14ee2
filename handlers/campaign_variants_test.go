package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

func (r campaignRig) addVariant(t *testing.T, id uuid.UUID, v api.CampaignABVariantCreate) (*api.CampaignABVariant, error) {
	t.Helper()
	return r.c.CampaignsCreateAbVariant(context.Background(), &v, api.CampaignsCreateAbVariantParams{ID: id})
}

func (r campaignRig) variants(t *testing.T, id uuid.UUID) []api.CampaignABVariant {
	t.Helper()
	out, err := r.c.CampaignsListAbVariants(context.Background(), api.CampaignsListAbVariantsParams{ID: id})
	require.NoError(t, err)
	return out.Data
}

// variantSteps maps each variant's name to the name of its step ("" for campaign-level).
func variantSteps(vs []api.CampaignABVariant, steps []api.CampaignStep) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.Name] = ""
		for _, s := range steps {
			if id, ok := v.StepID.Get(); ok && id == s.ID {
				out[v.Name] = s.Name.Value
			}
		}
	}
	return out
}

func TestCampaignVariantsFollowTheControlAndStepRules(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "AB", Steps: named("A", "B")})
	steps := r.steps(t, cmp.ID)
	a, b := steps[0], steps[1]

	brand, err := r.addVariant(t, cmp.ID, api.CampaignABVariantCreate{Name: " Brand ", Subject: api.NewOptString("Hi"),
		Metadata: api.NewOptCampaignABVariantCreateMetadata(api.CampaignABVariantCreateMetadata{"angle": jx.Raw(`"price"`)})})
	require.NoError(t, err)
	require.Equal(t, "Brand", brand.Name)
	require.True(t, brand.StepID.Set && brand.StepID.Null, "no step: campaign-level")
	require.Equal(t, 50, brand.Weight.Value)
	require.True(t, brand.IsActive.Value)
	require.False(t, brand.IsControl.Value)
	require.JSONEq(t, `"price"`, string(brand.Metadata.Value["angle"]))

	// A control stands for its step's own content: what it is sent is not stored.
	control, err := r.addVariant(t, cmp.ID, api.CampaignABVariantCreate{Name: "Original", StepID: api.NewOptUUID(a.ID),
		IsControl: api.NewOptBool(true), Subject: api.NewOptString("ignored"), BodyPlain: api.NewOptString("ignored"), Weight: api.NewOptInt(0)})
	require.NoError(t, err)
	require.Equal(t, a.ID, control.StepID.Value)
	require.True(t, control.IsControl.Value)
	require.Empty(t, control.Subject.Value)
	require.Empty(t, control.BodyPlain.Value)
	require.Equal(t, 0, control.Weight.Value)

	_, err = r.addVariant(t, cmp.ID, api.CampaignABVariantCreate{Name: "Second", StepID: api.NewOptUUID(a.ID), IsControl: api.NewOptBool(true)})
	requireAPIError(t, err, 400, "control_exists")
	_, err = r.addVariant(t, cmp.ID, api.CampaignABVariantCreate{Name: "Global", IsControl: api.NewOptBool(true)})
	requireAPIError(t, err, 400, "invalid_is_control")

	// The step is named by id or by position, and must be one of this campaign's.
	other := r.campaign(t, api.CampaignCreate{Name: "Other", Steps: named("X")})
	for _, tc := range []struct {
		name string
		v    api.CampaignABVariantCreate
		code string
	}{
		{"another campaign's step", api.CampaignABVariantCreate{Name: "x", StepID: api.NewOptUUID(r.steps(t, other.ID)[0].ID)}, "step_not_found"},
		{"an unknown step", api.CampaignABVariantCreate{Name: "x", StepID: api.NewOptUUID(uuid.New())}, "step_not_found"},
		{"a position past the end", api.CampaignABVariantCreate{Name: "x", StepPosition: api.NewOptInt(2)}, "step_not_found"},
		{"both id and position", api.CampaignABVariantCreate{Name: "x", StepID: api.NewOptUUID(a.ID), StepPosition: api.NewOptInt(0)}, "invalid_step_id"},
		{"an empty name", api.CampaignABVariantCreate{Name: "  "}, "invalid_name"},
		{"a long name", api.CampaignABVariantCreate{Name: strings.Repeat("n", 101)}, "invalid_name"},
		{"a weight over 100", api.CampaignABVariantCreate{Name: "x", Weight: api.NewOptInt(101)}, "invalid_weight"},
		{"a negative weight", api.CampaignABVariantCreate{Name: "x", Weight: api.NewOptInt(-1)}, "invalid_weight"},
		{"a two-line subject", api.CampaignABVariantCreate{Name: "x", Subject: api.NewOptString("a\nb")}, "invalid_subject"},
		{"a long body", api.CampaignABVariantCreate{Name: "x", BodyPlain: api.NewOptString(strings.Repeat("b", 100001))}, "invalid_body_plain"},
		{"large metadata", api.CampaignABVariantCreate{Name: "x", Metadata: api.NewOptCampaignABVariantCreateMetadata(
			api.CampaignABVariantCreateMetadata{"blob": jx.Raw(`"` + strings.Repeat("m", 16384) + `"`)})}, "invalid_metadata"},
	} {
		_, err := r.addVariant(t, cmp.ID, tc.v)
		requireAPIError(t, err, 400, tc.code)
	}
	alt, err := r.addVariant(t, cmp.ID, api.CampaignABVariantCreate{Name: "Alt B", StepPosition: api.NewOptInt(1), Weight: api.NewOptInt(100),
		Subject: api.NewOptString("Another angle")})
	require.NoError(t, err)
	require.Equal(t, b.ID, alt.StepID.Value)
	require.Equal(t, map[string]string{"Brand": "", "Original": "A", "Alt B": "B"}, variantSteps(r.variants(t, cmp.ID), steps))

	// Updates follow the same rules; a variant made the control loses its content.
	upd := func(id uuid.UUID, v api.CampaignABVariantUpdate) (*api.CampaignABVariant, error) {
		return r.c.CampaignsUpdateAbVariant(ctx, &v, api.CampaignsUpdateAbVariantParams{ID: cmp.ID, VariantId: id})
	}
	_, err = upd(brand.ID, api.CampaignABVariantUpdate{IsControl: api.NewOptBool(true)})
	requireAPIError(t, err, 400, "invalid_is_control")
	_, err = upd(alt.ID, api.CampaignABVariantUpdate{Weight: api.NewOptInt(101)})
	requireAPIError(t, err, 400, "invalid_weight")
	got, err := upd(alt.ID, api.CampaignABVariantUpdate{IsControl: api.NewOptBool(true), Name: api.NewOptString("B original"), IsActive: api.NewOptBool(false)})
	require.NoError(t, err)
	require.Equal(t, b.ID, got.StepID.Value, "the step stays")
	require.Equal(t, "B original", got.Name)
	require.True(t, got.IsControl.Value)
	require.False(t, got.IsActive.Value)
	require.Empty(t, got.Subject.Value)
	require.Equal(t, 100, got.Weight.Value)
	alt2, err := r.addVariant(t, cmp.ID, api.CampaignABVariantCreate{Name: "Alt B 2", StepID: api.NewOptUUID(b.ID)})
	require.NoError(t, err)
	_, err = upd(alt2.ID, api.CampaignABVariantUpdate{IsControl: api.NewOptBool(true)})
	requireAPIError(t, err, 400, "control_exists")
	_, err = upd(got.ID, api.CampaignABVariantUpdate{IsControl: api.NewOptBool(true), Weight: api.NewOptInt(30)})
	require.NoError(t, err, "a control is not its own rival")

	// Delete answers 204 once; deleting a step takes its variants.
	require.NoError(t, r.c.CampaignsDeleteAbVariant(ctx, api.CampaignsDeleteAbVariantParams{ID: cmp.ID, VariantId: brand.ID}))
	requireAPIError(t, r.c.CampaignsDeleteAbVariant(ctx, api.CampaignsDeleteAbVariantParams{ID: cmp.ID, VariantId: brand.ID}), 404, "variant_not_found")
	_, err = upd(brand.ID, api.CampaignABVariantUpdate{Name: api.NewOptString("back")})
	requireAPIError(t, err, 404, "variant_not_found")
	require.NoError(t, r.c.CampaignsDeleteStep(ctx, api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: b.ID}))
	require.Equal(t, map[string]string{"Original": "A"}, variantSteps(r.variants(t, cmp.ID), r.steps(t, cmp.ID)))
	// Four creates, two updates and a delete each raised campaign.updated.
	require.EqualValues(t, 7, campaignEvents(t, r, "campaign.updated", "fields", `["variants"]`))
}

func TestCampaignCreateTakesVariantsNamingItsStepsByPosition(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "All at once", Steps: named("A", "B"), Variants: []api.CampaignABVariantCreate{
		{Name: "Original A", StepPosition: api.NewOptInt(0), IsControl: api.NewOptBool(true)},
		{Name: "Alt B", StepPosition: api.NewOptInt(1), Subject: api.NewOptString("Other")},
		{Name: "Everywhere"},
	}})
	require.Equal(t, map[string]string{"Original A": "A", "Alt B": "B", "Everywhere": ""}, variantSteps(r.variants(t, cmp.ID), r.steps(t, cmp.ID)))

	// A refused variant refuses the whole campaign, naming which variant broke which rule.
	count := func() int64 {
		return orgInt(t, r.env, r.org, `SELECT count(*) FROM campaigns WHERE organization_id = $1`, r.org)
	}
	before := count()
	for _, tc := range []struct {
		vs   []api.CampaignABVariantCreate
		code string
	}{
		{[]api.CampaignABVariantCreate{{Name: "ok"}, {Name: "past", StepPosition: api.NewOptInt(2)}}, "step_not_found"},
		{[]api.CampaignABVariantCreate{{Name: "c1", StepPosition: api.NewOptInt(0), IsControl: api.NewOptBool(true)},
			{Name: "c2", StepPosition: api.NewOptInt(0), IsControl: api.NewOptBool(true)}}, "control_exists"},
		{[]api.CampaignABVariantCreate{{Name: "heavy", Weight: api.NewOptInt(500)}}, "invalid_weight"},
	} {
		_, err := r.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Refused", Steps: named("A", "B"), Variants: tc.vs}, api.CampaignsCreateParams{})
		requireAPIError(t, err, 400, tc.code)
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.Contains(t, se.Response.Message, fmt.Sprintf("variants %d:", len(tc.vs)))
	}
	require.Equal(t, before, count())

	// A campaign holds at most 100 variants.
	many := make([]api.CampaignABVariantCreate, 100)
	for i := range many {
		many[i] = api.CampaignABVariantCreate{Name: fmt.Sprintf("v%d", i)}
	}
	full := r.campaign(t, api.CampaignCreate{Name: "Full", Variants: many})
	_, err := r.addVariant(t, full.ID, api.CampaignABVariantCreate{Name: "one more"})
	requireAPIError(t, err, 400, "too_many_variants")
}

func TestCampaignVariantsAreTheOrganizationsOwnAndNeedTheWriteScope(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "Mine", Variants: []api.CampaignABVariantCreate{{Name: "v"}}})
	v := r.variants(t, cmp.ID)[0]

	them := r.env.Client(t, r.env.Bootstrap(t, "globex").APIKey)
	_, err := them.CampaignsListAbVariants(ctx, api.CampaignsListAbVariantsParams{ID: cmp.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = them.CampaignsCreateAbVariant(ctx, &api.CampaignABVariantCreate{Name: "x"}, api.CampaignsCreateAbVariantParams{ID: cmp.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = them.CampaignsUpdateAbVariant(ctx, &api.CampaignABVariantUpdate{Name: api.NewOptString("x")}, api.CampaignsUpdateAbVariantParams{ID: cmp.ID, VariantId: v.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	requireAPIError(t, them.CampaignsDeleteAbVariant(ctx, api.CampaignsDeleteAbVariantParams{ID: cmp.ID, VariantId: v.ID}), 404, "campaign_not_found")

	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err = reader.CampaignsListAbVariants(ctx, api.CampaignsListAbVariantsParams{ID: cmp.ID})
	require.NoError(t, err)
	_, err = reader.CampaignsCreateAbVariant(ctx, &api.CampaignABVariantCreate{Name: "x"}, api.CampaignsCreateAbVariantParams{ID: cmp.ID})
	requireAPIError(t, err, 403, "missing_scope")
	_, err = reader.CampaignsUpdateAbVariant(ctx, &api.CampaignABVariantUpdate{Name: api.NewOptString("x")}, api.CampaignsUpdateAbVariantParams{ID: cmp.ID, VariantId: v.ID})
	requireAPIError(t, err, 403, "missing_scope")
	requireAPIError(t, reader.CampaignsDeleteAbVariant(ctx, api.CampaignsDeleteAbVariantParams{ID: cmp.ID, VariantId: v.ID}), 403, "missing_scope")
	require.Len(t, r.variants(t, cmp.ID), 1)
}
