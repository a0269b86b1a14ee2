package handlers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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

// memberFilter selects a segment's members in a contact search, newest first.
func memberFilter(id uuid.UUID) contacts.Filter {
	return contacts.Filter{SegmentIDs: []uuid.UUID{id}, Sort: contacts.SortCreatedAt}
}

// memberCount counts a segment's current members. For a dynamic segment this evaluates its filters over the
// organization's contacts, a query as costly as the equivalent contact search's total.
func memberCount(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (int, error) {
	n, err := contacts.Count(ctx, tx, org, memberFilter(id))
	return int(n), err
}

// SegmentsMembersList pages through a segment's current members newest first; the first page carries the
// member count as pagination.total.
func (h *Segments) SegmentsMembersList(ctx context.Context, params api.SegmentsMembersListParams) (*api.ContactList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultSegmentPage, maxSegmentPage, true)
	if err != nil {
		return nil, err
	}
	f := memberFilter(params.ID)
	out := &api.ContactList{}
	page, err := keysetPageThen(ctx, h.pool, h.cursors, org, f.SortOrder(), params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *contacts.Position, rowLimit int32) ([]contacts.Row, error) {
			if _, err := h.queries.SegmentGet(ctx, tx, dbq.SegmentGetParams{OrganizationID: org, ID: params.ID}); err != nil {
				return nil, classifySegment(err)
			}
			return contacts.Search(ctx, tx, org, f, after, int(rowLimit))
		},
		func(r contacts.Row) contacts.Position { return contacts.PositionOf(f.Sort, r) },
		func(ctx context.Context, tx pgx.Tx, rows []contacts.Row, first bool) error {
			var err error
			if out.Data, err = contactViews(ctx, tx, org, rows, nil); err != nil {
				return err
			}
			if first {
				n, err := memberCount(ctx, tx, org, params.ID)
				if err != nil {
					return err
				}
				out.Pagination.Total.SetTo(int64(n))
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	out.Pagination.HasMore, out.Pagination.NextCursor = page.HasMore, optNilStringPtr(page.NextCursor)
	return out, nil
}

// selectedMembers returns which of the selected contacts ids are members of segment id right now. An explicit
// selection (at most 1000 ids) is checked id by id; a filter selection (up to 50,000) is matched in one query
// as the selection's filters plus membership of the segment.
func selectedMembers(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, sel contacts.Selection, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	members := make(map[uuid.UUID]bool)
	if !sel.All {
		err := contacts.Stream(ctx, tx, org, memberFilter(id), ids, len(ids), func(r contacts.Row) error {
			members[r.ID] = true
			return nil
		})
		return members, err
	}
	f := sel.Filter
	if !slices.Contains(f.SegmentIDs, id) {
		f.SegmentIDs = append(slices.Clip(f.SegmentIDs), id)
	}
	found, err := contacts.MatchingIDs(ctx, tx, org, f, sel.Exclude, contacts.MaxFilterSelected+1)
	if err != nil {
		return nil, err
	}
	for _, c := range found {
		members[c] = true
	}
	return members, nil
}

// SegmentsMembersAdd pins the selected contacts into the segment. Contacts already members are unchanged (a
// contact matching a dynamic segment's filters is not pinned); the others get an include pin, which replaces
// any exclude pin. Ids of contacts that do not exist are dropped, as in every explicit selection. An agent's
// pins that would add leads to campaigns that send (linked to the segment) go through the lead gate: outside
// its policy they wait for a person and the answer is 202 with the approval.
func (h *Segments) SegmentsMembersAdd(ctx context.Context, req *api.ContactSelection, params api.SegmentsMembersAddParams) (api.SegmentsMembersAddRes, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	sel, err := contacts.ParseSelection(selectionInput(*req))
	if err != nil {
		return nil, err
	}
	out := &api.SegmentMembersChange{SegmentID: params.ID}
	var held *leadgate.Held
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.queries.SegmentGetForUpdate(ctx, tx, dbq.SegmentGetForUpdateParams{OrganizationID: org, ID: params.ID}); err != nil {
			return classifySegment(err)
		}
		ids, err := sel.IDs(ctx, tx, org)
		if err != nil {
			return err
		}
		var fresh []uuid.UUID
		if len(ids) > 0 {
			members, err := selectedMembers(ctx, tx, org, params.ID, sel, ids)
			if err != nil {
				return err
			}
			for _, c := range ids {
				if !members[c] {
					fresh = append(fresh, c)
				}
			}
		}
		added, err := h.gate.Add(ctx, tx, auth.PrincipalFrom(ctx), leadgate.Request{Pins: pinsOf(fresh, []uuid.UUID{params.ID}),
			Event: "segment.members_added"}, time.Now())
		if err != nil {
			return err
		}
		held = added.Held
		out.Added, out.Unchanged = added.Pinned, len(ids)-len(fresh)
		if out.MemberCount, err = memberCount(ctx, tx, org, params.ID); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "segment.members_added", EntityType: audit.EntitySegment, EntityID: params.ID.String(),
			Metadata: map[string]any{"added": out.Added, "unchanged": out.Unchanged, "all": sel.All}})
	})
	if err != nil {
		return nil, err
	}
	if held != nil {
		out.Approval = api.NewOptHeldLeads(heldLeads(held))
		accepted := api.SegmentsMembersAddAccepted(*out)
		return &accepted, nil
	}
	ok := api.SegmentsMembersAddOK(*out)
	return &ok, nil
}

