package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// Campaigns serves the campaign model of part 3: list, overview, create, read, update, delete, duplicate,
// start and stop, the advanced blocks, lead holds, the activity log and tracking-domain verification. The rules
// live in internal/campaigns/campaign; permissions are checked by the route table.
type Campaigns struct {
	pool     *pgxpool.Pool
	store    *campaign.Store
	tracking CampaignTracking
	gate     *leadgate.Gate
}

// CampaignTracking is what verifying a campaign's tracking domain needs from the deployment: its resolver and
// the tracking host the domain must point at ("" when it has none: then nothing verifies).
type CampaignTracking struct {
	Resolver dnscheck.Resolver
	Host     string
}

// NewCampaigns builds the campaign operations over store; tracking domains resolve through tracking, and the
// segments an update links go through gate (an agent's links to a campaign that sends may wait for a person).
func NewCampaigns(pool *pgxpool.Pool, store *campaign.Store, tracking CampaignTracking, gate *leadgate.Gate) *Campaigns {
	return &Campaigns{pool: pool, store: store, tracking: tracking, gate: gate}
}

const (
	defaultCampaignPage = 50
	maxCampaignPage     = 100
	maxCampaignQuery    = 255
)

// rawObject spells a free-form JSON object of the API as raw JSON (nil when absent).
func rawObject[M ~map[string]jx.Raw](m M, set bool) campaign.Field[json.RawMessage] {
	if !set {
		return campaign.Field[json.RawMessage]{}
	}
	raw, err := json.Marshal(m)
	if err != nil || m == nil {
		return campaign.Of[json.RawMessage](nil)
	}
	return campaign.Of[json.RawMessage](raw)
}

// stepInputOf maps one step of a create body (POST /campaigns) or of POST /campaigns/{id}/steps.
func stepInputOf(s api.CampaignStepCreate) campaign.StepInput {
	return campaign.StepInput{
		Name:        optField(s.Name.Value, s.Name.Set, same[string]),
		Subject:     optField(s.Subject.Value, s.Subject.Set, same[string]),
		BodyPlain:   optField(s.BodyPlain.Value, s.BodyPlain.Set, same[string]),
		BodyHTML:    optField(s.BodyHTML.Value, s.BodyHTML.Set, same[string]),
		WaitAfter:   optField(s.WaitAfter.Value, s.WaitAfter.Set, int32Of),
		ThreadReply: optField(s.ThreadReply.Value, s.ThreadReply.Set, same[bool]),
		Kind:        optField(s.Kind.Value, s.Kind.Set, stringOf[api.CampaignStepCreateKind]),
		Conditions:  rawObject(s.Conditions.Value, s.Conditions.Set),
		Action:      rawObject(s.Action.Value, s.Action.Set),
		OnTimeout:   optField(s.OnTimeout.Value, s.OnTimeout.Set, stringOf[api.CampaignStepCreateOnTimeout]),
		Position:    optField(s.Position.Value, s.Position.Set, int32Of),
	}
}

