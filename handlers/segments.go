package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Segments implements saved audiences: static segments (manual pins) and dynamic ones (a stored contact
// search plus include and exclude pins).
//
// Membership is never materialized: a static segment's members are its include pins, a dynamic segment's
// are its include pins plus the contacts matching its filters that carry no exclude pin, evaluated when read
// (contacts.Search and contacts.Count compile segment_ids that way). A dynamic segment's filters are a
// contacts.Filter stored as JSON without a sort, and never name segments themselves, so membership never
// recurses. Permissions are checked by the route table.
type Segments struct {
	pool    *pgxpool.Pool
	cursors *pagination.Cursors
	queries *dbq.Queries
	gate    *leadgate.Gate
}

// NewSegments builds the segment operations; list cursors are signed with a key derived from secret, and pins
// and filter changes that add leads to campaigns that send go through gate.
func NewSegments(pool *pgxpool.Pool, secret []byte, gate *leadgate.Gate) *Segments {
	return &Segments{pool: pool, cursors: pagination.NewCursors(secret), queries: dbq.New(), gate: gate}
}

// Limits of the segment operations.
const (
	maxSegmentName        = 255
	maxSegmentDescription = 1000
	maxSegmentsPerOrg     = 500
	maxSegmentQuery       = 255
	defaultSegmentPage    = 50
	maxSegmentPage        = 100
	sortSegments          = "segments:created_at:desc"
	segmentStatic         = "static"
	segmentDynamic        = "dynamic"
)

func segmentNotFound() error {
	return apierror.NotFound("segment_not_found", "Segment not found.")
}

// classifySegment maps a missing row to segment_not_found and leaves the rest to db.Classify.
func classifySegment(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return segmentNotFound()
	}
	return db.Classify(err, "Segment")
}

// segmentName trims a name and checks it is 1 to 255 characters on one line.
func segmentName(v string) (string, error) {
	v = strings.TrimSpace(v)
	n := utf8.RuneCountInString(v)
	if n == 0 || n > maxSegmentName || strings.ContainsFunc(v, unicode.IsControl) {
		return "", apierror.BadRequest("invalid_name", fmt.Sprintf("name must be 1 to %d characters on one line.", maxSegmentName))
	}
	return v, nil
}

// segmentDescription trims a description and checks it is at most 1000 characters.
func segmentDescription(v string) (string, error) {
	v = strings.TrimSpace(v)
	if utf8.RuneCountInString(v) > maxSegmentDescription {
		return "", apierror.BadRequest("invalid_description", fmt.Sprintf("description must be at most %d characters.", maxSegmentDescription))
	}
	return v, nil
}

// segmentFilters validates a dynamic segment's search body and returns the JSON it is stored as: the parsed
// filter without its sort (a segment is a set; whoever reads it picks the order). Nested segments are
// refused, so evaluating a segment never evaluates another.
func segmentFilters(req api.ContactSearchRequest) ([]byte, error) {
	if len(req.SegmentIds) > 0 {
		return nil, apierror.BadRequest("invalid_filters", "A segment's filters cannot name segment_ids: segments do not nest.")
	}
	f, err := contacts.ParseSearch(searchInput(req))
	if err != nil {
		return nil, err
	}
	f.Sort, f.Ascending = "", false
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode segment filters: %w", err)
	}
	return raw, nil
}

// searchRequestOf spells a stored filter in the API's search body (the inverse of contacts.ParseSearch, less
// the sort a segment does not keep).
func searchRequestOf(f contacts.Filter) api.ContactSearchRequest {
	var out api.ContactSearchRequest
	if f.Query != "" {
		out.Query = api.NewOptString(f.Query)
	}
	for _, c := range f.Custom {
		out.CustomFieldFilters = append(out.CustomFieldFilters, api.ContactCustomFieldFilter{Name: c.Name, Value: c.Value,
			Type: api.ContactCustomFieldFilterType(c.Type)})
	}
	for _, id := range f.CampaignIDs {
		out.CampaignIds = append(out.CampaignIds, id.String())
	}
	if f.LeadStatus != "" {
		out.LeadStatus = api.NewOptString(f.LeadStatus)
	}
	if f.Engagement != "" {
		out.Engagement = api.NewOptString(f.Engagement)
	}
	for _, id := range f.CategoryIDs {
		out.CategoryIds = append(out.CategoryIds, id.String())
	}
	out.SegmentIds = f.SegmentIDs
	if f.Verification != "" {
		out.VerificationStatus = api.NewOptContactSearchRequestVerificationStatus(api.ContactSearchRequestVerificationStatus(f.Verification))
	}
	if f.MinCampaigns != nil {
		out.MinCampaigns = api.NewOptInt(*f.MinCampaigns)
	}
	if f.MaxCampaigns != nil {
		out.MaxCampaigns = api.NewOptInt(*f.MaxCampaigns)
	}
	if f.Subscribed != nil {
		out.Subscribed = api.NewOptBool(*f.Subscribed)
	}
	if f.CreatedAfter != nil {
		out.CreatedAfter = api.NewOptDateTime(*f.CreatedAfter)
	}
	if f.CreatedBefore != nil {
		out.CreatedBefore = api.NewOptDateTime(*f.CreatedBefore)
	}
	if f.UpdatedAfter != nil {
		out.UpdatedAfter = api.NewOptDateTime(*f.UpdatedAfter)
	}
	if f.UpdatedBefore != nil {
		out.UpdatedBefore = api.NewOptDateTime(*f.UpdatedBefore)
	}
	return out
}