// SegmentsMembersRemove takes the listed contacts out of the segment: their include pins go, and a member
// still matching a dynamic segment's filters gets an exclude pin that keeps it out. Contacts that were not
// members are unchanged; ids of contacts that do not exist are dropped.
func (h *Segments) SegmentsMembersRemove(ctx context.Context, req *api.SegmentMembersRemove, params api.SegmentsMembersRemoveParams) (*api.SegmentMembersChange, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	if len(req.Contacts) == 0 || len(req.Contacts) > contacts.MaxSelectedIDs {
		return nil, apierror.BadRequest("invalid_selection", fmt.Sprintf("Send 1 to %d contact ids.", contacts.MaxSelectedIDs))
	}
	sel := contacts.Selection{Contacts: req.Contacts}
	out := &api.SegmentMembersChange{SegmentID: params.ID}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		seg, err := h.queries.SegmentGetForUpdate(ctx, tx, dbq.SegmentGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return classifySegment(err)
		}
		ids, err := sel.IDs(ctx, tx, org)
		if err != nil {
			return err
		}
		pins, err := h.queries.SegmentPinsOf(ctx, tx, dbq.SegmentPinsOfParams{OrganizationID: org, SegmentID: seg.ID, ContactIds: ids})
		if err != nil {
			return err
		}
		pinned := make(map[uuid.UUID]bool, len(pins)) // contact -> include
		for _, p := range pins {
			pinned[p.ContactID] = p.Include
		}
		matching := make(map[uuid.UUID]bool)
		if seg.Kind == segmentDynamic && len(ids) > 0 {
			f, err := contacts.DecodeStored(seg.Filters)
			if err != nil {
				return err
			}
			if err := contacts.Stream(ctx, tx, org, f, ids, len(ids), func(r contacts.Row) error {
				matching[r.ID] = true
				return nil
			}); err != nil {
				return err
			}
		}
		var members, keepOut []uuid.UUID
		for _, c := range ids {
			include, hasPin := pinned[c]
			if include || !hasPin && matching[c] {
				members = append(members, c)
				if matching[c] {
					keepOut = append(keepOut, c)
				}
			}
		}
		// Matching members trade their include pin (if any) for an exclude pin; the rest lose their include pin.
		if len(keepOut) > 0 {
			if _, err := h.queries.SegmentPinsExclude(ctx, tx, dbq.SegmentPinsExcludeParams{OrganizationID: org, SegmentID: seg.ID, ContactIds: keepOut}); err != nil {
				return err
			}
		}
		if len(members) > 0 {
			if _, err := h.queries.SegmentPinsDeleteIncludes(ctx, tx, dbq.SegmentPinsDeleteIncludesParams{OrganizationID: org, SegmentID: seg.ID, ContactIds: members}); err != nil {
				return err
			}
		}
		out.Removed, out.Unchanged = len(members), len(ids)-len(members)
		if out.MemberCount, err = memberCount(ctx, tx, org, seg.ID); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "segment.members_removed", EntityType: audit.EntitySegment, EntityID: seg.ID.String(),
			Metadata: map[string]any{"removed": out.Removed, "unchanged": out.Unchanged}})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