// CampaignsCreate creates a draft campaign with its senders, steps, variants and advanced blocks in one
// transaction.
func (h *Campaigns) CampaignsCreate(ctx context.Context, req *api.CampaignCreate, _ api.CampaignsCreateParams) (*api.Campaign, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := campaign.CreateInput{Patch: createPatchOf(req), UserID: callerUser(ctx), EmailTagIDs: req.EmailTagIds,
		FolderIDs: req.FolderIds, Senders: sendersOf(req.Senders), SegmentIDs: req.SegmentIds, Then: variantsThen(req.Variants)}
	for _, s := range req.Steps {
		in.Steps = append(in.Steps, stepInputOf(s))
	}
	if v, ok := req.AdvancedOverrides.Get(); ok {
		blocks := blocksOf(v)
		variants := in.Then
		in.Then = func(ctx context.Context, tx pgx.Tx, c campaign.Campaign, steps []campaign.Step) error {
			if variants != nil {
				if err := variants(ctx, tx, c, steps); err != nil {
					return err
				}
			}
			return h.store.CreateAdvanced(ctx, tx, c, blocks)
		}
	}
	var out campaign.Campaign
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.store.Create(ctx, tx, org, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := campaignAPI(out)
	return &res, nil
}

// callerUser is the member acting, when a person is (API keys and apps act for nobody in particular).
func callerUser(ctx context.Context) uuid.NullUUID {
	if p := auth.PrincipalFrom(ctx); p != nil && p.UserID != uuid.Nil {
		return uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	return uuid.NullUUID{}
}

// CampaignsGet returns one campaign.
func (h *Campaigns) CampaignsGet(ctx context.Context, params api.CampaignsGetParams) (*api.Campaign, error) {
	return h.one(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Campaign, error) {
		return h.store.Get(ctx, tx, org, params.ID)
	})
}

// one runs a campaign operation in the caller's organization and maps its result.
func (h *Campaigns) one(ctx context.Context, op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Campaign, error)) (*api.Campaign, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out campaign.Campaign
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = op(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := campaignAPI(out)
	return &res, nil
}

// CampaignsUpdate changes the fields sent, validating the campaign as a whole. For an API key or OAuth grant,
// setting it active is a launch (agentLaunch, counting its leads after the change), and new segment links of a
// campaign that sends go through the lead gate: held for a person, they are left out and the answer is 202
// with the approval.
func (h *Campaigns) CampaignsUpdate(ctx context.Context, req *api.CampaignUpdate, params api.CampaignsUpdateParams) (api.CampaignsUpdateRes, error) {
	in := updateInputOf(req)
	var held *leadgate.Held
	out, err := h.one(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Campaign, error) {
		now := time.Now()
		if in.Segments.Set {
			var err error
			if in.Segments.Value, held, err = h.gate.Link(ctx, tx, auth.PrincipalFrom(ctx), params.ID, in.Segments.Value, in.Status.Value, now); err != nil {
				return campaign.Campaign{}, err
			}
		}
		if !in.Status.Set || in.Status.Value != campaign.StatusActive {
			return h.store.Update(ctx, tx, org, params.ID, in)
		}
		// Setting a campaign active starts it: an agent credential needs its policy, as for a start, counting the
		// leads the campaign has after the change (its newly linked segments' members too).
		was, err := h.store.Get(ctx, tx, org, params.ID)
		if err != nil {
			return was, err
		}
		c, err := h.store.Update(ctx, tx, org, params.ID, in)
		if err != nil {
			return c, err
		}
		return c, h.agentLaunch(ctx, tx, org, params.ID, was.Status, now)
	})
	if err != nil {
		return nil, err
	}
	if held == nil {
		return out, nil
	}
	return &api.CampaignHeld{Campaign: *out, Approval: heldLeads(held)}, nil
}

// CampaignsDelete deletes a campaign, cancelling its queued sends in the same transaction.
func (h *Campaigns) CampaignsDelete(ctx context.Context, params api.CampaignsDeleteParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return h.store.Delete(ctx, tx, org, params.ID)
	})
}

// CampaignsDuplicate copies a campaign as a new draft.
func (h *Campaigns) CampaignsDuplicate(ctx context.Context, req api.OptCampaignDuplicateRequest, params api.CampaignsDuplicateParams) (*api.Campaign, error) {
	var name *string
	if v, ok := req.Value.Name.Get(); req.Set && ok {
		name = &v
	}
	return h.one(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Campaign, error) {
		return h.store.Duplicate(ctx, tx, org, params.ID, name, callerUser(ctx))
	})
}