// segmentDefinition checks kind (static or dynamic, as the contract's enum guarantees) against filters and
// returns the stored filters: none for a static segment (sending filters is filters_not_allowed), the
// validated body for a dynamic one (required).
func segmentDefinition(kind string, filters api.OptContactSearchRequest) ([]byte, error) {
	if kind == segmentDynamic {
		if !filters.Set {
			return nil, apierror.BadRequest("filters_required", "A dynamic segment needs filters (a contact search body).")
		}
		return segmentFilters(filters.Value)
	}
	if filters.Set {
		return nil, filtersNotAllowed()
	}
	return nil, nil
}

func filtersNotAllowed() error {
	return apierror.BadRequest("filters_not_allowed", "A static segment holds only the contacts added to it; send filters only with kind dynamic.")
}

// segmentOf maps a stored segment with its filters spelled as a search body and its current member count.
func segmentOf(ctx context.Context, tx pgx.Tx, s dbq.Segment) (api.Segment, error) {
	out := api.Segment{ID: s.ID, OrganizationID: api.NewOptUUID(s.OrganizationID), Name: s.Name,
		Description: api.NewOptString(s.Description), Kind: api.SegmentKind(s.Kind), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if s.Kind == segmentDynamic {
		f, err := contacts.DecodeStored(s.Filters)
		if err != nil {
			return out, err
		}
		out.Filters = api.NewOptContactSearchRequest(searchRequestOf(f))
	}
	n, err := memberCount(ctx, tx, s.OrganizationID, s.ID)
	if err != nil {
		return out, err
	}
	out.MemberCount = n
	return out, nil
}

// SegmentsCreate creates a static or dynamic segment; an organization has at most 500.
func (h *Segments) SegmentsCreate(ctx context.Context, req *api.SegmentCreate, _ api.SegmentsCreateParams) (*api.Segment, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	name, err := segmentName(req.Name)
	if err != nil {
		return nil, err
	}
	desc, err := segmentDescription(req.Description.Value)
	if err != nil {
		return nil, err
	}
	kind := segmentStatic
	if v, ok := req.Kind.Get(); ok {
		kind = string(v)
	}
	filters, err := segmentDefinition(kind, req.Filters)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var out api.Segment
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.queries.SegmentLockOrg(ctx, tx, org); err != nil {
			return err
		}
		n, err := h.queries.SegmentCount(ctx, tx, org)
		if err != nil {
			return err
		}
		if n >= maxSegmentsPerOrg {
			return apierror.BadRequest("too_many_segments", fmt.Sprintf("An organization can have at most %d segments; delete one first.", maxSegmentsPerOrg))
		}
		s, err := h.queries.SegmentCreate(ctx, tx, dbq.SegmentCreateParams{OrganizationID: org, ID: id, Name: name,
			Description: desc, Kind: kind, Filters: filters})
		if err != nil {
			return classifySegment(err)
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "segment.created", EntityType: audit.EntitySegment, EntityID: id.String(),
			Metadata: map[string]any{"name": name, "kind": kind}}); err != nil {
			return err
		}
		out, err = segmentOf(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SegmentsGet returns one segment with its definition and member count.
func (h *Segments) SegmentsGet(ctx context.Context, params api.SegmentsGetParams) (*api.Segment, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out api.Segment
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		s, err := h.queries.SegmentGet(ctx, tx, dbq.SegmentGetParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return classifySegment(err)
		}
		out, err = segmentOf(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SegmentsList lists the segments newest first, q narrowing by name. Each carries its member count, counted
// per segment: a page of dynamic segments costs one filtered count per segment, which is why the page is
// capped at 100 (default 50).
func (h *Segments) SegmentsList(ctx context.Context, params api.SegmentsListParams) (*api.SegmentList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultSegmentPage, maxSegmentPage, true)
	if err != nil {
		return nil, err
	}
	var q *string
	if v := strings.TrimSpace(params.Q.Value); v != "" {
		if utf8.RuneCountInString(v) > maxSegmentQuery {
			return nil, apierror.BadRequest("invalid_query", fmt.Sprintf("q must be at most %d characters.", maxSegmentQuery))
		}
		escaped := contacts.LikeEscape(strings.ToLower(v))
		q = &escaped
	}
	out := &api.SegmentList{Data: []api.Segment{}}
	page, err := keysetPageThen(ctx, h.pool, h.cursors, org, sortSegments, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.Segment, error) {
			args := dbq.SegmentListParams{OrganizationID: org, Q: q, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.SegmentList(ctx, tx, args)
		},
		func(s dbq.Segment) timeKey { return timeKey{At: s.CreatedAt, ID: s.ID} },
		func(ctx context.Context, tx pgx.Tx, rows []dbq.Segment, _ bool) error {
			for _, s := range rows {
				v, err := segmentOf(ctx, tx, s)
				if err != nil {
					return err
				}
				out.Data = append(out.Data, v)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	out.Pagination = api.Pagination{HasMore: page.HasMore, NextCursor: optNilStringPtr(page.NextCursor)}
	return out, nil
}

// SegmentsUpdate changes the fields sent. Switching to static drops the filters and the exclude pins (a
// static segment is its include pins) and keeps the include pins; switching to dynamic needs filters.
func (h *Segments) SegmentsUpdate(ctx context.Context, req *api.SegmentUpdate, params api.SegmentsUpdateParams) (*api.Segment, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var name, desc *string
	if v, ok := req.Name.Get(); ok {
		n, err := segmentName(v)
		if err != nil {
			return nil, err
		}
		name = &n
	}
	if v, ok := req.Description.Get(); ok {
		d, err := segmentDescription(v)
		if err != nil {
			return nil, err
		}
		desc = &d
	}
	if v, ok := req.Kind.Get(); ok && string(v) == segmentStatic && req.Filters.Set {
		return nil, filtersNotAllowed()
	}
	var filters []byte
	if req.Filters.Set {
		if filters, err = segmentFilters(req.Filters.Value); err != nil {
			return nil, err
		}
	}
	var out api.Segment
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.SegmentGetForUpdate(ctx, tx, dbq.SegmentGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return classifySegment(err)
		}
		next := dbq.SegmentUpdateParams{OrganizationID: org, ID: cur.ID, Name: cur.Name, Description: cur.Description,
			Kind: cur.Kind, Filters: cur.Filters}
		var changed []string
		if name != nil && *name != cur.Name {
			next.Name, changed = *name, append(changed, "name")
		}
		if desc != nil && *desc != cur.Description {
			next.Description, changed = *desc, append(changed, "description")
		}
		if v, ok := req.Kind.Get(); ok && string(v) != cur.Kind {
			next.Kind, changed = string(v), append(changed, "kind")
		}
		switch {
		case next.Kind == segmentStatic:
			if req.Filters.Set {
				return filtersNotAllowed()
			}
			next.Filters = nil
		case req.Filters.Set:
			next.Filters, changed = filters, append(changed, "filters")
		case cur.Kind == segmentStatic:
			return apierror.BadRequest("filters_required", "A dynamic segment needs filters (a contact search body); send them with kind dynamic.")
		}
		s := cur
		if len(changed) > 0 {
			if cur.Kind == segmentDynamic && next.Kind == segmentStatic {
				if err := h.queries.SegmentPinsDeleteExcludes(ctx, tx, dbq.SegmentPinsDeleteExcludesParams{OrganizationID: org, SegmentID: cur.ID}); err != nil {
					return err
				}
			}
			if s, err = h.queries.SegmentUpdate(ctx, tx, next); err != nil {
				return classifySegment(err)
			}
			// New filters (or filters in force again) may bring new members into campaigns that send.
			if next.Kind == segmentDynamic && (req.Filters.Set || cur.Kind != next.Kind) {
				if err := h.gate.Refilter(ctx, tx, auth.PrincipalFrom(ctx), cur.ID, time.Now()); err != nil {
					return err
				}
			}
			if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "segment.updated", EntityType: audit.EntitySegment, EntityID: cur.ID.String(),
				Metadata: map[string]any{"changed": changed, "kind": next.Kind}}); err != nil {
				return err
			}
		}
		out, err = segmentOf(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SegmentsDelete deletes a segment and its pins; the contacts stay.
func (h *Segments) SegmentsDelete(ctx context.Context, params api.SegmentsDeleteParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		gone, err := h.queries.SegmentDelete(ctx, tx, dbq.SegmentDeleteParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return classifySegment(err)
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "segment.deleted", EntityType: audit.EntitySegment, EntityID: params.ID.String(),
			Metadata: map[string]any{"name": gone.Name, "kind": gone.Kind}})
	})
}