// CampaignsStart moves a campaign to active once the launch checks pass: the seed's no_leads rule, then
// every problem that would keep it from sending (checks.LaunchBlockers), then, for an API key or OAuth
// grant, its agent policy (agentLaunch), in the same transaction.
func (h *Campaigns) CampaignsStart(ctx context.Context, params api.CampaignsStartParams) (*api.CampaignStartResult, error) {
	if _, err := h.one(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Campaign, error) {
		was, err := h.store.Get(ctx, tx, org, params.ID)
		if err != nil {
			return was, err
		}
		c, err := h.store.Start(ctx, tx, org, params.ID)
		if err != nil {
			return c, err
		}
		now := time.Now()
		s, err := checks.Load(ctx, tx, org, params.ID, now)
		if err != nil {
			return c, err
		}
		if blockers := checks.LaunchBlockers(s); len(blockers) > 0 {
			first := blockers[0]
			return c, apierror.BadRequest("campaign_invalid", fmt.Sprintf("This campaign cannot start: %s (%d problem(s); POST /v1/campaigns/%s/validate lists them).",
				first.Message, len(blockers), params.ID)).WithFix(first.Fix)
		}
		return c, h.agentLaunch(ctx, tx, org, params.ID, was.Status, now)
	}); err != nil {
		return nil, err
	}
	return &api.CampaignStartResult{Status: api.NewOptString("started")}, nil
}

// CampaignsStop pauses an active campaign.
func (h *Campaigns) CampaignsStop(ctx context.Context, params api.CampaignsStopParams) (*api.CampaignStopResult, error) {
	if _, err := h.one(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (campaign.Campaign, error) {
		return h.store.Stop(ctx, tx, org, params.ID)
	}); err != nil {
		return nil, err
	}
	return &api.CampaignStopResult{Status: api.NewOptString("stopped")}, nil
}

// CampaignsList lists campaigns newest first; the cursor is the last campaign id of the previous page and
// pagination.total counts the matches of the filters.
func (h *Campaigns) CampaignsList(ctx context.Context, params api.CampaignsListParams) (*api.CampaignList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultCampaignPage, maxCampaignPage, true)
	if err != nil {
		return nil, err
	}
	f := campaign.ListFilter{Query: strings.TrimSpace(params.Q.Value), Status: string(params.Status.Value), Kind: string(params.Kind.Value)}
	if utf8.RuneCountInString(f.Query) > maxCampaignQuery {
		return nil, apierror.BadRequest("invalid_query", fmt.Sprintf("q must be at most %d characters.", maxCampaignQuery))
	}
	if v, ok := params.Folder.Get(); ok && v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return nil, apierror.BadRequest("invalid_folder", "folder must be a campaign folder id.")
		}
		f.Folder = uuid.NullUUID{UUID: id, Valid: true}
	}
	if v, ok := params.Cursor.Get(); ok {
		f.After = uuid.NullUUID{UUID: v, Valid: true}
	}
	out := &api.CampaignList{Data: []api.Campaign{}}
	var total int64
	rows, hasMore, err := keysetRows(ctx, h.pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]campaign.Campaign, error) {
			return h.store.List(ctx, tx, org, f, rowLimit)
		},
		func(ctx context.Context, tx pgx.Tx, _ []campaign.Campaign) error {
			total, err = campaign.Count(ctx, tx, org, f)
			return err
		})
	if err != nil {
		return nil, err
	}
	for _, c := range rows {
		out.Data = append(out.Data, campaignAPI(c))
	}
	out.Pagination = api.Pagination{HasMore: hasMore, Total: api.NewOptNilInt64(total)}
	if hasMore {
		out.Pagination.NextCursor = api.NewOptNilString(rows[len(rows)-1].ID.String())
	}
	return out, nil
}

// CampaignsGetOverview counts the organization's campaigns.
func (h *Campaigns) CampaignsGetOverview(ctx context.Context) (*api.CampaignOverview, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.CampaignOverview{Folders: []api.CampaignOverviewFolder{}}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		o, folders, err := campaign.Overview(ctx, tx, org)
		if err != nil {
			return err
		}
		out.Total, out.Active, out.Paused, out.Draft = int(o.Total), int(o.Active), int(o.Paused), int(o.Draft)
		out.Completed, out.OneTime = int(o.Completed), int(o.OneTime)
		for _, f := range folders {
			out.Folders = append(out.Folders, api.CampaignOverviewFolder{FolderID: f.LabelID.String(), Total: int(f.Total)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
